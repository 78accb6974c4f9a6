"""Native lowering rules of reductions (sum, mean, amax, amin, sum_to_size) and of softmax,
log_softmax and their backward ops: each is a reduction over the kernel's inner axes with the
pointwise ops around it fused in."""

from __future__ import annotations

import math

from . import nn_softmax, reductions, views  # noqa: F401
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
