"""Upsampling (nearest, nearest-exact, linear/bilinear/trilinear with align_corners) as
separable per-dim interpolation matrices, their backward ops (the transposed matrices), and
pixel shuffle/unshuffle."""

from __future__ import annotations

import numpy as np

from .registry import derivative, op


def _scale(n_in, n_out, scale, align_corners=False):
    if align_corners:
        return (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    return 1.0 / scale if scale is not None and scale > 0 else n_in / n_out


def _matrix(n_in, n_out, mode, scale, align_corners, dtype):
    """The (n_out, n_in) matrix mapping one dim of the input to the output."""
    m = np.zeros((n_out, n_in), dtype=dtype)
    dst = np.arange(n_out)
    s = _scale(n_in, n_out, scale, align_corners)
    if mode == "nearest":
        m[dst, np.minimum(np.floor(dst * s).astype(np.int64), n_in - 1)] = 1
    elif mode == "nearest-exact":
        m[dst, np.minimum(np.floor((dst + 0.5) * s).astype(np.int64), n_in - 1)] = 1
    else:
        src = dst * s if align_corners else np.maximum((dst + 0.5) * s - 0.5, 0.0)
        i0 = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
        i1 = np.minimum(i0 + 1, n_in - 1)
        lam = src - i0
        np.add.at(m, (dst, i0), 1 - lam)
        np.add.at(m, (dst, i1), lam)
    return m


def _apply(x, mats):
    nd = len(mats)
    for i, m in enumerate(mats):
        ax = x.ndim - nd + i
        x = np.moveaxis(np.tensordot(np.moveaxis(x, ax, -1), m, axes=([-1], [1])), -1, ax)
    return np.asarray(x, order="C")


def _scales_list(scales, nd):
    return list(scales) if scales else [None] * nd


def upsample(x, output_size, scales, mode, align_corners=False):
    nd = len(output_size)
    if x.ndim != nd + 2:
        raise RuntimeError(f"Expected {nd + 2}D input (got {x.ndim}D)")
    if any(int(o) <= 0 for o in output_size) or any(s == 0 for s in x.shape[2:]):
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"({', '.join(map(str, x.shape[2:]))}) and output ({', '.join(map(str, output_size))})")
    dt = x.dtype if x.dtype.kind == "f" else np.float64
    mats = [_matrix(x.shape[2 + i], int(output_size[i]), mode, scales[i], align_corners, dt) for i in range(nd)]
    out = _apply(x.astype(dt, copy=False), mats)
    return out.astype(x.dtype) if mode.startswith("nearest") else out


def upsample_backward(g, output_size, input_size, scales, mode, align_corners=False):
    nd = len(output_size)
    mats = [_matrix(int(input_size[2 + i]), int(output_size[i]), mode, scales[i], align_corners, g.dtype).T
            for i in range(nd)]
    return _apply(g, mats)


def _vec_sizes(x, output_size, scale_factors, nd):
    if output_size is not None:
        if scale_factors is not None:
            raise RuntimeError("Must specify exactly one of output_size and scale_factors")
        return [int(o) for o in output_size], [None] * nd
    if scale_factors is None:
        raise RuntimeError("Must specify exactly one of output_size and scale_factors")
    sf = list(scale_factors) * nd if len(scale_factors) == 1 else list(scale_factors)
    return [int(np.floor(x.shape[2 + i] * sf[i])) for i in range(nd)], sf




def _scale_params(nd):
    names = {1: ["scales"], 2: ["scales_h", "scales_w"], 3: ["scales_d", "scales_h", "scales_w"]}[nd]
    return ", ".join(f"float? {n}=None" for n in names)


