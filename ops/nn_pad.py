"""Padding: `aten::pad` and the per-mode ops it dispatches to (constant, reflect, replicate,
circular), with the reflection/replication backward ops. Non-constant modes gather along each
padded dim with an index map; their backward ops scatter-add through the same map."""

from __future__ import annotations

import numpy as np

from .registry import derivative, op


def _fmt(shape) -> str:
    return "[" + ", ".join(str(int(s)) for s in shape) + "]"


@op("aten::constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor")
def constant_pad_nd(self, pad, value=0):
    """Pad pairs apply to the last dim first; negative amounts crop."""
    pad = [int(p) for p in pad]
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    if len(pad) // 2 > self.ndim:
        raise RuntimeError("Length of pad should be no more than twice the number of dimensions "
                           f"of the input. Pad length is {len(pad)} while the input has {self.ndim} dimensions.")
    x = self
    widths = [(0, 0)] * self.ndim
    crop = [slice(None)] * self.ndim
    for i in range(len(pad) // 2):
        d = self.ndim - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        n = self.shape[d]
        if n + lo + hi < 0:
            raise RuntimeError(f"The input size {n}, plus negative padding {lo} and {hi} resulted in a "
                               f"negative output size, which is invalid. Check dimension {d} of your input.")
        crop[d] = slice(max(-lo, 0), n - max(-hi, 0))
        widths[d] = (max(lo, 0), max(hi, 0))
    x = x[tuple(crop)]
    if self.dtype == np.bool_:
        value = bool(value)
    return np.pad(x, widths, constant_values=np.asarray(value).astype(self.dtype))


@derivative("aten::constant_pad_nd")
def constant_pad_nd_grad(e, grads, inputs, outputs):
    return [e.op("aten::constant_pad_nd", grads[0], [-int(p) for p in inputs[1]], 0), None, None]


def _index_map(n: int, lo: int, hi: int, mode: str) -> np.ndarray:
    j = np.arange(-lo, n + hi)
    if mode == "reflect":
        j = np.abs(j)
        j = np.where(j >= n, 2 * (n - 1) - j, j)
    elif mode == "replicate":
        j = np.clip(j, 0, n - 1)
    else:  # circular
        j = j % n
    return j


def _check(x, pad, mode, name):
    k = len(pad) // 2
    for i in range(k):
        d = x.ndim - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        n = x.shape[d]
        if mode == "reflect" and (lo >= n or hi >= n):
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding input "
                               f"dimension, but got: padding ({lo}, {hi}) at dimension {d} of input {_fmt(x.shape)}")
        if mode == "circular" and (lo > n or hi > n):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if mode == "replicate" and n == 0:
            raise RuntimeError(f"{name}: input tensor must have non-zero spatial size")


