"""Convolutions (1-3 spatial dims, grouped, dilated, strided, transposed) on numpy via
sliding-window views and matmul, and `aten::convolution_backward`, which every
convolution's derivative calls."""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from .registry import derivative, op


def expand_param(v, n: int, name: str = "") -> list[int]:
    """An `int[n]` argument as a list of n ints (a single int, or a 1-element list, repeats)."""
    if isinstance(v, (int, np.integer)):
        return [int(v)] * n
    v = [int(x) for x in v]
    if len(v) == 1 and n > 1:
        return v * n
    if len(v) != n:
        raise ValueError(f"expected {name or 'argument'} to be a single integer value or a list of "
                         f"{n} values to match the convolution dimensions, but got {name or 'it'}={v}")
    return v


def _fmt(shape) -> str:
    return "[" + ", ".join(str(int(s)) for s in shape) + "]"


def _windows(x: np.ndarray, kernel, stride, dilation) -> np.ndarray:
    """(N, C, *S) -> a (N, C, *O, *K) view of the (already padded) input's receptive fields."""
    nd = len(kernel)
    ext = [d * (k - 1) + 1 for k, d in zip(kernel, dilation)]
    axes = tuple(range(2, 2 + nd))
    w = sliding_window_view(x, ext, axis=axes)
    idx = (slice(None), slice(None)) + tuple(slice(None, None, s) for s in stride) + \
        tuple(slice(None, None, d) for d in dilation)
    return w[idx]


def _pad_spatial(x: np.ndarray, lo, hi) -> np.ndarray:
    """Zero-pad (negative values crop) the spatial dims of an (N, C, *S) array."""
    if not any(lo) and not any(hi):
        return x
    crop = tuple(slice(max(-a, 0), x.shape[2 + i] - max(-b, 0)) for i, (a, b) in enumerate(zip(lo, hi)))
    x = x[(slice(None), slice(None)) + crop]
    return np.pad(x, [(0, 0), (0, 0)] + [(max(a, 0), max(b, 0)) for a, b in zip(lo, hi)])


def _conv(x, w, stride, padding, dilation, groups):
    """Batched grouped convolution: x (N, Cin, *S), w (Cout, Cin/g, *K)."""
    nd = w.ndim - 2
    n, cin = x.shape[:2]
    cout, kern = w.shape[0], w.shape[2:]
    xp = _pad_spatial(x, padding, padding)
    padded = xp.shape[2:]
    if any(p < dilation[i] * (k - 1) + 1 for i, (p, k) in enumerate(zip(padded, kern))):
        raise RuntimeError(
            f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
            f"Kernel size: ({' x '.join(str(dilation[i] * (k - 1) + 1) for i, k in enumerate(kern))}). "
            "Kernel size can't be greater than actual input size")
    win = _windows(xp, kern, stride, dilation)  # N, Cin, *O, *K
    out_sp = win.shape[2:2 + nd]
    if cin // groups == 1 and groups > 1:
        return _conv_depthwise(win, w, n, groups, out_sp)
    return _conv_gemm(win, w, n, groups, out_sp)


def _columns(win, n: int, groups: int, out_sp) -> np.ndarray:
    """The im2col matrices (N, g, Cin/g * K, P) of the windows (N, Cin, *O, *K), copied with
    output positions innermost: long contiguous runs (receptive fields innermost copy a few
    elements at a time, ~5x slower here)."""
    nd = len(out_sp)
    kern = win.shape[2 + nd:]
    cg = win.shape[1] // groups
    win = win.reshape((n, groups, cg) + tuple(out_sp) + tuple(kern))
    perm = (0, 1, 2) + tuple(range(3 + nd, 3 + 2 * nd)) + tuple(range(3, 3 + nd))
    return win.transpose(perm).reshape(n, groups, cg * int(np.prod(kern)), int(np.prod(out_sp)))


