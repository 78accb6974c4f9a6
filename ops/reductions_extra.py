"""More reductions: vector norms (norm, linalg_vector_norm, frobenius_norm), logsumexp,
cumsum/cumprod, all/any and count_nonzero."""

from __future__ import annotations

import math

import numpy as np

from .dtypes import DEFAULT_FLOAT, dtype_from_code
from ._common import normalize_dim
from .dtypes import scalar_type_name
from .reductions import _acc_dtype, _dims_arg, reduce_axes, unsqueeze_reduced
from .registry import derivative, op


# ---- norms

def vector_norm(a, p, dim, keepdim, dtype=None, name="linalg.vector_norm"):
    """The p-norm of `a` over `dim` (None/[] = all), computed in `dtype` if given."""
    if dtype is not None:
        a = a.astype(dtype_from_code(dtype))
    if a.dtype.kind not in "fc":
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {scalar_type_name(a.dtype)}")
    p = 2 if p is None else p
    axes = reduce_axes(dim, a.ndim)
    x = np.abs(a)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        if p == math.inf:
            r = np.max(x, axis=axes, keepdims=keepdim, initial=0)
        elif p == -math.inf:
            r = np.min(x, axis=axes, keepdims=keepdim)
        elif p == 0:
            r = np.sum(x != 0, axis=axes, keepdims=keepdim)
        elif p == 1:
            r = np.sum(x, axis=axes, keepdims=keepdim)
        elif p == 2:
            r = np.sqrt(np.sum(x * x, axis=axes, keepdims=keepdim))
        else:
            r = np.sum(x ** p, axis=axes, keepdims=keepdim) ** (1.0 / p)
    return np.asarray(r, dtype=x.dtype)


@op("aten::norm.Scalar(Tensor self, Scalar p=2) -> Tensor")
def norm_scalar(self, p=2):
    return vector_norm(self, p, None, False)


@op("aten::norm.ScalarOpt_dim(Tensor self, Scalar? p, int[1] dim, bool keepdim=False) -> Tensor")
def norm_dim(self, p, dim, keepdim=False):
    return vector_norm(self, p, dim, keepdim)


@op("aten::norm.ScalarOpt_dim_dtype(Tensor self, Scalar? p, int[1] dim, bool keepdim, *, ScalarType dtype) -> Tensor")
def norm_dim_dtype(self, p, dim, keepdim, dtype):
    return vector_norm(self, p, dim, keepdim, dtype)


@op("aten::norm.ScalarOpt_dtype(Tensor self, Scalar? p, *, ScalarType dtype) -> Tensor")
def norm_dtype(self, p, dtype):
    return vector_norm(self, p, None, False, dtype)


@op("aten::linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor")
def linalg_vector_norm(self, ord=2, dim=None, keepdim=False, dtype=None):
    return vector_norm(self, ord, dim, keepdim, dtype)


@op("aten::frobenius_norm.dim(Tensor self, int[1] dim, bool keepdim=False) -> Tensor")
def frobenius_norm(self, dim, keepdim=False):
    return vector_norm(self, 2, dim, keepdim, name="frobenius_norm")


def norm_backward(e, g, self, p, dim, keepdim, norm):
    """PyTorch's norm_backward for real inputs (where sgn(x) == sign(x))."""
    p = 2 if p is None else p
    shape = e.shape(self)
    g = unsqueeze_reduced(e, g, shape, dim, keepdim)
    norm = unsqueeze_reduced(e, norm, shape, dim, keepdim)
    if p == 0:
        return e.zeros_like(self)
    if p == 1:
        return e.op("aten::mul", e.op("aten::sign", self), g)
    if p == 2:
        scaled = e.op("aten::div", g, norm)
        return e.op("aten::mul", self, e.op("aten::masked_fill", scaled, e.op("aten::eq", norm, 0), 0))
    if math.isinf(p):
        absx = e.op("aten::abs", self)
        mask = e.cast_like(e.op("aten::eq", absx, norm), g)
        count = e.op("aten::sum", mask, _dims_arg(dim, len(shape)), True, None)
        signed = e.op("aten::mul", e.op("aten::sign", self), mask)
        return e.op("aten::mul", signed, e.op("aten::div", g, count))
    if p < 1:
        scaled = e.op("aten::mul", e.op("aten::sign", self), e.op("aten::pow", e.op("aten::abs", self), p - 1))
        scaled = e.op("aten::masked_fill", scaled, e.op("aten::eq", self, 0), 0)
        return e.op("aten::mul", e.op("aten::mul", scaled, g), e.op("aten::pow", norm, 1 - p))
    scaled = e.op("aten::mul", self, e.op("aten::pow", e.op("aten::abs", self), p - 2))
    scale_v = e.op("aten::div", g, e.op("aten::pow", norm, p - 1))
    scale_v = e.op("aten::masked_fill", scale_v, e.op("aten::eq", norm, 0), 0)
    return e.op("aten::mul", scaled, scale_v)


@derivative("aten::norm.Scalar")
def norm_scalar_grad(e, grads, inputs, outputs):
    return [norm_backward(e, grads[0], inputs[0], inputs[1], None, False, outputs[0]), None]


@derivative("aten::norm.ScalarOpt_dim", "aten::norm.ScalarOpt_dim_dtype")
def norm_dim_grad(e, grads, inputs, outputs):
    g = norm_backward(e, grads[0], inputs[0], inputs[1], inputs[2], inputs[3], outputs[0])
    return [g] + [None] * (len(inputs) - 1)


@derivative("aten::norm.ScalarOpt_dtype")
def norm_dtype_grad(e, grads, inputs, outputs):
    return [norm_backward(e, grads[0], inputs[0], inputs[1], None, False, outputs[0]), None, None]


