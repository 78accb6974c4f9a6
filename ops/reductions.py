"""Reductions: sum/mean/prod, max/min/amax/amin/argmax/argmin, var/std, norms, logsumexp,
cumulative sums and products, all/any, count_nonzero, median, with PyTorch's dtype rules
(integer sums accumulate in int64, `dtype=` casts first) and dim handling (`None`/`[]` = all).
"""

from __future__ import annotations

import math

import numpy as np

from .dtypes import dtype_from_code, result_type, scalar_type_name
from ._common import normalize_dim
from .registry import derivative, op
from .types import BOOL, INT

def reduce_axes(dim, ndim: int):
    """Normalized reduction axes as a tuple, or None for "all dims" (`None`, `[]`, 0-d input)."""
    if dim is None:
        return None
    dims = list(dim) if isinstance(dim, (list, tuple)) else [dim]
    if not dims:
        return None
    out = []
    for d in dims:
        n = normalize_dim(d, ndim)
        if n in out:
            raise RuntimeError(f"dim {n} appears multiple times in the list of dims")
        out.append(n)
    return None if ndim == 0 else tuple(out)


def _reduced_count(shape, axes) -> int:
    return math.prod(shape) if axes is None else math.prod(shape[i] for i in axes)


def _acc_dtype(a: np.ndarray, dtype) -> np.dtype:
    if dtype is not None:
        return dtype_from_code(dtype)
    return np.dtype(np.int64) if a.dtype.kind in "biu" else a.dtype


def _sum(a, axes, keepdim, dt):
    work = np.float32 if dt == np.float16 else dt
    return np.asarray(np.sum(a.astype(work, copy=False), axis=axes, keepdims=keepdim), dtype=dt)


# ---- formula helpers (emitter only)

def unsqueeze_reduced(e, g, shape, dim, keepdim):
    """Re-insert the reduced dims into a reduction's gradient so it broadcasts to `shape`."""
    n = len(shape)
    if keepdim or n == 0:
        return g
    axes = reduce_axes(dim, n)
    for d in (range(n) if axes is None else sorted(axes)):
        g = e.op("aten::unsqueeze", g, d)
    return g


def _dims_arg(dim, ndim):
    axes = reduce_axes(dim, ndim)
    return None if axes is None else list(axes)


def evenly_distribute(e, g, self, value, dim, keepdim):
    """PyTorch's evenly_distribute_backward: the gradient split equally among the elements
    equal to the selected value (max, min, amax, amin, median)."""
    shape = e.shape(self)
    g = unsqueeze_reduced(e, g, shape, dim, keepdim)
    value = unsqueeze_reduced(e, value, shape, dim, keepdim)
    mask = e.cast_like(e.op("aten::eq", self, value), g)
    count = e.op("aten::sum", mask, _dims_arg(dim, len(shape)), True, None)
    return e.op("aten::mul", mask, e.op("aten::div", g, count))


# ---- sum / mean / prod

@op("aten::sum(Tensor self, *, ScalarType? dtype=None) -> Tensor")
def sum_(self, dtype=None):
    return _sum(self, None, False, _acc_dtype(self, dtype))


@op("aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor")
def sum_dim(self, dim, keepdim=False, dtype=None):
    return _sum(self, reduce_axes(dim, self.ndim), keepdim, _acc_dtype(self, dtype))


@derivative("aten::sum", "aten::sum.dim_IntList")
def sum_grad(e, grads, inputs, outputs):
    self = inputs[0]
    dim, keepdim = (inputs[1], inputs[2]) if len(inputs) == 4 else (None, False)
    g = unsqueeze_reduced(e, grads[0], e.shape(self), dim, keepdim)
    return [e.op("aten::expand", g, e.size(self))] + [None] * (len(inputs) - 1)


def _mean(self, dim, keepdim, dtype):
    if dtype is not None:
        self = self.astype(dtype_from_code(dtype))
    elif self.dtype.kind not in "fc":
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating point "
                           f"or complex dtype. Got: {scalar_type_name(self.dtype)}")
    axes = reduce_axes(dim, self.ndim)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(np.mean(self, axis=axes, keepdims=keepdim), dtype=self.dtype)


