"""Native lowering rules of views (index arithmetic on the viewed buffer, no copies) and of
matrix products and convolutions (BLAS calls whose results the rest of the kernel reads)."""

from __future__ import annotations

from . import linalg, nn_conv, nn_linear, views  # noqa: F401
from .lowering_common import NotLowerable
from .registry import lowering


@lowering("aten::mm", "aten::matmul", "aten::bmm")
def _matmul(e, a, b):
    return e.matmul(a, b)


@lowering("aten::conv2d")
def _conv2d(e, x, weight, bias=None, stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1):
    if isinstance(padding, str) or len(x.sizes) != 4:
        raise NotLowerable("string padding or unbatched input")
    return e.conv2d(x, weight, bias, stride, padding, dilation, groups)


@lowering("aten::linear")
def _linear(e, x, weight, bias=None):
    y = e.matmul(x, e.permute(weight, [1, 0]) if len(weight.sizes) == 2 else weight)
    return y if bias is None else e.add(y, bias)


@lowering("aten::view")
def _view(e, x, sizes):
    return e.reshape(x, sizes)


@lowering("aten::reshape")
def _reshape(e, x, sizes):
    """A view where one fits (as numpy's reshape, the interpreter's), else a copy."""
    try:
        return e.reshape(x, sizes)
    except NotLowerable:
        return e.reshape_copy(x, sizes)


@lowering("aten::flatten.using_ints")
def _flatten(e, x, start=0, end=-1):
    rank = len(x.sizes)
    if rank == 0:
        return e.reshape(x, [1])
    start, end = start % rank, end % rank
    n = 1
    for s in x.sizes[start:end + 1]:
        n *= s
    return _reshape(e, x, list(x.sizes[:start]) + [n] + list(x.sizes[end + 1:]))


@lowering("aten::transpose.int")
def _transpose(e, x, d0, d1):
    dims = list(range(len(x.sizes)))
    if dims:
        dims[d0], dims[d1] = dims[d1], dims[d0]
    return e.permute(x, dims)


@lowering("aten::t")
def _t(e, x):
    return e.permute(x, list(range(len(x.sizes)))[::-1])


@lowering("aten::permute")
def _permute(e, x, dims):
    return e.permute(x, dims)


@lowering("aten::expand")
def _expand(e, x, sizes, implicit=False):
    return e.expand(x, sizes)


@lowering("aten::expand_as")
def _expand_as(e, x, other):
    return e.expand(x, other.sizes)


@lowering("aten::unsqueeze")
def _unsqueeze(e, x, dim):
    return e.unsqueeze(x, dim)


@lowering("aten::squeeze")
def _squeeze(e, x):
    return e.squeeze(x)


@lowering("aten::squeeze.dim")
def _squeeze_dim(e, x, dim):
    return e.squeeze(x, [dim])


@lowering("aten::select.int")
def _select(e, x, dim, index):
    return e.select(x, dim, index)


@lowering("aten::narrow")
def _narrow(e, x, dim, start, length):
    if not (isinstance(start, int) and isinstance(length, int)):
        raise NotLowerable("narrow at run-time bounds")
    start = start % x.sizes[dim % len(x.sizes)] if start < 0 else start
    return e.slice(x, dim, start, start + length, 1)


@lowering("aten::slice.Tensor")
def _slice(e, x, dim=0, start=None, end=None, step=1):
    return e.slice(x, dim, start, end, step)


@lowering("aten::select_backward")
def _select_backward(e, grad, input_sizes, dim, index):
    """Zeros of `input_sizes` with `grad` at `index` along `dim`: the gradient read where the
    output's position along `dim` is the (checked) index."""
    rank = len(input_sizes)
    if rank == 0 or not isinstance(dim, int):
        raise NotLowerable("select_backward of a 0-dim input")
    dim %= rank
    at = e.checked_index(index, input_sizes[dim], wrap=True)
    return e.where(e.eq(e.position(dim), at), e.unsqueeze(grad, dim), 0)


@lowering("aten::slice_backward")
def _slice_backward(e, grad, input_sizes, dim, start, end, step):
    """Zeros of `input_sizes` with `grad` at `start:end:step` along `dim`: each output position
    reads the gradient at its (clamped) index into the slice, kept where it is in the slice."""
    if not all(isinstance(v, int) for v in (dim, start, end, step)) or step <= 0 or not input_sizes:
        raise NotLowerable("slice_backward at run-time bounds")
    rank = len(input_sizes)
    dim %= rank
    start, end, step = slice(start, end, step).indices(input_sizes[dim])
    length = max(0, (end - start + step - 1) // step)
    if length == 0 or len(grad.sizes) != rank or grad.sizes[dim] != length:
        raise NotLowerable("slice_backward of an empty slice")
    p = e.position(dim)
    j = e.index_div(e.maximum(e.minimum(e.sub(p, start), (length - 1) * step), 0), step)
    indices = [j if k == dim else e.position(k) for k in range(rank)]
    inside = e.eq(p, e.add(e.mul(j, step), start))
    return e.where(inside, e.load_at(grad, indices), 0)
