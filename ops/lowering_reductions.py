"""Native lowering rules of reductions (sum, mean, amax, amin, sum_to_size, var/std, norms,
logsumexp, prod, argmax/argmin, max/min, cumsum, cumprod) and of softmax, log_softmax and their backward
ops: each is a reduction over the kernel's inner axes with the pointwise ops around it fused in."""

from __future__ import annotations

import math

from . import nn_softmax, reductions, reductions_extra, views  # noqa: F401
from .dtypes import dtype_from_code
from .lowering_common import NotLowerable
from .registry import lowering


def _with_dtype(e, x, dtype):
    return x if dtype is None else e.cast(x, dtype_from_code(dtype))


@lowering("aten::sum")
def _sum_all(e, x, dtype=None):
    return e.reduce("sum", _with_dtype(e, x, dtype), None, False)


@lowering("aten::sum.dim_IntList")
def _sum(e, x, dims, keepdim=False, dtype=None):
    return e.reduce("sum", _with_dtype(e, x, dtype), dims, keepdim)


@lowering("aten::mean")
def _mean_all(e, x, dtype=None):
    return _mean(e, x, None, False, dtype)


@lowering("aten::mean.dim")
def _mean(e, x, dims, keepdim=False, dtype=None):
    x = _with_dtype(e, x, dtype)
    if not e.is_float(x):
        raise NotLowerable("mean of integers is an error")
    return e.div(e.reduce("sum", x, dims, keepdim), e.numel(x, dims))


@lowering("aten::amax")
def _amax(e, x, dims=(), keepdim=False):
    return e.reduce("max", x, dims, keepdim)


@lowering("aten::amin")
def _amin(e, x, dims=(), keepdim=False):
    return e.reduce("min", x, dims, keepdim)


@lowering("aten::sum_to_size", "aten::_grad_sum_to_size")
def _sum_to_size(e, x, size):
    if size is None:
        return e.value(x)
    size, sizes = list(size), list(x.sizes)
    lead = len(sizes) - len(size)
    dims = list(range(lead)) + [lead + k for k, n in enumerate(size) if n == 1 and sizes[lead + k] != 1]
    if not dims:
        return e.value(x)
    return e.squeeze(e.reduce("sum", x, dims, True), list(range(lead)))


def _finite_max(e, x, dim):
    m = e.reduce("max", x, [dim], True)
    return e.where(e.eq(e.abs(m), math.inf), 0, m)


@lowering("aten::softmax.int", "aten::_softmax")
def _softmax(e, x, dim, dtype=None):
    x = e.value(_with_dtype(e, x, dtype if not isinstance(dtype, bool) else None))
    z = e.sub(x, _finite_max(e, x, dim))
    ez = e.call("exp", z)
    return e.div(ez, e.reduce("sum", ez, [dim], True))


@lowering("aten::log_softmax.int", "aten::_log_softmax")
def _log_softmax(e, x, dim, dtype=None):
    x = e.value(_with_dtype(e, x, dtype if not isinstance(dtype, bool) else None))
    z = e.sub(x, _finite_max(e, x, dim))
    return e.sub(z, e.call("log", e.reduce("sum", e.call("exp", z), [dim], True)))


@lowering("aten::_softmax_backward_data")
def _softmax_backward(e, grad, out, dim, input_dtype):
    grad, out = e.value(grad), e.value(out)
    return e.mul(out, e.sub(grad, e.reduce("sum", e.mul(grad, out), [dim], True)))


@lowering("aten::_log_softmax_backward_data")
def _log_softmax_backward(e, grad, out, dim, input_dtype):
    grad, out = e.value(grad), e.value(out)
    return e.sub(grad, e.mul(e.call("exp", out), e.reduce("sum", grad, [dim], True)))


# ---- statistics, norms, products and arg-reductions

def _along_space(e, x, dims):
    """`x` as a value along the iteration space of a reduction over `dims` (the first
    reduction fixes that space; until then it raises the emitter's request for it)."""
    e.reduce("sum", x, dims, True)
    return e.load(x, e.space.full_axes(tuple(x.sizes))) if e.is_view(x) else e.value(x)


def _float_input(e, x):
    if not e.is_float(x):
        raise NotLowerable("a floating point reduction of integers")
    return x


def _variance(e, x, dims, correction, keepdim):
    x = _along_space(e, _float_input(e, x), dims)
    n = e.numel(x, dims)
    centered = e.sub(x, e.div(e.reduce("sum", x, dims, True), n))
    total = e.reduce("sum", e.mul(centered, centered), dims, keepdim)
    return e.div(total, float(max(0, n - correction)))


def _var_args(args):
    """(dims, correction, keepdim) of any var/std overload's arguments after self."""
    if len(args) == 1:
        return None, 1 if args[0] else 0, False
    dims, third, keepdim = args
    if isinstance(third, bool):
        return dims, int(third), keepdim
    return dims, 1 if third is None else third, keepdim


@lowering("aten::var", "aten::var.dim", "aten::var.correction")
def _var(e, x, *args):
    return _variance(e, x, *_var_args(args))


@lowering("aten::std", "aten::std.dim", "aten::std.correction")
def _std(e, x, *args):
    return e.sqrt(_variance(e, x, *_var_args(args)))