def _conv_gemm(win, w, n, groups, out_sp):
    """A (grouped) convolution as GEMMs per image and group: weights (Cout/g, Cin/g * K) times
    the columns (Cin/g * K, P); the products land in (N, Cout, *O) order, so no transpose
    follows."""
    cout = w.shape[0]
    cols = _columns(win, n, groups, out_sp)
    out = np.matmul(w.reshape(groups, cout // groups, cols.shape[2]), cols)  # N, g, Cout/g, P
    return out.reshape((n, cout) + tuple(out_sp))


def _conv_depthwise(win, w, n, groups, out_sp):
    """A convolution with one input channel a group (depthwise): per kernel tap, the windows at
    that tap times the tap's weights, summed over taps. No im2col copy and no GEMM of one-row
    matrices (here, float32 (8, 32, 16, 16) by 3x3: ~2.5x faster at stride 1)."""
    nd = len(out_sp)
    og = w.shape[0] // groups
    kern = tuple(w.shape[2:])
    wt = w.reshape((groups, og) + kern)
    acc = np.zeros((n, groups, og) + tuple(out_sp), np.result_type(win, w))
    term = np.empty_like(acc)
    for tap in np.ndindex(*kern):
        x_tap = win[(Ellipsis,) + tap][:, :, None]  # N, g, 1, *O
        w_tap = wt[(slice(None), slice(None)) + tap].reshape((1, groups, og) + (1,) * nd)
        np.multiply(x_tap, w_tap, out=term)
        acc += term
    return acc.reshape((n, groups * og) + tuple(out_sp))


def _conv_transpose(x, w, stride, padding, output_padding, dilation, groups):
    """Batched transposed convolution: x (N, Cin, *S), w (Cin, Cout/g, *K)."""
    nd = w.ndim - 2
    n, cin = x.shape[:2]
    kern = w.shape[2:]
    og = w.shape[1]
    sp = x.shape[2:]
    up_shape = (n, cin) + tuple((s - 1) * st + 1 for s, st in zip(sp, stride))
    up = np.zeros(up_shape, dtype=x.dtype)
    up[(slice(None), slice(None)) + tuple(slice(None, None, st) for st in stride)] = x
    lo = [d * (k - 1) - p for k, d, p in zip(kern, dilation, padding)]
    hi = [a + op_ for a, op_ in zip(lo, output_padding)]
    upp = _pad_spatial(up, lo, hi)
    cg = cin // groups
    wf = np.flip(w, axis=tuple(range(2, 2 + nd)))
    wf = wf.reshape((groups, cg, og) + tuple(kern)).swapaxes(1, 2).reshape((groups * og, cg) + tuple(kern))
    return _conv(upp, np.asarray(wf, order="C"), [1] * nd, [0] * nd, dilation, groups)


def _weight_grad(x, gout, kern, stride, padding, dilation, groups):
    """d(conv)/d(weight): x (N, Cin, *S), gout (N, Cout, *O) -> (Cout, Cin/g, *K)."""
    nd = len(kern)
    n, cin = x.shape[:2]
    cout = gout.shape[1]
    out_sp = gout.shape[2:]
    xp = _pad_spatial(x, padding, padding)
    win = _windows(xp, kern, stride, dilation)
    win = win[(slice(None), slice(None)) + tuple(slice(0, o) for o in out_sp)]
    cg, og = cin // groups, cout // groups
    P = int(np.prod(out_sp))
    if cg == 1:  # depthwise: per tap, a dot product over images and positions (no im2col copy)
        gw = np.empty((groups, og) + tuple(kern), np.result_type(x, gout))
        gg = gout.reshape((n, groups, og) + tuple(out_sp))
        spatial = "pqr"[:nd]
        for tap in np.ndindex(*kern):
            gw[(slice(None), slice(None)) + tap] = np.einsum(
                f"ngo{spatial},ng{spatial}->go", gg, win[(Ellipsis,) + tap])
        return gw.reshape((cout, 1) + tuple(kern))
    cols = _columns(win, n, groups, out_sp)  # N, g, cg*K, P
    # per image and group (og, P) @ (P, cg*K), the columns read transposed in place; then the
    # sum over images
    per_image = np.matmul(gout.reshape(n, groups, og, P), cols.transpose(0, 1, 3, 2))
    return per_image.sum(axis=0).reshape((cout, cg) + tuple(kern))


def _check(x, w, groups, transposed, name, nd):
    if x.ndim != nd + 2:
        raise RuntimeError(f"Expected {nd + 2}D (batched) input to {name}, but got input of size: {_fmt(x.shape)}")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if transposed:
        if x.shape[1] != w.shape[0]:
            raise RuntimeError(f"Given transposed=1, weight of size {_fmt(w.shape)}, expected input"
                               f"{_fmt(x.shape)} to have {w.shape[0]} channels, but got {x.shape[1]} "
                               "channels instead")
    else:
        if x.shape[1] != w.shape[1] * groups:
            raise RuntimeError(f"Given groups={groups}, weight of size {_fmt(w.shape)}, expected input"
                               f"{_fmt(x.shape)} to have {w.shape[1] * groups} channels, but got "
                               f"{x.shape[1]} channels instead")
        if w.shape[0] % groups:
            raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at "
                               f"dimension 0, but got weight of size {_fmt(w.shape)} instead")


def _check_dtypes(x, w, bias, transposed):
    """PyTorch computes a convolution in one dtype: input, weight (and, for a convolution that
    is not transposed, bias) must agree; it never promotes."""
    from .dtypes import c_type_name, scalar_type_name
    if x.dtype != w.dtype:
        xn, wn = scalar_type_name(x.dtype), scalar_type_name(w.dtype)
        if x.dtype.kind == "c" or w.dtype.kind == "c":
            raise RuntimeError(f"Input type (CPU{xn}Type) and weight type (torch.{wn}Tensor) "
                               "should be the same")
        raise RuntimeError(f"expected scalar type {xn} but found {wn}")
    if bias is not None and bias.dtype != x.dtype and not transposed:
        raise RuntimeError(f"Input type ({c_type_name(x.dtype)}) and bias type "
                           f"({c_type_name(bias.dtype)}) should be the same")


def convolution_impl(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """The general convolution, batched or (for the conv*d wrappers) unbatched."""
    _check_dtypes(input, weight, bias, transposed)
    nd = weight.ndim - 2
    unbatched = input.ndim == nd + 1
    x = input[None] if unbatched else input
    stride, padding = expand_param(stride, nd, "stride"), expand_param(padding, nd, "padding")
    dilation = expand_param(dilation, nd, "dilation")
    output_padding = expand_param(output_padding, nd, "output_padding")
    groups = int(groups)
    dt = np.result_type(x.dtype, weight.dtype)
    x, w = x.astype(dt, copy=False), weight.astype(dt, copy=False)
    if transposed:
        _check(x, w, groups, True, "conv_transpose", nd)
        out = _conv_transpose(x, w, stride, padding, output_padding, dilation, groups)
    else:
        _check(x, w, groups, False, "convolution", nd)
        out = _conv(x, w, stride, padding, dilation, groups)
    if bias is not None:
        out = out + bias.astype(dt, copy=False).reshape((1, -1) + (1,) * nd)
    out = np.asarray(out, dtype=dt, order="C")
    return out[0] if unbatched else out


def _check_dims(input, weight, name, nd):
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, "
                           f"but got input of size: {_fmt(input.shape)}")


@op("aten::conv1d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[1] stride=[1], SymInt[1] padding=[0], SymInt[1] dilation=[1], SymInt groups=1) -> Tensor",
    "aten::conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=[1, 1], SymInt[2] padding=[0, 0], SymInt[2] dilation=[1, 1], SymInt groups=1) -> Tensor",
    "aten::conv3d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[3] stride=[1, 1, 1], SymInt[3] padding=[0, 0, 0], SymInt[3] dilation=[1, 1, 1], SymInt groups=1) -> Tensor")
def conv_nd(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    nd = weight.ndim - 2
    _check_dims(input, weight, f"conv{nd}d", nd)
    return convolution_impl(input, weight, bias, stride, padding, dilation, False, 0, groups)


def same_padding(weight, dilation, nd) -> tuple[list[int], list[int]]:
    """(left, right) padding of padding='same': right gets the extra element when odd."""
    total = [d * (k - 1) for k, d in zip(weight.shape[2:], expand_param(dilation, nd))]
    lo = [t // 2 for t in total]
    return lo, [t - a for t, a in zip(total, lo)]


@op("aten::conv1d.padding(Tensor input, Tensor weight, Tensor? bias=None, SymInt[1] stride=[1], str padding=\"valid\", SymInt[1] dilation=[1], SymInt groups=1) -> Tensor",
    "aten::conv2d.padding(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=[1, 1], str padding=\"valid\", SymInt[2] dilation=[1, 1], SymInt groups=1) -> Tensor",
    "aten::conv3d.padding(Tensor input, Tensor weight, Tensor? bias=None, SymInt[3] stride=[1, 1, 1], str padding=\"valid\", SymInt[3] dilation=[1, 1, 1], SymInt groups=1) -> Tensor")
def conv_nd_str(input, weight, bias=None, stride=1, padding="valid", dilation=1, groups=1):
    nd = weight.ndim - 2
    _check_dims(input, weight, f"conv{nd}d", nd)
    if padding == "valid":
        return convolution_impl(input, weight, bias, stride, 0, dilation, False, 0, groups)
    if padding != "same":
        raise RuntimeError(f"Invalid padding string: '{padding}'")
    if any(s != 1 for s in expand_param(stride, nd)):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    lo, hi = same_padding(weight, dilation, nd)
    x = input
    if lo != hi:
        x = input[None] if input.ndim == nd + 1 else input
        x = _pad_spatial(x, [0] * nd, [b - a for a, b in zip(lo, hi)])
        x = x[0] if input.ndim == nd + 1 else x
    return convolution_impl(x, weight, bias, stride, lo, dilation, False, 0, groups)


@op("aten::conv_transpose1d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[1] stride=[1], SymInt[1] padding=[0], SymInt[1] output_padding=[0], SymInt groups=1, SymInt[1] dilation=[1]) -> Tensor",
    "aten::conv_transpose2d.input(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=[1, 1], SymInt[2] padding=[0, 0], SymInt[2] output_padding=[0, 0], SymInt groups=1, SymInt[2] dilation=[1, 1]) -> Tensor",
    "aten::conv_transpose3d.input(Tensor input, Tensor weight, Tensor? bias=None, SymInt[3] stride=[1, 1, 1], SymInt[3] padding=[0, 0, 0], SymInt[3] output_padding=[0, 0, 0], SymInt groups=1, SymInt[3] dilation=[1, 1, 1]) -> Tensor")
def conv_transpose_nd(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    nd = weight.ndim - 2
    _check_dims(input, weight, f"conv_transpose{nd}d", nd)
    return convolution_impl(input, weight, bias, stride, padding, dilation, True, output_padding, groups)


@op("aten::convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups) -> Tensor")
def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    return convolution_impl(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)


@op("aten::_convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups, bool benchmark, bool deterministic, bool cudnn_enabled, bool allow_tf32) -> Tensor",
    "aten::_convolution.deprecated(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, int[] output_padding, SymInt groups, bool benchmark, bool deterministic, bool cudnn_enabled) -> Tensor")
def _convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups,
                 benchmark=False, deterministic=False, cudnn_enabled=True, allow_tf32=True):
    return convolution_impl(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)


@op("aten::convolution_backward(Tensor grad_output, Tensor input, Tensor weight, SymInt[]? bias_sizes, SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups, bool[3] output_mask) -> (Tensor, Tensor, Tensor)")
def convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
                         output_padding, groups, output_mask):
    """Gradients of `convolution` w.r.t. input, weight and bias (None where not asked for).
    An unbatched input (as conv2d accepts) gets unbatched gradients."""
    nd = weight.ndim - 2
    unbatched = input.ndim == nd + 1
    x = input[None] if unbatched else input
    g = grad_output[None] if grad_output.ndim == nd + 1 else grad_output
    stride, padding = expand_param(stride, nd), expand_param(padding, nd)
    dilation = expand_param(dilation, nd)
    output_padding = expand_param(output_padding, nd)
    groups = int(groups)
    kern = weight.shape[2:]
    gi = gw = gb = None
    if output_mask[0]:
        if transposed:
            gi = _conv(g, weight, stride, padding, dilation, groups)
        else:
            # the output padding that makes the transposed conv give back the input's size
            opad = [x.shape[2 + i] - ((g.shape[2 + i] - 1) * stride[i] - 2 * padding[i]
                                      + dilation[i] * (kern[i] - 1) + 1) for i in range(nd)]
            gi = _conv_transpose(g, weight, stride, padding, opad, dilation, groups)
        gi = np.asarray(gi[0] if unbatched else gi, dtype=input.dtype, order="C")
    if output_mask[1]:
        if transposed:
            gw = _weight_grad(g, x, kern, stride, padding, dilation, groups)
        else:
            gw = _weight_grad(x, g, kern, stride, padding, dilation, groups)
        gw = np.asarray(gw, dtype=weight.dtype, order="C")
    if output_mask[2]:
        gb = g.sum(axis=(0,) + tuple(range(2, g.ndim))).astype(grad_output.dtype)
    return gi, gw, gb


def _backward(e, g, x, w, b, stride, padding, dilation, transposed, output_padding, groups):
    if g is None:
        return None, None, None
    bias_sizes = e.size(b) if e.is_tensor(b) else None
    gi, gw, gb = e.op("aten::convolution_backward", g, x, w, bias_sizes, stride, padding, dilation,
                      transposed, output_padding, groups, [True, True, bias_sizes is not None])
    return gi, gw, gb


@derivative("aten::conv1d", "aten::conv2d", "aten::conv3d")
def conv_nd_grad(e, grads, inputs, outputs):
    x, w, b, stride, padding, dilation, groups = inputs
    gi, gw, gb = _backward(e, grads[0], x, w, b, stride, padding, dilation, False, 0, groups)
    return [gi, gw, gb, None, None, None, None]


@derivative("aten::conv1d.padding", "aten::conv2d.padding", "aten::conv3d.padding")
def conv_nd_str_grad(e, grads, inputs, outputs):
    x, w, b, stride, padding, dilation, groups = inputs
    nd = len(e.shape(w)) - 2
    if padding == "valid":
        lo, hi = [0] * nd, [0] * nd
    else:
        lo, hi = same_padding(w, dilation, nd)
    extra = [b_ - a for a, b_ in zip(lo, hi)]
    xp = x
    if any(extra):
        pad = []
        for v in reversed(extra):  # constant_pad_nd lists the last dim first
            pad += [0, v]
        xp = e.op("aten::constant_pad_nd", x, pad, 0)
    gi, gw, gb = _backward(e, grads[0], xp, w, b, stride, lo, dilation, False, 0, groups)
    if gi is not None and any(extra):
        gi = e.op("aten::constant_pad_nd", gi, [-v for v in pad], 0)
    return [gi, gw, gb, None, None, None, None]


@derivative("aten::conv_transpose1d", "aten::conv_transpose2d.input", "aten::conv_transpose3d.input")
def conv_transpose_grad(e, grads, inputs, outputs):
    x, w, b, stride, padding, output_padding, groups, dilation = inputs
    gi, gw, gb = _backward(e, grads[0], x, w, b, stride, padding, dilation, True, output_padding, groups)
    return [gi, gw, gb, None, None, None, None, None]


@derivative("aten::convolution", "aten::_convolution", "aten::_convolution.deprecated")
def convolution_grad(e, grads, inputs, outputs):
    x, w, b, stride, padding, dilation, transposed, output_padding, groups = inputs[:9]
    gi, gw, gb = _backward(e, grads[0], x, w, b, stride, padding, dilation, transposed, output_padding, groups)
    return [gi, gw, gb] + [None] * (len(inputs) - 3)