@op("aten::mean(Tensor self, *, ScalarType? dtype=None) -> Tensor")
def mean(self, dtype=None):
    return _mean(self, None, False, dtype)


@op("aten::mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor")
def mean_dim(self, dim, keepdim=False, dtype=None):
    return _mean(self, dim, keepdim, dtype)


@derivative("aten::mean", "aten::mean.dim")
def mean_grad(e, grads, inputs, outputs):
    if e.symbolic:
        return _mean_grad_at_run_time(e, grads[0], len(inputs))
    self = inputs[0]
    dim, keepdim = (inputs[1], inputs[2]) if len(inputs) == 4 else (None, False)
    shape = e.shape(self)
    g = unsqueeze_reduced(e, grads[0], shape, dim, keepdim)
    g = e.op("aten::expand", g, list(shape))
    return [e.op("aten::div", g, _reduced_count(shape, reduce_axes(dim, len(shape))))] + [None] * (len(inputs) - 1)


def _mean_grad_at_run_time(e, g, n_inputs):
    """symbolic_script's mean_0 / mean_1: the forward takes self's sizes (and element count)
    and dtype; the backward expands the gradient back (`AD_sum_backward` re-inserts the
    reduced dims) and divides by the count (`AD_safe_size`), whatever the shapes and the dims
    (the node's own, constant or not)."""
    self = e.node.inputs[0]
    with e.forward():
        size = e.op("aten::size", self)
        numel = e.op("aten::numel", self) if n_inputs == 2 else None
        scalar_type = e.dtype_code(self)
    if n_inputs == 2:
        return [e.op("aten::div", e.op("aten::to", e.op("aten::expand", g, size), scalar_type), numel), None]
    dim, keepdim = e.node.inputs[1], e.node.inputs[2]
    expanded = e.op("aten::to", e.call("AD_sum_backward", g, size, dim, keepdim), scalar_type)
    return [e.op("aten::div", expanded, e.call("AD_safe_size", size, dim, returns=INT)), None, None, None]


@op("aten::prod(Tensor self, *, ScalarType? dtype=None) -> Tensor")
def prod(self, dtype=None):
    return np.asarray(np.prod(self, dtype=_acc_dtype(self, dtype)))


@op("aten::prod.dim_int(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor")
def prod_dim(self, dim, keepdim=False, dtype=None):
    return np.asarray(np.prod(self, axis=reduce_axes(dim, self.ndim), keepdims=keepdim,
                              dtype=_acc_dtype(self, dtype)))


def _prod_others(e, x, d):
    """For each element along dim d, the product of the other elements (zero-safe)."""
    n = e.shape(x)[d]
    ones = e.ones_like(x)
    if n == 1:
        return ones
    one = e.op("aten::narrow", ones, d, 0, 1)
    left = e.op("aten::cat", [one, e.op("aten::narrow", e.op("aten::cumprod", x, d, None), d, 0, n - 1)], d)
    rx = e.op("aten::flip", x, [d])
    right = e.op("aten::cat", [one, e.op("aten::narrow", e.op("aten::cumprod", rx, d, None), d, 0, n - 1)], d)
    return e.op("aten::mul", left, e.op("aten::flip", right, [d]))


@derivative("aten::prod", "aten::prod.dim_int")
def prod_grad(e, grads, inputs, outputs):
    self = inputs[0]
    shape = e.shape(self)
    if len(inputs) == 2 or not shape:  # full reduction
        flat = e.op("aten::reshape", self, [-1])
        others = e.op("aten::reshape", _prod_others(e, flat, 0), list(shape))
        return [e.op("aten::mul", others, grads[0])] + [None] * (len(inputs) - 1)
    dim, keepdim = inputs[1], inputs[2]
    g = unsqueeze_reduced(e, grads[0], shape, dim, keepdim)
    return [e.op("aten::mul", _prod_others(e, self, dim % len(shape)), g), None, None, None]


# ---- max / min family

def _check_nonempty_dim(name, a, d):
    if a.ndim and a.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


@op("aten::max(Tensor self) -> Tensor")
def max_(self):
    if self.size == 0:
        raise RuntimeError("max(): Expected reduction dim to be specified for input.numel() == 0. "
                           "Specify the reduction dim with the 'dim' argument.")
    return np.asarray(np.max(self))