def _register(kind, mode, nd, linear):
    ac = "bool align_corners, " if linear else ""
    sp = _scale_params(nd)

    @op(f"aten::{kind}(Tensor self, SymInt[{nd}] output_size, {ac}{sp}) -> Tensor")
    def fwd(self, output_size, *rest):
        align = rest[0] if linear else False
        scales = list(rest[1:] if linear else rest) + [None] * nd
        return upsample(self, list(output_size), scales[:nd], mode, align)

    @op(f"aten::{kind}.vec(Tensor input, SymInt[]? output_size, {ac}float[]? scale_factors) -> Tensor")
    def fwd_vec(input, output_size, *rest):
        align = rest[0] if linear else False
        sizes, scales = _vec_sizes(input, output_size, rest[-1], nd)
        return upsample(input, sizes, scales, mode, align)

    @op(f"aten::{kind}_backward(Tensor grad_output, SymInt[{nd}] output_size, SymInt[{nd + 2}] input_size, "
        f"{ac}{sp}) -> Tensor")
    def bwd(grad_output, output_size, input_size, *rest):
        align = rest[0] if linear else False
        scales = list(rest[1:] if linear else rest) + [None] * nd
        return upsample_backward(grad_output, list(output_size), list(input_size), scales[:nd], mode, align)

    @derivative(f"aten::{kind}")
    def grad(e, grads, inputs, outputs):
        x, output_size, rest = inputs[0], inputs[1], list(inputs[2:])
        return [e.op(f"aten::{kind}_backward", grads[0], list(output_size), e.size(x), *rest)] + [None] * (len(inputs) - 1)

    @derivative(f"aten::{kind}.vec")
    def grad_vec(e, grads, inputs, outputs):
        x, output_size, rest = inputs[0], inputs[1], list(inputs[2:])
        sizes = e.size(outputs[0])[2:]
        scales = list(rest[-1]) if rest[-1] is not None else [None] * nd
        if len(scales) == 1:
            scales = scales * nd
        if output_size is not None:
            scales = [None] * nd
        args = ([rest[0]] if linear else []) + scales
        return [e.op(f"aten::{kind}_backward", grads[0], sizes, e.size(x), *args)] + [None] * (len(inputs) - 1)


for _nd in (1, 2, 3):
    _register(f"upsample_nearest{_nd}d", "nearest", _nd, False)
    _register(f"_upsample_nearest_exact{_nd}d", "nearest-exact", _nd, False)
_register("upsample_linear1d", "linear", 1, True)
_register("upsample_bilinear2d", "linear", 2, True)
_register("upsample_trilinear3d", "linear", 3, True)


# ---- pixel shuffle

@op("aten::pixel_shuffle(Tensor self, int upscale_factor) -> Tensor")
def pixel_shuffle(self, upscale_factor):
    r = int(upscale_factor)
    if self.ndim < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{self.ndim} dimension(s)")
    c, h, w = self.shape[-3:]
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square "
                           f"of upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    lead = self.shape[:-3]
    x = self.reshape(lead + (c // (r * r), r, r, h, w))
    k = len(lead)
    x = x.transpose(tuple(range(k)) + (k, k + 3, k + 1, k + 4, k + 2))
    return np.asarray(x.reshape(lead + (c // (r * r), h * r, w * r)), order="C")


@op("aten::pixel_unshuffle(Tensor self, int downscale_factor) -> Tensor")
def pixel_unshuffle(self, downscale_factor):
    r = int(downscale_factor)
    if self.ndim < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
                           f"{self.ndim} dimension(s)")
    c, h, w = self.shape[-3:]
    if h % r or w % r:
        raise RuntimeError(f"pixel_unshuffle expects height and width to be divisible by downscale_factor, "
                           f"but input.size(-2)={h} and input.size(-1)={w} with downscale_factor={r}")
    lead = self.shape[:-3]
    k = len(lead)
    x = self.reshape(lead + (c, h // r, r, w // r, r))
    x = x.transpose(tuple(range(k)) + (k, k + 2, k + 4, k + 1, k + 3))
    return np.asarray(x.reshape(lead + (c * r * r, h // r, w // r)), order="C")


@derivative("aten::pixel_shuffle")
def pixel_shuffle_grad(e, grads, inputs, outputs):
    return [e.op("aten::pixel_unshuffle", grads[0], inputs[1]), None]


@derivative("aten::pixel_unshuffle")
def pixel_unshuffle_grad(e, grads, inputs, outputs):
    return [e.op("aten::pixel_shuffle", grads[0], inputs[1]), None]
