"""Pooling: max (with indices), average and adaptive pooling over 1-3 spatial dims, with the
backward ops their derivatives call. Windows come from sliding-window views; max-pool indices
are flat offsets into each channel's spatial plane, as in PyTorch."""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from .registry import derivative, op


def _params(v, nd, default=None):
    if v is None or (isinstance(v, (list, tuple)) and len(v) == 0):
        return list(default)
    if isinstance(v, (int, np.integer)):
        return [int(v)] * nd
    v = [int(x) for x in v]
    return v * nd if len(v) == 1 else v


def _fmt_size(shape) -> str:
    return "x".join(str(int(s)) for s in shape)


def _out_size(n, k, s, p, d, ceil_mode):
    eff = d * (k - 1) + 1
    num = n + 2 * p - eff
    o = (-(-num // s) if ceil_mode else num // s) + 1
    if ceil_mode and (o - 1) * s >= n + p:
        o -= 1
    return o


def _check_input(x, nd, name):
    if x.ndim not in (nd + 1, nd + 2) or any(s == 0 for s in x.shape[-nd:]):
        if name == "max_pool1d":
            raise RuntimeError(f"max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim "
                               f"batch size for input, but got:{list(x.shape)}")
        raise RuntimeError(f"{name}: non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected for input")


def _geometry(x, nd, kernel_size, stride, padding, dilation, ceil_mode, name):
    """Expanded pooling parameters and the output spatial size, with PyTorch's checks."""
    _check_input(x, nd, name)
    k = _params(kernel_size, nd)
    s = _params(stride, nd, k)
    p = _params(padding, nd)
    d = _params(dilation, nd)
    for i in range(nd):
        if p[i] > (d[i] * (k[i] - 1) + 1) // 2 or p[i] > k[i] // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p[i]}, "
                               f"kernel_size={k[i]} and dilation={d[i]}")
    sp = x.shape[-nd:]
    out = [_out_size(sp[i], k[i], s[i], p[i], d[i], ceil_mode) for i in range(nd)]
    if any(o < 1 for o in out):
        c = x.shape[-nd - 1]
        raise RuntimeError(f"Given input size: ({_fmt_size((c,) + tuple(sp))}). Calculated output size: "
                           f"({_fmt_size([c] + out)}). Output size is too small")
    return k, s, p, d, out


def _padded_windows(x, nd, k, s, p, d, out, fill):
    """(*B, *O, *K) windows over the input padded by `fill` (extra right padding for ceil_mode)."""
    sp = x.shape[-nd:]
    widths = [(0, 0)] * (x.ndim - nd)
    for i in range(nd):
        need = (out[i] - 1) * s[i] + d[i] * (k[i] - 1) + 1
        widths.append((p[i], max(need - sp[i] - p[i], 0)))
    xp = np.pad(x, widths, constant_values=fill)
    ext = [d[i] * (k[i] - 1) + 1 for i in range(nd)]
    axes = tuple(range(x.ndim - nd, x.ndim))
    w = sliding_window_view(xp, ext, axis=axes)
    lead = (slice(None),) * (x.ndim - nd)
    return w[lead + tuple(slice(0, (out[i] - 1) * s[i] + 1, s[i]) for i in range(nd))
             + tuple(slice(None, None, d[i]) for i in range(nd))]


def _lowest(dtype):
    return -np.inf if dtype.kind == "f" else (np.iinfo(dtype).min if dtype.kind in "iu" else False)


def max_pool_with_indices(x, nd, kernel_size, stride, padding, dilation, ceil_mode, name):
    k, s, p, d, out = _geometry(x, nd, kernel_size, stride, padding, dilation, ceil_mode, name)
    win = _padded_windows(x, nd, k, s, p, d, out, _lowest(x.dtype))
    flat = win.reshape(win.shape[:x.ndim] + (-1,))
    arg = np.argmax(flat, axis=-1)
    vals = np.take_along_axis(flat, arg[..., None], axis=-1)[..., 0]
    # window offset -> flat input index
    koff = np.unravel_index(arg, k)
    sp = x.shape[-nd:]
    idx = np.zeros(arg.shape, dtype=np.int64)
    for i in range(nd):
        shape = [1] * arg.ndim
        shape[arg.ndim - nd + i] = out[i]
        start = (np.arange(out[i]) * s[i] - p[i]).reshape(shape)
        idx = idx * sp[i] + start + koff[i] * d[i]
    return np.asarray(vals, order="C"), idx


def _scatter_by_indices(grad, self, indices, nd):
    """The adjoint of gathering at flat spatial `indices`: sum grads into a zero `self`-shaped array."""
    plane = int(np.prod(self.shape[-nd:]))
    lead = int(np.prod(self.shape[:-nd]))
    g = grad.reshape(lead, -1)
    idx = indices.reshape(lead, -1) + (np.arange(lead) * plane)[:, None]
    out = np.bincount(idx.ravel(), weights=g.ravel().astype(np.float64), minlength=lead * plane)
    return out.astype(grad.dtype).reshape(self.shape)


for _nd in (1, 2, 3):
    def _mk(nd):
        name = f"max_pool{nd}d"
        z = "[0]" if nd == 1 else "0"
        o = "[1]" if nd == 1 else "1"
        sig = (f"(Tensor self, int[{nd}] kernel_size, int[{nd}] stride=[], int[{nd}] padding={z}, "
               f"int[{nd}] dilation={o}, bool ceil_mode=False)")

        @op(f"aten::{name}{sig} -> Tensor")
        def max_pool(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
            return max_pool_with_indices(self, nd, kernel_size, stride, padding, dilation, ceil_mode, name)[0]

        @op(f"aten::{name}_with_indices{sig} -> (Tensor, Tensor)")
        def max_pool_idx(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
            return max_pool_with_indices(self, nd, kernel_size, stride, padding, dilation, ceil_mode, name)

        if nd > 1:
            @op(f"aten::{name}_with_indices_backward(Tensor grad_output, Tensor self, int[{nd}] kernel_size, "
                f"int[{nd}] stride, int[{nd}] padding, int[{nd}] dilation, bool ceil_mode, Tensor indices) -> Tensor")
            def max_pool_bwd(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices):
                return _scatter_by_indices(grad_output, self, indices, nd)

        def grad_from_indices(e, g, x, indices, args):
            if nd > 1:
                return e.op(f"aten::{name}_with_indices_backward", g, x, *args, indices)
            # PyTorch pools 1d through 2d: the same here, on unsqueezed views
            k = _params(args[0], 1)
            st, pd, dl = _params(args[1], 1, k), _params(args[2], 1), _params(args[3], 1)
            u = [e.op("aten::unsqueeze", t, -2) for t in (g, x, indices)]
            gi = e.op("aten::max_pool2d_with_indices_backward", u[0], u[1], [1] + k, [1] + st, [0] + pd,
                      [1] + dl, args[4], u[2])
            return e.op("aten::squeeze", gi, -2)

        @derivative(f"aten::{name}")
        def max_pool_grad(e, grads, inputs, outputs):
            x, args = inputs[0], list(inputs[1:6])
            if e.symbolic and nd == 2:
                # symbolic_script's max_pool2d: the forward is max_pool2d_with_indices, whose
                # indices the backward captures (with the node's own arguments)
                _, idx = e.replace_forward(f"aten::{name}_with_indices", *e.node.inputs)
                return [e.op(f"aten::{name}_with_indices_backward", grads[0], x, *e.node.inputs[1:6], idx)] + \
                    [None] * 5
            _, idx = e.op(f"aten::{name}_with_indices", x, *args)
            return [grad_from_indices(e, grads[0], x, idx, args)] + [None] * 5

        @derivative(f"aten::{name}_with_indices")
        def max_pool_idx_grad(e, grads, inputs, outputs):
            if grads[0] is None:
                return [None] * 6
            if e.symbolic and nd == 2:
                return [e.op(f"aten::{name}_with_indices_backward", grads[0], inputs[0], *e.node.inputs[1:6],
                             outputs[1])] + [None] * 5
            return [grad_from_indices(e, grads[0], inputs[0], outputs[1], list(inputs[1:6]))] + [None] * 5
    _mk(_nd)


# ---- average pooling

def _avg_divisor(sp, nd, k, s, p, out, count_include_pad, divisor_override):
    if divisor_override:
        return float(divisor_override)
    div = np.ones(out)
    for i in range(nd):
        start = np.arange(out[i]) * s[i] - p[i]
        end = np.minimum(start + k[i], sp[i] + p[i])
        size = end - start
        if not count_include_pad:
            size = np.minimum(end, sp[i]) - np.maximum(start, 0)
        shape = [1] * nd
        shape[i] = out[i]
        div = div * size.reshape(shape)
    return div


def avg_pool(x, nd, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, name):
    k, s, p, d, out = _geometry(x, nd, kernel_size, stride, padding, 1, ceil_mode, name)
    win = _padded_windows(x, nd, k, s, p, d, out, 0)
    acc = np.float64 if x.dtype.kind != "f" else x.dtype
    total = win.sum(axis=tuple(range(x.ndim, x.ndim + nd)), dtype=acc)
    res = total / _avg_divisor(x.shape[-nd:], nd, k, s, p, out, count_include_pad, divisor_override)
    return np.asarray(res.astype(x.dtype) if x.dtype.kind != "f" else res.astype(x.dtype), order="C")


def avg_pool_backward(g, x, nd, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    k, s, p, d, out = _geometry(x, nd, kernel_size, stride, padding, 1, ceil_mode, "avg_pool")
    sp = x.shape[-nd:]
    gd = g / _avg_divisor(sp, nd, k, s, p, out, count_include_pad, divisor_override)
    size = [max((out[i] - 1) * s[i] + k[i], sp[i] + p[i]) + p[i] for i in range(nd)]
    acc = np.zeros(x.shape[:-nd] + tuple(size), dtype=g.dtype)
    lead = (slice(None),) * (x.ndim - nd)
    for off in np.ndindex(*k):  # a loop over kernel offsets, vectorized over pixels
        acc[lead + tuple(slice(off[i], off[i] + (out[i] - 1) * s[i] + 1, s[i]) for i in range(nd))] += gd
    return np.asarray(acc[lead + tuple(slice(p[i], p[i] + sp[i]) for i in range(nd))], order="C")


for _nd in (1, 2, 3):
    def _mk_avg(nd):
        name = f"avg_pool{nd}d"
        if nd == 1:
            schema = ("aten::avg_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=[0], "
                      "bool ceil_mode=False, bool count_include_pad=True) -> Tensor")
        else:
            schema = (f"aten::{name}(Tensor self, int[{nd}] kernel_size, int[{nd}] stride=[], int[{nd}] padding=0, "
                      "bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor")

        @op(schema)
        def avg(self, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
                divisor_override=None):
            return avg_pool(self, nd, kernel_size, stride, padding, ceil_mode, count_include_pad,
                            divisor_override, name)

        if nd > 1:
            @op(f"aten::{name}_backward(Tensor grad_output, Tensor self, int[{nd}] kernel_size, int[{nd}] stride, "
                f"int[{nd}] padding, bool ceil_mode, bool count_include_pad, int? divisor_override) -> Tensor")
            def avg_bwd(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override):
                return avg_pool_backward(grad_output, self, nd, kernel_size, stride, padding, ceil_mode,
                                         count_include_pad, divisor_override)

        @derivative(f"aten::{name}")
        def avg_grad(e, grads, inputs, outputs):
            x = inputs[0]
            args = list(inputs[1:])
            if e.symbolic and nd == 2:  # symbolic_script's avg_pool2d, with the node's own arguments
                return [e.op(f"aten::{name}_backward", grads[0], x, *e.node.inputs[1:])] + [None] * len(args)
            if nd > 1:
                gi = e.op(f"aten::{name}_backward", grads[0], x, *args)
            else:
                k = _params(args[0], 1)
                st = _params(args[1], 1, k)
                pd = _params(args[2], 1)
                gi = e.op("aten::avg_pool2d_backward", e.op("aten::unsqueeze", grads[0], -2),
                          e.op("aten::unsqueeze", x, -2), [1] + k, [1] + st, [0] + pd, args[3], args[4], None)
                gi = e.op("aten::squeeze", gi, -2)
            return [gi] + [None] * len(args)
    _mk_avg(_nd)


# ---- adaptive pooling

def _bounds(n, o):
    i = np.arange(o)
    return (i * n) // o, -(-((i + 1) * n) // o)


def _avg_matrix(n, o, dtype):
    start, end = _bounds(n, o)
    j = np.arange(n)
    m = ((j[None, :] >= start[:, None]) & (j[None, :] < end[:, None])).astype(dtype)
    return m / (end - start)[:, None].astype(dtype)


def _apply_matrices(x, mats):
    nd = len(mats)
    for i, m in enumerate(mats):
        ax = x.ndim - nd + i
        x = np.moveaxis(np.tensordot(np.moveaxis(x, ax, -1), m, axes=([-1], [1])), -1, ax)
    return np.asarray(x, order="C")


def _adaptive_check(x, nd, output_size, name):
    if x.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got {list(x.shape)}")
    out = _params(output_size, nd)
    if len(out) != nd:
        raise RuntimeError(f"{name}: output_size must be {nd}")
    return out


def adaptive_avg_pool(x, nd, output_size, name):
    out = _adaptive_check(x, nd, output_size, name)
    dt = x.dtype if x.dtype.kind == "f" else np.float64
    mats = [_avg_matrix(x.shape[x.ndim - nd + i], out[i], dt) for i in range(nd)]
    return _apply_matrices(x.astype(dt, copy=False), mats).astype(x.dtype)


@op("aten::adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor",
    "aten::_adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor")
def adaptive_avg_pool2d(self, output_size):
    return adaptive_avg_pool(self, 2, output_size, "adaptive_avg_pool2d")


@op("aten::adaptive_avg_pool3d(Tensor self, SymInt[3] output_size) -> Tensor",
    "aten::_adaptive_avg_pool3d(Tensor self, SymInt[3] output_size) -> Tensor")
def adaptive_avg_pool3d(self, output_size):
    return adaptive_avg_pool(self, 3, output_size, "adaptive_avg_pool3d")


@op("aten::adaptive_avg_pool1d(Tensor self, int[1] output_size) -> Tensor")
def adaptive_avg_pool1d(self, output_size):
    return adaptive_avg_pool(self, 1, output_size, "adaptive_avg_pool1d")


def adaptive_avg_pool_backward(grad_output, self, nd):
    mats = [_avg_matrix(self.shape[self.ndim - nd + i], grad_output.shape[grad_output.ndim - nd + i],
                        grad_output.dtype).T for i in range(nd)]
    return _apply_matrices(grad_output, mats)


@op("aten::_adaptive_avg_pool2d_backward(Tensor grad_output, Tensor self) -> Tensor")
def adaptive_avg_pool2d_backward(grad_output, self):
    return adaptive_avg_pool_backward(grad_output, self, 2)


@op("aten::_adaptive_avg_pool3d_backward(Tensor grad_output, Tensor self) -> Tensor")
def adaptive_avg_pool3d_backward(grad_output, self):
    return adaptive_avg_pool_backward(grad_output, self, 3)


def _adaptive_grad_at_run_time(e, g, nd):
    """symbolic_script's adaptive_avg_pool{1,2,3}d: `AD_adaptive_avg_pool{nd}d_backward(grad,
    self, output_size)` (an expand and a division for a global pool, else the backward op),
    deciding when the backward runs."""
    self, output_size = e.node.inputs[:2]
    return [e.call(f"AD_adaptive_avg_pool{nd}d_backward", g, self, output_size), None]


@derivative("aten::adaptive_avg_pool2d", "aten::_adaptive_avg_pool2d")
def adaptive_avg_pool2d_grad(e, grads, inputs, outputs):
    if e.symbolic and e.node.kind == "aten::adaptive_avg_pool2d":
        return _adaptive_grad_at_run_time(e, grads[0], 2)
    return [e.op("aten::_adaptive_avg_pool2d_backward", grads[0], inputs[0]), None]


@derivative("aten::adaptive_avg_pool3d", "aten::_adaptive_avg_pool3d")
def adaptive_avg_pool3d_grad(e, grads, inputs, outputs):
    if e.symbolic and e.node.kind == "aten::adaptive_avg_pool3d":
        return _adaptive_grad_at_run_time(e, grads[0], 3)
    return [e.op("aten::_adaptive_avg_pool3d_backward", grads[0], inputs[0]), None]


@derivative("aten::adaptive_avg_pool1d")
def adaptive_avg_pool1d_grad(e, grads, inputs, outputs):
    if e.symbolic:
        return _adaptive_grad_at_run_time(e, grads[0], 1)
    gi = e.op("aten::_adaptive_avg_pool2d_backward", e.op("aten::unsqueeze", grads[0], -2),
              e.op("aten::unsqueeze", inputs[0], -2))
    return [e.op("aten::squeeze", gi, -2), None]


def adaptive_max_pool(x, nd, output_size, name):
    out = _adaptive_check(x, nd, output_size, name)
    sp = x.shape[-nd:]
    b = x.ndim - nd
    g = x
    maxlen = []
    for i in range(nd):
        start, end = _bounds(sp[i], out[i])
        ml = int((end - start).max()) if out[i] else 1
        maxlen.append(ml)
        idx = start[:, None] + np.arange(ml)[None, :]
        valid = idx < end[:, None]
        idx = np.where(valid, idx, start[:, None])  # repeat a window element: max unchanged
        g = np.take(g, idx, axis=b + 2 * i)  # replaces axis by (O_i, K_i)
    # g: (*B, O0, K0, O1, K1, ...) -> (*B, O0, O1, ..., K0*K1*...)
    perm = tuple(range(b)) + tuple(b + 2 * i for i in range(nd)) + tuple(b + 2 * i + 1 for i in range(nd))
    g = g.transpose(perm).reshape(x.shape[:b] + tuple(out) + (-1,))
    arg = np.argmax(g, axis=-1)
    vals = np.take_along_axis(g, arg[..., None], axis=-1)[..., 0]
    koff = np.unravel_index(arg, maxlen)
    idx = np.zeros(arg.shape, dtype=np.int64)
    for i in range(nd):
        start, _ = _bounds(sp[i], out[i])
        shape = [1] * arg.ndim
        shape[b + i] = out[i]
        idx = idx * sp[i] + start.reshape(shape) + koff[i]
    return np.asarray(vals, order="C"), idx


@op("aten::adaptive_max_pool2d(Tensor self, int[2] output_size) -> (Tensor, Tensor)")
def adaptive_max_pool2d(self, output_size):
    return adaptive_max_pool(self, 2, output_size, "adaptive_max_pool2d")


@op("aten::adaptive_max_pool1d(Tensor self, int[1] output_size) -> (Tensor, Tensor)")
def adaptive_max_pool1d(self, output_size):
    return adaptive_max_pool(self, 1, output_size, "adaptive_max_pool1d")


@op("aten::adaptive_max_pool2d_backward(Tensor grad_output, Tensor self, Tensor indices) -> Tensor")
def adaptive_max_pool2d_backward(grad_output, self, indices):
    return _scatter_by_indices(grad_output, self, indices, 2)


@derivative("aten::adaptive_max_pool2d")
def adaptive_max_pool2d_grad(e, grads, inputs, outputs):
    if grads[0] is None:
        return [None, None]
    return [e.op("aten::adaptive_max_pool2d_backward", grads[0], inputs[0], outputs[1]), None]


@derivative("aten::adaptive_max_pool1d")
def adaptive_max_pool1d_grad(e, grads, inputs, outputs):
    if grads[0] is None:
        return [None, None]
    u = [e.op("aten::unsqueeze", t, -2) for t in (grads[0], inputs[0], outputs[1])]
    gi = e.op("aten::adaptive_max_pool2d_backward", u[0], u[1], u[2])
    return [e.op("aten::squeeze", gi, -2), None]
