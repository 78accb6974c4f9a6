"""Native lowering rules of pooling (max and adaptive max with their indices, average, adaptive
average; max pooling's backward from its indices), of transposed convolution, and of the lookups at run-time indices (embedding and
its backward, index_select, gather and scatter_add, the backward of gather).

A pooling window is unrolled: one load per window offset at positions computed from the output
position, clamped into the input, with padding positions selected away. Run-time indices are
checked against their dimension in the kernel, which bails out when one is out of range (the
interpreter then raises PyTorch's error)."""

from __future__ import annotations

import math

import numpy as np

from . import indexing, nn_conv, nn_embedding, nn_pool  # noqa: F401
from .lowering_common import NotLowerable
from .nn_pool import _out_size, _params
from .registry import lowering

MAX_WINDOW = 64  # loads per output element above which pooling stays interpreted


def _pool_geometry(x, nd, kernel_size, stride, padding, dilation, ceil_mode):
    """(kernel, stride, padding, dilation, input spatial sizes, output spatial sizes) of a
    pooling that the interpreter would accept, else NotLowerable."""
    if not _is_tensor(x) or len(x.sizes) not in (nd + 1, nd + 2) or any(n == 0 for n in x.sizes):
        raise NotLowerable("pooling input rank or empty input")
    if not all(isinstance(v, int) for v in [*_flat(kernel_size), *_flat(stride), *_flat(padding),
                                            *_flat(dilation)]) or not isinstance(ceil_mode, bool):
        raise NotLowerable("pooling with run-time geometry")
    k = _params(kernel_size, nd)
    s = _params(stride, nd, k)
    p = _params(padding, nd)
    d = _params(dilation, nd)
    if len(k) != nd or len(s) != nd or len(p) != nd or len(d) != nd or \
            min(k + s + d) < 1 or min(p) < 0 or any(p[i] > k[i] // 2 for i in range(nd)):
        raise NotLowerable("pooling geometry the interpreter rejects")
    sp = list(x.sizes[-nd:])
    out = [_out_size(sp[i], k[i], s[i], p[i], d[i], ceil_mode) for i in range(nd)]
    if min(out) < 1 or math.prod(k) > MAX_WINDOW:
        raise NotLowerable("empty pooling output or a large window")
    return k, s, p, d, sp, out


def _is_tensor(x) -> bool:
    return hasattr(x, "sizes")


def _flat(v):
    return list(v) if isinstance(v, (list, tuple)) else [v]


def _windows(e, x, nd, k, s, p, d, sp, out):
    """Per window offset: (loaded value, in-bounds condition or None, flat spatial index)."""
    rank = len(x.sizes)
    lead = [e.position(j) for j in range(rank - nd)]
    taps = [[] for _ in range(nd)]  # per spatial dim: (clamped index, condition, raw index)
    for i in range(nd):
        o = e.position(rank - nd + i)
        for t in range(k[i]):
            raw = e.add(e.mul(o, s[i]), t * d[i] - p[i])
            low = -p[i] + t * d[i]
            high = (out[i] - 1) * s[i] - p[i] + t * d[i]
            cond = None
            if low < 0:
                cond = e.ge(raw, 0)
            if high >= sp[i]:
                c = e.lt(raw, sp[i])
                cond = c if cond is None else e.logical_and(cond, c)
            if high < 0 or low >= sp[i]:
                clamped = e.cast(0 if high < 0 else sp[i] - 1, "int64")
            else:
                clamped = raw if cond is None else e.minimum(e.maximum(raw, 0), sp[i] - 1)
            taps[i].append((clamped, cond, raw))
    result = []
    for combo in _product(taps):
        cond, flat = None, None
        for i, (_, c, raw) in enumerate(combo):
            if c is not None:
                cond = c if cond is None else e.logical_and(cond, c)
            flat = raw if flat is None else e.add(e.mul(flat, sp[i]), raw)
        value = e.load_at(x, lead + [clamped for clamped, _, _ in combo])
        result.append((value, cond, flat))
    return result


def _product(lists):
    out = [[]]
    for options in lists:
        out = [prefix + [o] for prefix in out for o in options]
    return out


def _lowest(dtype):
    if dtype.kind == "f":
        return -math.inf
    if dtype.kind == "b":
        return False
    return int(np.iinfo(dtype).min)


def _running_max(e, taps, dtype, with_indices: bool):
    """The window maximum (NaN-propagating) over `taps` of (value, in-bounds condition or None,
    flat index), and with indices the flat index of its first occurrence (of the first NaN)."""
    best = where_at = None
    for value, cond, flat in taps:
        if cond is not None:
            value = e.where(cond, value, _lowest(dtype))
        if best is None:
            best, where_at = value, flat
        elif not with_indices:
            best = e.maximum(best, value)
        else:
            take = e.gt(value, best)
            if dtype.kind == "f":
                take = e.logical_or(take, e.logical_and(e.isnan(value), e.logical_not(e.isnan(best))))
            if cond is not None:
                take = e.logical_and(take, cond)
            best, where_at = e.where(take, value, best), e.where(take, flat, where_at)
    return (best, where_at) if with_indices else best


def _max_pool(e, x, nd, kernel_size, stride, padding, dilation, ceil_mode, with_indices=False):
    k, s, p, d, sp, out = _pool_geometry(x, nd, kernel_size, stride, padding, dilation, ceil_mode)
    return _running_max(e, _windows(e, x, nd, k, s, p, d, sp, out), x.dtype, with_indices)


for _nd in (1, 2):
    lowering(f"aten::max_pool{_nd}d")(
        lambda e, x, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False, _nd=_nd:
        _max_pool(e, x, _nd, kernel_size, stride, padding, dilation, ceil_mode))


@lowering("aten::max_pool2d_with_indices")
def _max_pool2d_with_indices(e, x, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return _max_pool(e, x, 2, kernel_size, stride, padding, dilation, ceil_mode, with_indices=True)


def _input_position(e, x, nd):
    """(leading positions, spatial positions) of the current node's output, which has `x`'s shape:
    a pooling backward computes each input element's gradient."""
    rank = len(x.sizes)
    return [e.position(j) for j in range(rank - nd)], [e.position(rank - nd + i) for i in range(nd)]


def _windows_containing(e, positions, k, s, p, d, out):
    """Per spatial dim, the (output index clamped into range, condition) pairs of the pooling
    windows whose tap t reaches input position `pos`: o * s - p + t * d == pos, 0 <= o < out."""
    taps = []
    for i, pos in enumerate(positions):
        options = []
        for t in range(k[i]):
            num = e.sub(e.add(pos, p[i]), t * d[i])  # o * stride when this tap reaches pos
            o = e.index_div(num, s[i])
            cond = e.logical_and(e.ge(num, 0), e.lt(num, out[i] * s[i]))
            if s[i] != 1:
                cond = e.logical_and(cond, e.eq(e.index_rem(num, s[i]), 0))
            options.append((e.minimum(e.maximum(o, 0), out[i] - 1), cond))
        taps.append(options)
    return _product(taps)


def _sum_of(e, terms):
    total = None
    for term in terms:
        total = term if total is None else e.add(total, term)
    return total


@lowering("aten::max_pool2d_with_indices_backward")
def _max_pool2d_backward(e, grad, x, kernel_size, stride, padding, dilation, ceil_mode, indices):
    """grad_input[.., ih, iw]: the sum of grad_output over the windows that contain (ih, iw) and
    whose recorded index is this position."""
    k, s, p, d, sp, out = _pool_geometry(x, 2, kernel_size, stride, padding, dilation, ceil_mode)
    if tuple(grad.sizes) != tuple(indices.sizes) or tuple(grad.sizes[-2:]) != tuple(out) or \
            indices.dtype.kind != "i":
        raise NotLowerable("max_pool2d backward shapes")
    lead, (ih, iw) = _input_position(e, x, 2)
    here = e.add(e.mul(ih, sp[1]), iw)
    terms = []
    for (oh, ch), (ow, cw) in _windows_containing(e, (ih, iw), k, s, p, d, out):
        at = lead + [oh, ow]
        hit = e.logical_and(e.logical_and(ch, cw), e.eq(e.load_at(indices, at), here))
        terms.append(e.where(hit, e.load_at(grad, at), 0))
    return _sum_of(e, terms)


@lowering("aten::avg_pool2d_backward")
def _avg_pool2d_backward(e, grad, x, kernel_size, stride, padding, ceil_mode, count_include_pad,
                         divisor_override):
    """grad_input[.., ih, iw]: the sum, over the windows that contain (ih, iw), of grad_output
    divided by the window's divisor."""
    if not _is_tensor(grad) or not e.is_float(grad) or grad.dtype != x.dtype:
        raise NotLowerable("average pooling backward of integers")
    k, s, p, d, sp, out = _pool_geometry(x, 2, kernel_size, stride, padding, 1, ceil_mode)
    if tuple(grad.sizes) != tuple(x.sizes[:-2]) + tuple(out) or not isinstance(count_include_pad, bool):
        raise NotLowerable("average pooling backward shapes")
    lead, positions = _input_position(e, x, 2)
    terms = []
    for window in _windows_containing(e, positions, k, s, p, d, out):
        value = e.load_at(grad, lead + [o for o, _ in window])
        if divisor_override:
            value = e.div(value, float(divisor_override))
        else:
            divisor = None
            for i, (o, _) in enumerate(window):
                start = e.sub(e.mul(o, s[i]), p[i])
                end = e.minimum(e.add(start, k[i]), sp[i] + p[i])
                size = e.sub(end, start) if count_include_pad else \
                    e.sub(e.minimum(end, sp[i]), e.maximum(start, 0))
                divisor = size if divisor is None else e.mul(divisor, size)
            value = e.div(value, e.cast(divisor, x.dtype))
        terms.append(e.where(e.logical_and(window[0][1], window[1][1]), value, 0))
    return _sum_of(e, terms)


def _avg_pool(e, x, nd, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    if not e.is_float(x):
        raise NotLowerable("average pooling of integers")
    k, s, p, d, sp, out = _pool_geometry(x, nd, kernel_size, stride, padding, 1, ceil_mode)
    total = None
    for value, cond, _ in _windows(e, x, nd, k, s, p, d, sp, out):
        if cond is not None:
            value = e.where(cond, value, 0)
        total = value if total is None else e.add(total, value)
    if divisor_override:
        return e.div(total, float(divisor_override))
    rank = len(x.sizes)
    divisor = None
    for i in range(nd):
        start = e.sub(e.mul(e.position(rank - nd + i), s[i]), p[i])
        end = e.minimum(e.add(start, k[i]), sp[i] + p[i])
        size = e.sub(end, start) if count_include_pad else \
            e.sub(e.minimum(end, sp[i]), e.maximum(start, 0))
        divisor = size if divisor is None else e.mul(divisor, size)
    return e.div(total, e.cast(divisor, x.dtype))


@lowering("aten::avg_pool1d")
def _avg_pool1d(e, x, kernel_size, stride=(), padding=(0,), ceil_mode=False, count_include_pad=True):
    return _avg_pool(e, x, 1, kernel_size, stride, padding, ceil_mode, count_include_pad, None)


@lowering("aten::avg_pool2d")
def _avg_pool2d(e, x, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
                divisor_override=None):
    return _avg_pool(e, x, 2, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def _even_windows(x, output_size):
    """(output size, window size) when adaptive pooling's windows are all alike and tile the
    input (each input size a multiple of its output size) and too large to unroll, else None."""
    if not _is_tensor(x) or len(x.sizes) not in (3, 4) or any(n == 0 for n in x.sizes) or \
            not all(isinstance(o, int) for o in _flat(output_size)):
        return None
    out = _params(output_size, 2)
    sp = list(x.sizes[-2:])
    if len(out) != 2 or min(out) < 1 or any(n % o for n, o in zip(sp, out)):
        return None
    window = [n // o for n, o in zip(sp, out)]
    return (out, window) if window[0] * window[1] > MAX_WINDOW else None


def _adaptive_windows(e, x, output_size):
    """(taps as `_windows` gives them, element count of each window) of adaptive pooling: windows
    [floor(o * n / out), ceil((o + 1) * n / out)) unrolled to the widest one."""
    if not _is_tensor(x) or len(x.sizes) not in (3, 4) or any(n == 0 for n in x.sizes) or \
            not all(isinstance(o, int) for o in _flat(output_size)):
        raise NotLowerable("adaptive pooling input")
    out = _params(output_size, 2)
    sp = list(x.sizes[-2:])
    if len(out) != 2 or min(out) < 1:
        raise NotLowerable("adaptive pooling output size")
    widths = [max(-(-((o + 1) * n) // m) - (o * n) // m for o in range(m)) for n, m in zip(sp, out)]
    if widths[0] * widths[1] > MAX_WINDOW:
        raise NotLowerable("adaptive pooling windows too large to unroll")
    rank = len(x.sizes)
    lead = [e.position(j) for j in range(rank - 2)]
    options, counts = [], None
    for i in range(2):
        o = e.position(rank - 2 + i)
        start = e.index_div(e.mul(o, sp[i]), out[i])
        end = e.index_div(e.add(e.mul(o, sp[i]), sp[i] + out[i] - 1), out[i])
        count = e.sub(end, start)
        counts = count if counts is None else e.mul(counts, count)
        taps = []
        for t in range(widths[i]):
            at = e.add(start, t)
            taps.append((e.minimum(at, sp[i] - 1), e.lt(at, end) if t else None))
        options.append(taps)
    windows = []
    for (ih, ch), (iw, cw) in _product(options):
        cond = ch if cw is None else (cw if ch is None else e.logical_and(ch, cw))
        windows.append((e.load_at(x, lead + [ih, iw]), cond, e.add(e.mul(ih, sp[1]), iw)))
    return windows, counts


@lowering("aten::adaptive_avg_pool2d", "aten::_adaptive_avg_pool2d")
def _adaptive_avg_pool2d(e, x, output_size):
    if not _is_tensor(x) or not e.is_float(x):
        raise NotLowerable("adaptive average pooling of integers")
    even = _even_windows(x, output_size)
    if even is not None:  # equal windows that tile the input: a mean over the window dims
        out, window = even
        if out == [1, 1]:  # a global average pool
            return e.div(e.reduce("sum", x, [-2, -1], True), window[0] * window[1])
        tiled = e.reshape(x, list(x.sizes[:-2]) + [out[0], window[0], out[1], window[1]])
        return e.div(e.reduce("sum", tiled, [-3, -1], False), window[0] * window[1])
    windows, counts = _adaptive_windows(e, x, output_size)
    total = None
    for value, cond, _ in windows:
        if cond is not None:
            value = e.where(cond, value, 0)
        total = value if total is None else e.add(total, value)
    return e.div(total, e.cast(counts, x.dtype))


@lowering("aten::adaptive_max_pool2d")
def _adaptive_max_pool2d(e, x, output_size):
    windows, _ = _adaptive_windows(e, x, output_size)
    return _running_max(e, windows, x.dtype, with_indices=True)


def _adaptive_windows_containing(e, x, grad):
    """Per spatial dim, (output index clamped into range, condition) pairs of the adaptive
    pooling windows [floor(o * n / out), ceil((o + 1) * n / out)) that contain the current input
    position: o from floor(i * out / n) to ceil((i + 1) * out / n) - 1, unrolled to the widest."""
    if not (_is_tensor(x) and _is_tensor(grad)) or len(x.sizes) not in (3, 4) or \
            len(grad.sizes) != len(x.sizes) or tuple(grad.sizes[:-2]) != tuple(x.sizes[:-2]) or \
            0 in x.sizes or 0 in grad.sizes:
        raise NotLowerable("adaptive pooling backward shapes")
    sp, out = list(x.sizes[-2:]), list(grad.sizes[-2:])
    lead, positions = _input_position(e, x, 2)
    options, width_total = [], 1
    for i, pos in enumerate(positions):
        n, m = sp[i], out[i]
        width = max(-(-((j + 1) * m) // n) - (j * m) // n for j in range(n))
        width_total *= width
        lo = e.index_div(e.mul(pos, m), n)
        hi = e.index_div(e.add(e.mul(pos, m), m + n - 1), n)
        options.append([(e.minimum(e.add(lo, t), m - 1), e.lt(e.add(lo, t), hi) if t else None)
                        for t in range(width)])
    if width_total > MAX_WINDOW:
        raise NotLowerable("adaptive pooling backward windows too large to unroll")
    return lead, positions, _product(options)


def _both(e, a, b):
    return a if b is None else (b if a is None else e.logical_and(a, b))


@lowering("aten::_adaptive_avg_pool2d_backward")
def _adaptive_avg_pool2d_backward(e, grad, x):
    """grad_input[.., ih, iw]: the sum, over the windows that contain (ih, iw), of grad_output
    divided by the window's element count."""
    if not _is_tensor(grad) or not e.is_float(grad):
        raise NotLowerable("adaptive average pooling backward of integers")
    lead, _, windows = _adaptive_windows_containing(e, x, grad)
    sp, out = list(x.sizes[-2:]), list(grad.sizes[-2:])
    terms = []
    for window in windows:
        count = None
        for i, (o, _) in enumerate(window):
            start = e.index_div(e.mul(o, sp[i]), out[i])
            end = e.index_div(e.add(e.mul(o, sp[i]), sp[i] + out[i] - 1), out[i])
            size = e.sub(end, start)
            count = size if count is None else e.mul(count, size)
        value = e.div(e.load_at(grad, lead + [o for o, _ in window]), e.cast(count, grad.dtype))
        cond = _both(e, window[0][1], window[1][1])
        terms.append(value if cond is None else e.where(cond, value, 0))
    return _sum_of(e, terms)


@lowering("aten::adaptive_max_pool2d_backward")
def _adaptive_max_pool2d_backward(e, grad, x, indices):
    """grad_input[.., ih, iw]: the sum of grad_output over the windows that contain (ih, iw) and
    whose recorded index is this position."""
    if not _is_tensor(indices) or tuple(indices.sizes) != tuple(grad.sizes) or indices.dtype.kind != "i":
        raise NotLowerable("adaptive max pooling backward indices")
    lead, (ih, iw), windows = _adaptive_windows_containing(e, x, grad)
    here = e.add(e.mul(ih, x.sizes[-1]), iw)
    terms = []
    for window in windows:
        at = lead + [o for o, _ in window]
        hit = _both(e, _both(e, window[0][1], window[1][1]), e.eq(e.load_at(indices, at), here))
        terms.append(e.where(hit, e.load_at(grad, at), 0))
    return _sum_of(e, terms)


# ---- lookups at run-time indices

@lowering("aten::embedding")
def _embedding(e, weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    if not _is_tensor(indices) or len(weight.sizes) != 2 or indices.dtype.kind not in "iu":
        raise NotLowerable("embedding operands")
    rows = e.checked_index(e.aligned(indices, range(len(indices.sizes))), weight.sizes[0], wrap=False)
    return e.load_at(weight, [rows, e.position(-1)])


@lowering("aten::index_select")
def _index_select(e, x, dim, index):
    if not _is_tensor(index) or len(index.sizes) > 1 or not x.sizes or index.dtype.kind not in "iu":
        raise NotLowerable("index_select operands")
    dim %= len(x.sizes)
    rows = e.checked_index(e.aligned(index, [dim] if index.sizes else []), x.sizes[dim], wrap=False)
    return e.load_at(x, [rows if j == dim else e.position(j) for j in range(len(x.sizes))])


@lowering("aten::gather")
def _gather(e, x, dim, index, sparse_grad=False):
    if not _is_tensor(index) or len(index.sizes) != len(x.sizes) or not x.sizes or \
            index.dtype.name != "int64" or any(i > n for i, n in zip(index.sizes, x.sizes)):
        raise NotLowerable("gather operands")
    dim %= len(x.sizes)
    rows = e.checked_index(e.aligned(index, range(len(index.sizes))), x.sizes[dim], wrap=False)
    return e.load_at(x, [rows if j == dim else e.position(j) for j in range(len(x.sizes))])


@lowering("aten::conv_transpose2d.input")
def _conv_transpose2d(e, x, weight, bias=None, stride=(1, 1), padding=(0, 0), output_padding=(0, 0),
                      groups=1, dilation=(1, 1)):
    y = e.conv_transpose2d(x, weight, stride, padding, output_padding, groups, dilation)
    if bias is None:
        return y
    if not _is_tensor(bias) or tuple(bias.sizes) != (y.sizes[1],):
        raise NotLowerable("conv_transpose2d bias")
    return e.add(y, e.reshape(bias, [y.sizes[1], 1, 1]))


@lowering("aten::convolution_backward")
def _convolution_backward(e, grad, x, weight, bias_sizes, stride, padding, dilation, transposed,
                          output_padding, groups, output_mask):
    """The gradients `output_mask` asks for: of input and weight as convolution products
    (conv.py; 1-D convolutions as 2-D ones of (N, C, 1, L) views, unbatched inputs as a batch of
    one), of the bias as a sum of the output gradient in the loop nest."""
    if not all(_is_tensor(v) for v in (grad, x, weight)) or not isinstance(output_mask, list) or \
            len(output_mask) != 3 or not all(isinstance(m, bool) for m in output_mask):
        raise NotLowerable("convolution_backward operands")
    nd = len(weight.sizes) - 2
    if nd not in (1, 2) or len(x.sizes) not in (nd + 1, nd + 2) or len(grad.sizes) != len(x.sizes):
        raise NotLowerable("convolution_backward of other than batched or unbatched 1-D or 2-D")
    unbatched = len(x.sizes) == nd + 1  # as a batch of one
    spatial = lambda v, fill: [fill] + _flat(v)[-1:] if nd == 1 else v  # noqa: E731
    grad_input, grad_weight = e.convolution_backward(
        _conv2d_view(e, grad, nd, unbatched), _conv2d_view(e, x, nd, unbatched), _conv2d_view(e, weight, nd, False),
        spatial(stride, 1), spatial(padding, 0), spatial(dilation, 1), transposed, groups, output_mask,
        (x.sizes, weight.sizes))
    grad_bias = None
    if output_mask[2]:
        channel = 0 if unbatched else 1
        grad_bias = e.reduce("sum", grad, [d for d in range(len(grad.sizes)) if d != channel], False)
    return grad_input, grad_weight, grad_bias


def _conv2d_view(e, v, nd: int, add_batch: bool):
    """A 1-D convolution's (N, C, L) tensor as (N, C, 1, L); with `add_batch` a leading 1."""
    sizes = list(v.sizes)
    if nd == 1:
        sizes.insert(len(sizes) - 1, 1)
    if add_batch:
        sizes.insert(0, 1)
    return e.reshape(v, sizes) if sizes != list(v.sizes) else v


@lowering("aten::conv1d")
def _conv1d(e, x, weight, bias=None, stride=(1,), padding=(0,), dilation=(1,), groups=1):
    """conv1d as conv2d of (N, C, 1, L) views."""
    if isinstance(padding, str) or not _is_tensor(x) or len(x.sizes) != 3 or len(weight.sizes) != 3:
        raise NotLowerable("string padding or other than a batched 1-D convolution")
    spatial = lambda v, fill: [fill] + _flat(v)[-1:]  # noqa: E731
    y = e.conv2d(_conv2d_view(e, x, 1, False), _conv2d_view(e, weight, 1, False), bias, spatial(stride, 1),
                 spatial(padding, 0), spatial(dilation, 1), groups)
    return e.reshape(y, (y.sizes[0], y.sizes[1], y.sizes[3]))


@lowering("aten::convolution", "aten::_convolution", "aten::_convolution.deprecated")
def _convolution(e, x, weight, bias, stride, padding, dilation, transposed, output_padding, groups,
                 *_backend_flags):
    """What traced graphs call: conv1d, conv2d or conv_transpose2d by the weight's rank."""
    if not _is_tensor(weight) or not isinstance(transposed, bool):
        raise NotLowerable("convolution operands")
    nd = len(weight.sizes) - 2
    if transposed and nd == 2:
        return _conv_transpose2d(e, x, weight, bias, stride, padding, output_padding, groups, dilation)
    if not transposed and nd == 1:
        return _conv1d(e, x, weight, bias, stride, padding, dilation, groups)
    if transposed or nd != 2 or not _is_tensor(x) or len(x.sizes) != 4:
        raise NotLowerable("other than a batched 1-D or 2-D convolution")
    return e.conv2d(x, weight, bias, stride, padding, dilation, groups)


MAX_SCATTER_WORK = 1 << 22  # multiply-adds above which embedding's backward stays interpreted


@lowering("aten::embedding_backward")
def _embedding_backward_any(e, grad, indices, num_weights, padding_idx, scale_grad_by_freq, sparse):
    """symbolic_script's `embedding_backward`: dense here whatever `sparse` says."""
    return _embedding_backward(e, grad, indices, num_weights, padding_idx, scale_grad_by_freq)


@lowering("aten::embedding_dense_backward")
def _embedding_backward(e, grad, indices, num_weights, padding_idx, scale_grad_by_freq):
    """grad_weight[w, d]: the sum of grad[p, d] over the index positions p holding w (a
    reduction over the positions; no load goes through an index)."""
    if scale_grad_by_freq is not False or not isinstance(padding_idx, int) or \
            not (e.is_view(grad) and e.is_view(indices)) or indices.dtype.kind not in "iu":
        raise NotLowerable("embedding backward operands")
    rows, dim = e.node_sizes
    isizes = tuple(indices.sizes)
    count = math.prod(isizes)
    if tuple(grad.sizes) != isizes + (dim,) or count == 0 or rows * dim * count > MAX_SCATTER_WORK:
        raise NotLowerable("embedding backward shapes")
    space = (rows, dim, count)
    e.reduction_space(space, [2])
    rest, at = e.position(2, space), []
    for n in reversed(isizes):
        at.insert(0, e.index_rem(rest, n))
        rest = e.index_div(rest, n)
    row = e.load_at(indices, at)
    hit = e.eq(row, e.position(0, space))
    if padding_idx >= 0:
        hit = e.logical_and(hit, e.ne(row, padding_idx))
    return e.reduce("sum", e.where(hit, e.load_at(grad, at + [e.position(1, space)]), 0), [2], False)


@lowering("aten::index_select_backward")
def _index_select_backward(e, grad, self_sizes, dim, index):
    """grad_input[.., j, ..]: the sum of grad[.., k, ..] over the index positions k holding j (a
    reduction over an extra trailing axis k; each index checked in range)."""
    if not isinstance(self_sizes, list) or not self_sizes or not all(isinstance(n, int) for n in self_sizes) or \
            not (e.is_view(grad) and e.is_view(index)) or index.dtype.kind not in "iu" or len(index.sizes) != 1:
        raise NotLowerable("index_select_backward operands")
    rank = len(self_sizes)
    dim %= rank
    count = index.sizes[0]
    sizes = tuple(self_sizes)
    if tuple(grad.sizes) != sizes[:dim] + (count,) + sizes[dim + 1:] or 0 in sizes or count == 0 or \
            math.prod(sizes) * count > MAX_SCATTER_WORK:
        raise NotLowerable("index_select_backward shapes")
    space = sizes + (count,)
    e.reduction_space(space, [rank])
    k = e.position(rank, space)
    target = e.checked_index(e.load_at(index, [k]), sizes[dim], wrap=False)
    hit = e.eq(target, e.position(dim, space))
    at = [k if d == dim else e.position(d, space) for d in range(rank)]
    return e.reduce("sum", e.where(hit, e.load_at(grad, at), 0), [rank], False)


def _scatter_add(e, base, dim, index, src):
    """`base` (None: zeros) plus, at each position, the sum of `src` over the index entries along
    `dim` that name it: a reduction over an extra trailing axis k, each index checked in range."""
    sizes = tuple(e.node_sizes)
    rank = len(sizes)
    if not (e.is_view(index) and e.is_view(src)) or index.dtype.name != "int64" or not rank or \
            len(index.sizes) != rank or len(src.sizes) != rank:
        raise NotLowerable("scatter_add operands")
    dim %= rank
    isizes = tuple(index.sizes)
    if any(isizes[d] > src.sizes[d] or (d != dim and isizes[d] > sizes[d]) for d in range(rank)) or \
            0 in isizes or 0 in sizes or math.prod(sizes) * isizes[dim] > MAX_SCATTER_WORK:
        raise NotLowerable("scatter_add shapes")
    space = sizes + (isizes[dim],)
    e.reduction_space(space, [rank])
    at, inside = [], None
    for d in range(rank):
        pos = e.position(rank if d == dim else d, space)
        if d != dim and isizes[d] < sizes[d]:
            c = e.lt(pos, isizes[d])
            inside = c if inside is None else e.logical_and(inside, c)
            pos = e.minimum(pos, isizes[d] - 1)
        at.append(pos)
    target = e.checked_index(e.load_at(index, at), sizes[dim], wrap=False)
    hit = e.eq(target, e.position(dim, space))
    if inside is not None:
        hit = e.logical_and(hit, inside)
    total = e.reduce("sum", e.where(hit, e.load_at(src, at), 0), [rank], False)
    if base is None:
        return total
    if not e.is_view(base) or tuple(base.sizes) != sizes:
        raise NotLowerable("scatter_add base")
    kept = e.load_at(base, [e.position(d, space) for d in range(rank)])
    return e.add(e.squeeze(kept, [rank]), total)


@lowering("aten::scatter_add")
def _scatter_add_rule(e, x, dim, index, src):
    return _scatter_add(e, x, dim, index, src)


@lowering("aten::gather_backward")
def _gather_backward(e, grad, x, dim, index, sparse_grad):
    return _scatter_add(e, None, dim, index, grad)