@derivative("aten::linalg_vector_norm")
def linalg_vector_norm_grad(e, grads, inputs, outputs):
    self, ord, dim, keepdim, _ = inputs
    return [norm_backward(e, grads[0], self, ord, dim, keepdim, outputs[0]), None, None, None, None]


@derivative("aten::frobenius_norm.dim")
def frobenius_norm_grad(e, grads, inputs, outputs):
    return [norm_backward(e, grads[0], inputs[0], 2, inputs[1], inputs[2], outputs[0]), None, None]


# ---- logsumexp

@op("aten::logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor")
def logsumexp(self, dim, keepdim=False):
    a = self if self.dtype.kind in "fc" else self.astype(DEFAULT_FLOAT)
    axes = reduce_axes(dim, a.ndim)
    if a.size == 0:
        return np.asarray(np.log(np.sum(np.exp(a), axis=axes, keepdims=keepdim)), dtype=a.dtype)
    m = np.max(a, axis=axes, keepdims=True)
    m = np.where(np.isinf(m), 0, m)
    with np.errstate(divide="ignore"):
        s = np.log(np.sum(np.exp(a - m), axis=axes, keepdims=True)) + m
    return np.asarray(s if keepdim else (s.reshape(()) if axes is None else np.squeeze(s, axes)), dtype=a.dtype)


@derivative("aten::logsumexp")
def logsumexp_grad(e, grads, inputs, outputs):
    if e.symbolic:  # symbolic_script: AD_logsumexp_backward(grad, self, result, dim, keepdim)
        return [e.call("AD_logsumexp_backward", grads[0], *e.node.inputs[:1], outputs[0],
                       *e.node.inputs[1:3]), None, None]
    self, dim, keepdim = inputs
    shape = e.shape(self)
    g = unsqueeze_reduced(e, grads[0], shape, dim, keepdim)
    out = unsqueeze_reduced(e, outputs[0], shape, dim, keepdim)
    return [e.op("aten::mul", g, e.op("aten::exp", e.op("aten::sub", self, out))), None, None]


# ---- cumulative ops

def _cum(fn, self, dim, dtype):
    d = normalize_dim(dim, self.ndim)
    dt = _acc_dtype(self, dtype)
    if self.ndim == 0:
        return self.astype(dt)
    return np.asarray(fn(self.astype(dt, copy=False), axis=d), dtype=dt)


@op("aten::cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor")
def cumsum(self, dim, dtype=None):
    return _cum(np.cumsum, self, dim, dtype)


@derivative("aten::cumsum")
def cumsum_grad(e, grads, inputs, outputs):
    self, dim, _ = inputs
    if not e.shape(self):
        return [grads[0], None, None]
    flipped = e.op("aten::flip", grads[0], [dim])
    return [e.op("aten::flip", e.op("aten::cumsum", flipped, dim, None), [dim]), None, None]


@op("aten::cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor")
def cumprod(self, dim, dtype=None):
    return _cum(np.cumprod, self, dim, dtype)


@op("aten::cumprod_backward(Tensor grad, Tensor input, int dim, Tensor output) -> Tensor")
def cumprod_backward(grad, input, dim, output):
    """d/dx_i of sum_k grad_k * prod_{j<=k} x_j, computed without dividing (zero-safe)."""
    if input.ndim == 0:
        return grad.copy()
    d = normalize_dim(dim, input.ndim)
    x = np.moveaxis(input, d, -1)
    g = np.moveaxis(grad, d, -1).astype(input.dtype, copy=False)
    n = x.shape[-1]
    out = np.empty_like(x)
    for i in range(n):
        others = x.copy()
        others[..., i] = 1
        excl = np.cumprod(others, axis=-1)
        out[..., i] = np.sum(g[..., i:] * excl[..., i:], axis=-1)
    return np.ascontiguousarray(np.moveaxis(out, -1, d))


@derivative("aten::cumprod")
def cumprod_grad(e, grads, inputs, outputs):
    self, dim, _ = inputs
    return [e.op("aten::cumprod_backward", grads[0], self, dim, outputs[0]), None, None]


# ---- logical reductions and counting

def _logical(fn, self, dim, keepdim):
    """all/any; unlike sum, an empty dim list reduces nothing."""
    if isinstance(dim, list) and not dim:
        r = np.asarray(self != 0)
    else:
        r = np.asarray(fn(self, axis=reduce_axes(dim, self.ndim), keepdims=keepdim))
    return r.astype(np.uint8) if self.dtype == np.uint8 else r


@op("aten::all(Tensor self) -> Tensor")
def all_(self):
    return _logical(np.all, self, None, False)


@op("aten::all.dim(Tensor self, int dim, bool keepdim=False) -> Tensor",
    "aten::all.dims(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor")
def all_dim(self, dim=None, keepdim=False):
    return _logical(np.all, self, dim, keepdim)


@op("aten::any(Tensor self) -> Tensor")
def any_(self):
    return _logical(np.any, self, None, False)


@op("aten::any.dim(Tensor self, int dim, bool keepdim=False) -> Tensor",
    "aten::any.dims(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor")
def any_dim(self, dim=None, keepdim=False):
    return _logical(np.any, self, dim, keepdim)


@op("aten::count_nonzero(Tensor self, int? dim=None) -> Tensor",
    "aten::count_nonzero.dim_IntList(Tensor self, int[] dim) -> Tensor")
def count_nonzero(self, dim=None):
    axes = reduce_axes(dim, self.ndim)
    return np.asarray(np.count_nonzero(self, axis=axes), dtype=np.int64)