def _gather_pad(x, pad, mode):
    pad = [int(p) for p in pad]
    out = x
    for i in range(len(pad) // 2):
        d = x.ndim - 1 - i
        idx = _index_map(x.shape[d], pad[2 * i], pad[2 * i + 1], mode)
        out = np.take(out, idx, axis=d)
    return np.asarray(out, order="C")


def _scatter_pad(g, shape, pad, mode):
    """The adjoint of `_gather_pad`: sum each output's gradient into its source element."""
    pad = [int(p) for p in pad]
    out = g
    for i in reversed(range(len(pad) // 2)):
        d = len(shape) - 1 - i
        n = shape[d]
        idx = _index_map(n, pad[2 * i], pad[2 * i + 1], mode)
        m = np.zeros((idx.size, n), dtype=g.dtype)
        m[np.arange(idx.size), idx] = 1
        out = np.moveaxis(np.tensordot(np.moveaxis(out, d, -1), m, axes=([-1], [0])), -1, d)
    return np.asarray(out, dtype=g.dtype, order="C")


def _pad_op(mode, nd, name):
    def impl(self, padding):
        if len(padding) != 2 * nd:
            raise RuntimeError(f"{name}: padding size is expected to be {2 * nd}, but got: {len(padding)}")
        if self.ndim not in (nd + 1, nd + 2):
            raise RuntimeError(f"{name}: Expected {nd + 1}D or {nd + 2}D (batch mode) tensor for input, "
                               f"but got: {_fmt(self.shape)}")
        _check(self, padding, mode, name)
        return _gather_pad(self, padding, mode)
    return impl


def _pad_backward_op(mode):
    def impl(grad_output, self, padding):
        return _scatter_pad(grad_output, self.shape, padding, mode)
    return impl


for _nd in (1, 2, 3):
    for _mode, _prefix in (("reflect", "reflection"), ("replicate", "replication")):
        _name = f"aten::{_prefix}_pad{_nd}d"
        op(f"{_name}(Tensor self, SymInt[{2 * _nd}] padding) -> Tensor")(
            _pad_op(_mode, _nd, f"{_prefix}_pad{_nd}d"))
        op(f"{_name}_backward(Tensor grad_output, Tensor self, SymInt[{2 * _nd}] padding) -> Tensor")(
            _pad_backward_op(_mode))

        def _grad(e, grads, inputs, outputs, _name=_name):
            return [e.op(_name + "_backward", grads[0], inputs[0], inputs[1]), None]
        derivative(_name)(_grad)


@op("aten::_pad_circular(Tensor self, SymInt[] pad) -> Tensor")
def pad_circular(self, pad):
    pad = [int(p) for p in pad]
    if any(p < 0 for p in pad):
        crop = [min(p, 0) for p in pad]
        self = constant_pad_nd(self, crop)
        pad = [max(p, 0) for p in pad]
    _check(self, pad, "circular", "_pad_circular")
    return _gather_pad(self, pad, "circular")


def _circular_grad(e, g, shape, pad):
    """Fold the wrapped borders back, dim by dim, with constant_pad_nd crops and pads only."""
    pad = [int(p) for p in pad]
    for i in reversed(range(len(pad) // 2)):
        lo, hi = pad[2 * i], pad[2 * i + 1]
        n = shape[len(shape) - 1 - i] + min(lo, 0) + min(hi, 0)  # the size after negative pads crop

        def p(a, b):
            return [0, 0] * i + [a, b]
        acc = e.op("aten::constant_pad_nd", g, p(-max(lo, 0), -max(hi, 0)), 0)
        if lo > 0:
            left = e.op("aten::constant_pad_nd", g, p(0, -(n + max(hi, 0))), 0)
            acc = e.op("aten::add", acc, e.op("aten::constant_pad_nd", left, p(n - lo, 0), 0))
        if hi > 0:
            right = e.op("aten::constant_pad_nd", g, p(-(n + max(lo, 0)), 0), 0)
            acc = e.op("aten::add", acc, e.op("aten::constant_pad_nd", right, p(0, n - hi), 0))
        if lo < 0 or hi < 0:
            acc = e.op("aten::constant_pad_nd", acc, p(-min(lo, 0), -min(hi, 0)), 0)
        g = acc
    return g


@derivative("aten::_pad_circular")
def pad_circular_grad(e, grads, inputs, outputs):
    return [_circular_grad(e, grads[0], e.shape(inputs[0]), inputs[1]), None]


_MODES = {0: "constant", 1: "reflect", 2: "replicate", 3: "circular"}


@op("aten::pad(Tensor self, SymInt[] pad, str mode=\"constant\", float? value=None) -> Tensor",
    "aten::_pad_enum(Tensor self, SymInt[] pad, int mode, float? value=None) -> Tensor")
def pad(self, pad, mode="constant", value=None):
    """`F.pad`: constant pads any trailing dims; the other modes pad the last 1-3 dims."""
    mode = _MODES[mode] if isinstance(mode, int) else mode
    pad = [int(p) for p in pad]
    if mode == "constant":
        return constant_pad_nd(self, pad, 0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    if mode not in ("reflect", "replicate", "circular"):
        raise RuntimeError(f"Unrecognised padding mode {mode}")
    k = len(pad) // 2
    if len(pad) % 2 or k > 3 or self.ndim not in (k + 1, k + 2):
        raise NotImplementedError(
            f"Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now "
            f"(got {self.ndim}D input and pad of length {len(pad)})")
    if mode == "circular":
        return pad_circular(self, pad)
    _check(self, pad, mode, f"{mode} pad")
    return _gather_pad(self, pad, mode)


@derivative("aten::pad", "aten::_pad_enum")
def pad_grad(e, grads, inputs, outputs):
    x, p = inputs[0], inputs[1]
    mode = inputs[2] if len(inputs) > 2 else "constant"
    mode = _MODES[mode] if isinstance(mode, int) else mode
    g = grads[0]
    if mode == "constant":
        gx = e.op("aten::constant_pad_nd", g, [-int(v) for v in p], 0)
    elif mode == "circular":
        gx = _circular_grad(e, g, e.shape(x), p)
    else:
        nd = len(p) // 2
        prefix = "reflection" if mode == "reflect" else "replication"
        gx = e.op(f"aten::{prefix}_pad{nd}d_backward", g, x, list(p))
    return [gx, None, None, None]