def _vector_norm(e, x, p, dims, keepdim, dtype=None):
    x = _float_input(e, x if dtype is None else e.cast(x, dtype_from_code(dtype)))
    p = 2 if p is None else p
    if not isinstance(p, (int, float)):
        raise NotLowerable("a norm of run-time order")
    a = e.abs(_along_space(e, x, dims))
    if p == math.inf:
        return e.reduce("max", a, dims, keepdim)
    if p == -math.inf:
        return e.reduce("min", a, dims, keepdim)
    if p == 0:
        return e.cast(e.reduce("sum", e.ne(a, 0), dims, keepdim), x.dtype)
    if p == 1:
        return e.reduce("sum", a, dims, keepdim)
    if p == 2:
        return e.sqrt(e.reduce("sum", e.mul(a, a), dims, keepdim))
    return e.call("pow", e.reduce("sum", e.call("pow", a, float(p)), dims, keepdim), 1.0 / p)


@lowering("aten::norm.Scalar")
def _norm(e, x, p=2):
    return _vector_norm(e, x, p, None, False)


@lowering("aten::norm.ScalarOpt_dim", "aten::norm.ScalarOpt_dim_dtype")
def _norm_dim(e, x, p, dims, keepdim=False, dtype=None):
    return _vector_norm(e, x, p, dims, keepdim, dtype)


@lowering("aten::norm.ScalarOpt_dtype")
def _norm_dtype(e, x, p, dtype):
    return _vector_norm(e, x, p, None, False, dtype)


@lowering("aten::linalg_vector_norm")
def _linalg_vector_norm(e, x, ord=2, dims=None, keepdim=False, dtype=None):
    return _vector_norm(e, x, ord, dims, keepdim, dtype)


@lowering("aten::logsumexp")
def _logsumexp(e, x, dims, keepdim=False):
    x = _along_space(e, x, dims)
    x = e.to_float(x)
    m = e.reduce("max", x, dims, True)
    m = e.where(e.eq(e.abs(m), math.inf), 0, m)
    s = e.add(e.call("log", e.reduce("sum", e.call("exp", e.sub(x, m)), dims, True)), m)
    rank = len(x.sizes)
    return s if keepdim else e.squeeze(s, list(dims) if dims else list(range(rank)))


@lowering("aten::prod")
def _prod_all(e, x, dtype=None):
    return _prod(e, x, None, False, dtype)


@lowering("aten::prod.dim_int")
def _prod(e, x, dim, keepdim=False, dtype=None):
    dims = None if dim is None else [dim]
    x = _along_space(e, x, dims)
    if dtype is not None:
        x = e.cast(x, dtype_from_code(dtype))
    elif not e.is_float(x):
        x = e.cast(x, "int64")
    return e.reduce("prod", x, dims, keepdim)


@lowering("aten::max")
def _max_all(e, x):
    return e.reduce("max", x, None, False)


@lowering("aten::min")
def _min_all(e, x):
    return e.reduce("min", x, None, False)


def _arg_extreme(e, x, dim, keepdim, combine):
    """The index of the first extreme (or first NaN) along `dim`, of the flattened input when
    `dim` is None, as numpy's argmax/argmin give it."""
    rank = len(x.sizes)
    if rank == 0:
        return e.cast(0, "int64")
    dims = None if dim is None else [dim]
    xv = _along_space(e, x, dims)
    m = e.reduce(combine, xv, dims, True)
    hit = e.eq(xv, m)
    if e.is_float(xv):
        hit = e.where(e.isnan(m), e.isnan(xv), hit)
    sizes = tuple(x.sizes)
    if dim is None:
        pos, stride = e.cast(0, "int64"), 1
        for d in reversed(range(rank)):
            pos = e.add(pos, e.mul(e.position(d, sizes), stride))
            stride *= sizes[d]
    else:
        pos = e.position(dim, sizes)
    return e.reduce("min", e.where(hit, pos, e.numel(x, dims)), dims, keepdim)


@lowering("aten::argmax")
def _argmax(e, x, dim=None, keepdim=False):
    return _arg_extreme(e, x, dim, keepdim, "max")


@lowering("aten::argmin")
def _argmin(e, x, dim=None, keepdim=False):
    return _arg_extreme(e, x, dim, keepdim, "min")


MAX_SCAN = 256  # cumsum/cumprod combine every prefix separately: longer scans stay interpreted


def _scan(e, x, dim, dtype, combine: str, neutral):
    """out[.., i, ..] = `combine` over j <= i of x[.., j, ..], as a reduction over an extra
    trailing axis j (quadratic in the scanned length); integers accumulate in int64."""
    sizes = tuple(x.sizes)
    if not sizes or not e.is_view(x):
        raise NotLowerable("a scan of a 0-dim or computed value")
    rank, dim = len(sizes), dim % len(sizes)
    if not 0 < sizes[dim] <= MAX_SCAN:
        raise NotLowerable("a scan over an empty or long dim")
    ext = sizes + (sizes[dim],)
    e.reduction_space(ext, [rank])
    j = e.position(rank, ext)
    term = e.load_at(x, [j if d == dim else e.position(d, ext) for d in range(rank)])
    if dtype is not None:
        term = e.cast(term, dtype_from_code(dtype))
    elif not e.is_float(term):
        term = e.cast(term, "int64")
    return e.reduce(combine, e.where(e.le(j, e.position(dim, ext)), term, neutral), [rank], False)


@lowering("aten::cumsum")
def _cumsum(e, x, dim, dtype=None):
    return _scan(e, x, dim, dtype, "sum", 0)


@lowering("aten::cumprod")
def _cumprod(e, x, dim, dtype=None):
    return _scan(e, x, dim, dtype, "prod", 1)