@op("aten::min(Tensor self) -> Tensor")
def min_(self):
    if self.size == 0:
        raise RuntimeError("min(): Expected reduction dim to be specified for input.numel() == 0. "
                           "Specify the reduction dim with the 'dim' argument.")
    return np.asarray(np.min(self))


@op("aten::median(Tensor self) -> Tensor")
def median(self):
    if self.size == 0:
        return np.asarray(np.nan, dtype=self.dtype) if self.dtype.kind == "f" else \
            np.zeros((), self.dtype)
    flat = self.reshape(-1)
    if self.dtype.kind == "f" and np.isnan(flat).any():
        return np.asarray(np.nan, dtype=self.dtype)
    return np.asarray(np.sort(flat, kind="stable")[(flat.size - 1) // 2])


@derivative("aten::max", "aten::min", "aten::median")
def full_select_grad(e, grads, inputs, outputs):
    return [evenly_distribute(e, grads[0], inputs[0], outputs[0], None, False)]


def _select_dim(self, dim, keepdim, name, pick):
    d = normalize_dim(dim, self.ndim)
    if self.ndim == 0:
        return self.copy(), np.zeros((), np.int64)
    _check_nonempty_dim(name, self, d)
    idx = pick(self, d)
    vals = np.take_along_axis(self, np.expand_dims(idx, d), d)
    if not keepdim:
        vals = np.squeeze(vals, d)
    else:
        idx = np.expand_dims(idx, d)
    return np.asarray(vals), np.asarray(idx, dtype=np.int64)


def _median_index(a, d):
    order = np.argsort(a, axis=d, kind="stable")
    idx = np.take(order, (a.shape[d] - 1) // 2, axis=d)
    if a.dtype.kind == "f":  # a NaN anywhere in the slice is the median
        has_nan = np.isnan(a).any(axis=d)
        idx = np.where(has_nan, np.argmax(np.isnan(a), axis=d), idx)
    return idx


@op("aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)")
def max_dim(self, dim, keepdim=False):
    return _select_dim(self, dim, keepdim, "max", lambda a, d: np.argmax(a, axis=d))


@op("aten::min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)")
def min_dim(self, dim, keepdim=False):
    return _select_dim(self, dim, keepdim, "min", lambda a, d: np.argmin(a, axis=d))


@op("aten::median.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)")
def median_dim(self, dim, keepdim=False):
    return _select_dim(self, dim, keepdim, "median", _median_index)


@op("aten::value_selecting_reduction_backward(Tensor grad, int dim, Tensor indices, SymInt[] sizes, bool keepdim) -> Tensor")
def value_selecting_reduction_backward(grad, dim, indices, sizes, keepdim):
    out = np.zeros(tuple(sizes), dtype=grad.dtype)
    if not sizes:
        out[...] = grad
        return out
    d = normalize_dim(dim, len(sizes))
    if not keepdim:
        grad, indices = np.expand_dims(grad, d), np.expand_dims(indices, d)
    np.put_along_axis(out, indices, grad, axis=d)
    return out


@derivative("aten::max.dim", "aten::min.dim", "aten::median.dim")
def select_dim_grad(e, grads, inputs, outputs):
    self, dim, keepdim = inputs
    if grads[0] is None:
        return [None, None, None]
    return [e.op("aten::value_selecting_reduction_backward", grads[0], dim, outputs[1], e.size(self), keepdim),
            None, None]


@op("aten::max.other(Tensor self, Tensor other) -> Tensor")
def max_other(self, other):
    dt = result_type(self, other)
    return np.maximum(self.astype(dt, copy=False), other.astype(dt, copy=False))


@op("aten::min.other(Tensor self, Tensor other) -> Tensor")
def min_other(self, other):
    dt = result_type(self, other)
    return np.minimum(self.astype(dt, copy=False), other.astype(dt, copy=False))


def _binary_select_grad(e, g, self, other, lose_self: str):
    # PyTorch: where(self == other, grad / 2, grad).masked_fill_(self < other, 0) for max
    lose_other = "aten::gt" if lose_self == "aten::lt" else "aten::lt"
    shared = e.op("aten::where", e.op("aten::eq", self, other), e.op("aten::div", g, 2), g)
    g_self = e.op("aten::masked_fill", shared, e.op(lose_self, self, other), 0)
    g_other = e.op("aten::masked_fill", shared, e.op(lose_other, self, other), 0)
    return [e.sum_to(g_self, self), e.sum_to(g_other, other)]


@derivative("aten::max.other")
def max_other_grad(e, grads, inputs, outputs):
    if e.symbolic:
        # symbolic_script: g * (self > other).type_as(g), summed to the sizes the forward took
        # (a tie gets no gradient there, where eager autograd splits it)
        g, a, b = grads[0], inputs[0], inputs[1]
        return [e.sum_to(e.op("aten::mul", g, e.op("aten::type_as", e.op("aten::gt", a, b), g)), a),
                e.sum_to(e.op("aten::mul", g, e.op("aten::type_as", e.op("aten::gt", b, a), g)), b)]
    return _binary_select_grad(e, grads[0], inputs[0], inputs[1], "aten::lt")


@derivative("aten::min.other")
def min_other_grad(e, grads, inputs, outputs):
    if e.symbolic:  # symbolic_script: as max, with the sizes taken in the backward
        g, a, b = grads[0], inputs[0], inputs[1]
        ga = e.op("aten::mul", g, e.op("aten::type_as", e.op("aten::lt", a, b), g))
        ga = e.op("aten::_grad_sum_to_size", ga, e.op("aten::size", a))
        gb = e.op("aten::mul", g, e.op("aten::type_as", e.op("aten::lt", b, a), g))
        gb = e.op("aten::_grad_sum_to_size", gb, e.op("aten::size", b))
        return [ga, gb]
    return _binary_select_grad(e, grads[0], inputs[0], inputs[1], "aten::gt")


def _amaxmin(self, dim, keepdim, name, fn):
    axes = reduce_axes(dim, self.ndim)
    for d in (range(self.ndim) if axes is None else axes):
        _check_nonempty_dim(name, self, d)
    return np.asarray(fn(self, axis=axes, keepdims=keepdim))


@op("aten::amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor")
def amax(self, dim=[], keepdim=False):
    return _amaxmin(self, dim, keepdim, "amax", np.max)


@op("aten::amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor")
def amin(self, dim=[], keepdim=False):
    return _amaxmin(self, dim, keepdim, "amin", np.min)


@derivative("aten::amax", "aten::amin")
def amaxmin_grad(e, grads, inputs, outputs):
    self, dim, keepdim = inputs
    return [evenly_distribute(e, grads[0], self, outputs[0], dim, keepdim), None, None]


def _arg(self, dim, keepdim, name, fn):
    if dim is None:
        if self.size == 0:
            raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
        idx = np.asarray(fn(self.reshape(-1)), dtype=np.int64)
        return idx.reshape((1,) * self.ndim) if keepdim else idx
    if self.ndim == 0:
        normalize_dim(dim, 0)
        return np.zeros((), np.int64)
    d = normalize_dim(dim, self.ndim)
    _check_nonempty_dim(name, self, d)
    return np.asarray(fn(self, axis=d, keepdims=keepdim), dtype=np.int64)


@op("aten::argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor")
def argmax(self, dim=None, keepdim=False):
    return _arg(self, dim, keepdim, "argmax", np.argmax)


@op("aten::argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor")
def argmin(self, dim=None, keepdim=False):
    return _arg(self, dim, keepdim, "argmin", np.argmin)


# ---- var / std

def _check_float(name, a):
    if a.dtype.kind not in "fc":
        raise RuntimeError(f"{name} only support floating point and complex dtypes")


def _variance(a, dim, correction, keepdim):
    _check_float("std and var", a)
    axes = reduce_axes(dim, a.ndim)
    n = _reduced_count(a.shape, axes)
    c = 1 if correction is None else correction
    with np.errstate(invalid="ignore", divide="ignore"):
        d = a - np.mean(a, axis=axes, keepdims=True)
        s = np.sum((d * np.conj(d)).real, axis=axes, keepdims=keepdim)
        var = np.asarray(s / max(0, n - c), dtype=a.real.dtype)
        mean = np.asarray(np.mean(a, axis=axes, keepdims=keepdim), dtype=a.dtype)
    return var, mean


def _var_args(inputs):
    """(dim, correction, keepdim) for any var/std overload's inputs."""
    if len(inputs) == 2:
        return None, 1 if inputs[1] else 0, False
    dim, third, keepdim = inputs[1], inputs[2], inputs[3]
    if isinstance(third, bool):
        return dim, 1 if third else 0, keepdim
    return dim, 1 if third is None else third, keepdim


_VAR = ("aten::{0}(Tensor self, bool unbiased=True) -> {1}",
        "aten::{0}.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> {1}",
        "aten::{0}.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> {1}")


def _var_impl(which):
    def impl(self, *args):
        dim, corr, keepdim = _var_args([self, *args])
        var, mean = _variance(self, dim, corr, keepdim)
        out = np.sqrt(var) if which.startswith("std") else var
        return (out, mean) if which.endswith("_mean") else out
    impl.__name__ = which
    return impl


for _which in ("var", "std", "var_mean", "std_mean"):
    _ret = "(Tensor, Tensor)" if _which.endswith("_mean") else "Tensor"
    op(*[t.format(_which, _ret) for t in _VAR])(_var_impl(_which))


def _var_backward(e, g, self, dim, correction, keepdim):
    shape = e.shape(self)
    n = _reduced_count(shape, reduce_axes(dim, len(shape)))
    g = unsqueeze_reduced(e, g, shape, dim, keepdim)
    centered = e.op("aten::sub", self, e.op("aten::mean", self, _dims_arg(dim, len(shape)), True, None))
    scale = 2.0 / (n - correction) if n > correction else math.inf
    return e.op("aten::mul", e.op("aten::mul", centered, g), scale)


def _std_to_var_grad(e, g, std):
    gv = e.op("aten::div", g, e.op("aten::mul", std, 2))
    return e.op("aten::masked_fill", gv, e.op("aten::eq", std, 0), 0)


def _mean_backward(e, g, self, dim, keepdim):
    shape = e.shape(self)
    n = _reduced_count(shape, reduce_axes(dim, len(shape)))
    g = e.op("aten::expand", unsqueeze_reduced(e, g, shape, dim, keepdim), list(shape))
    return e.op("aten::div", g, n)


def _var_grad_at_run_time(e, g, is_std, result):
    """symbolic_script's var_0/1/2 and std_0/1/2: std's gradient is first divided by
    `std_out * 2`; the unbiased flag becomes a correction (`AD_bool_to_int`), and the
    `AD_var_backward_*` helpers re-insert the reduced dims and count the reduced elements
    when the backward runs."""
    self, *args = e.node.inputs
    by_flag = len(args) == 1 or args[1].type == BOOL  # (self, unbiased) or .dim's (self, dim, unbiased, keepdim)
    correction = e.call("AD_bool_to_int", args[0 if len(args) == 1 else 1], returns=INT) if by_flag \
        else args[1]
    if is_std:
        g = e.op("aten::div", g, e.op("aten::mul", result, 2))
    if len(args) == 1:
        return [e.call("AD_var_backward_0", g, self, correction), None]
    return [e.call("AD_var_backward_2", g, self, args[0], correction, args[2]), None, None, None]


def _var_family_grad(is_std):
    def formula(e, grads, inputs, outputs):
        if e.symbolic and len(outputs) == 1:
            return _var_grad_at_run_time(e, grads[0], is_std, outputs[0])
        self = inputs[0]
        dim, corr, keepdim = _var_args(inputs)
        total = None
        if grads[0] is not None:
            g = _std_to_var_grad(e, grads[0], outputs[0]) if is_std else grads[0]
            total = _var_backward(e, g, self, dim, corr, keepdim)
        if len(grads) > 1 and grads[1] is not None:
            gm = _mean_backward(e, grads[1], self, dim, keepdim)
            total = gm if total is None else e.op("aten::add", total, gm)
        return [total] + [None] * (len(inputs) - 1)
    return formula


for _which in ("var", "std", "var_mean", "std_mean"):
    derivative(f"aten::{_which}", f"aten::{_which}.dim", f"aten::{_which}.correction")(
        _var_family_grad(_which.startswith("std")))
