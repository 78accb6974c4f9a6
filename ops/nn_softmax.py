"""Softmax and log-softmax (with the optional `dtype` cast and `half_to_float`), and their
`_*_backward_data` ops."""

from __future__ import annotations

import numpy as np

from .dtypes import code_of, dtype_from_code, scalar_type_name
from ._common import normalize_dim
from .registry import derivative, op


def _prepare(x, dim, dtype):
    if dtype is not None:
        x = x.astype(dtype_from_code(dtype))
    if x.dtype.kind not in "fc":
        raise RuntimeError(f'"softmax_lastdim_kernel_impl" not implemented for \'{scalar_type_name(x.dtype)}\'')
    return x, normalize_dim(dim, x.ndim)


def _softmax_np(x, dim, log):
    if x.ndim == 0:
        return np.zeros_like(x) if log else np.ones_like(x)
    m = np.max(x, axis=dim, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    z = x - m
    if log:
        with np.errstate(divide="ignore"):
            return z - np.log(np.exp(z).sum(axis=dim, keepdims=True))
    ez = np.exp(z)
    return ez / ez.sum(axis=dim, keepdims=True)


@op("aten::softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor")
def softmax(self, dim, dtype=None):
    x, d = _prepare(self, dim, dtype)
    return np.asarray(_softmax_np(x, d, False), order="C")


@op("aten::log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor")
def log_softmax(self, dim, dtype=None):
    x, d = _prepare(self, dim, dtype)
    return np.asarray(_softmax_np(x, d, True), order="C")


@op("aten::_softmax(Tensor self, int dim, bool half_to_float) -> Tensor")
def _softmax(self, dim, half_to_float):
    return softmax(self, dim, 6 if half_to_float and self.dtype == np.float16 else None)


@op("aten::_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor")
def _log_softmax(self, dim, half_to_float):
    return log_softmax(self, dim, 6 if half_to_float and self.dtype == np.float16 else None)


@op("aten::_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype) -> Tensor")
def softmax_backward_data(grad_output, output, dim, input_dtype):
    d = normalize_dim(dim, output.ndim)
    if output.ndim == 0:
        return np.zeros_like(grad_output).astype(dtype_from_code(input_dtype))
    gi = output * (grad_output - (grad_output * output).sum(axis=d, keepdims=True))
    return np.asarray(gi, dtype=dtype_from_code(input_dtype), order="C")


@op("aten::_log_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype) -> Tensor")
def log_softmax_backward_data(grad_output, output, dim, input_dtype):
    d = normalize_dim(dim, output.ndim)
    if output.ndim == 0:
        return np.zeros_like(grad_output).astype(dtype_from_code(input_dtype))
    gi = grad_output - np.exp(output) * grad_output.sum(axis=d, keepdims=True)
    return np.asarray(gi, dtype=dtype_from_code(input_dtype), order="C")


def dtype_code(e, x) -> int:
    """The ScalarType code of `x` (emitters that know types symbolically provide `dtype_code`)."""
    f = getattr(e, "dtype_code", None)
    return f(x) if f is not None else code_of(np.asarray(x).dtype)


@derivative("aten::softmax.int", "aten::_softmax")
def softmax_grad(e, grads, inputs, outputs):
    """PyTorch's (eager and symbolic_script): `_softmax_backward_data(grad, result, dim,
    self.dtype)`, which computes in the result's dtype and returns the input's."""
    x, dim = inputs[0], inputs[1]
    return [e.op("aten::_softmax_backward_data", grads[0], outputs[0], dim, dtype_code(e, x)), None, None]


@derivative("aten::log_softmax.int", "aten::_log_softmax")
def log_softmax_grad(e, grads, inputs, outputs):
    x, dim = inputs[0], inputs[1]
    return [e.op("aten::_log_softmax_backward_data", grads[0], outputs[0], dim, dtype_code(e, x)), None, None]
