"""PyTorch's activation backward ops (`aten::threshold_backward`, `aten::gelu_backward`, ...):
the heavy parts of the activation derivative formulas, registered under PyTorch's names and
schemas so formulas can emit them. They need no derivatives of their own here."""

from __future__ import annotations

import math

import numpy as np

from .activations import _sigmoid, check_approximate
from .pointwise import FLOAT_UNARY
from .eager_emitter import sum_to
from .registry import op


def _like(grad, out):
    """`out` as an array of the gradient's dtype."""
    return np.asarray(out, dtype=grad.dtype)


@op("aten::threshold_backward(Tensor grad_output, Tensor self, Scalar threshold) -> Tensor")
def threshold_backward(grad_output, self, threshold):
    """grad where self > threshold, else 0."""
    return np.asarray(np.where(self <= threshold, np.zeros((), grad_output.dtype), grad_output))


@op("aten::tanh_backward(Tensor grad_output, Tensor output) -> Tensor")
def tanh_backward(grad_output, output):
    return _like(grad_output, grad_output * (1 - output * output))


@op("aten::sigmoid_backward(Tensor grad_output, Tensor output) -> Tensor")
def sigmoid_backward(grad_output, output):
    return _like(grad_output, grad_output * (1 - output) * output)


@op('aten::gelu_backward(Tensor grad_output, Tensor self, *, str approximate="none") -> Tensor')
def gelu_backward(grad_output, self, approximate="none"):
    check_approximate(approximate)
    x = self
    if approximate == "tanh":
        k_beta = math.sqrt(2.0) * (2.0 / math.sqrt(math.pi)) * 0.5
        k_kappa = 0.044715
        inner = k_beta * (x + k_kappa * (x * x * x))
        t = np.tanh(inner)
        left = 0.5 * x
        right = 1 + t
        left_d = 0.5 * right
        right_d = left * (1 - t * t) * k_beta * (1 + 3 * k_kappa * x * x)
        return _like(grad_output, grad_output * (left_d + right_d))
    cdf = 0.5 * (1 + FLOAT_UNARY["erf"][0](x / math.sqrt(2.0)))
    pdf = np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)
    return _like(grad_output, grad_output * (cdf + x * pdf))


@op("aten::leaky_relu_backward(Tensor grad_output, Tensor self, Scalar negative_slope, bool self_is_result) -> Tensor")
def leaky_relu_backward(grad_output, self, negative_slope, self_is_result):
    return _like(grad_output, np.where(self > 0, grad_output, grad_output * negative_slope))


@op("aten::hardshrink_backward(Tensor grad_out, Tensor self, Scalar lambd) -> Tensor")
def hardshrink_backward(grad_out, self, lambd):
    """grad where |self| > lambd, 0 inside [-lambd, lambd]."""
    inside = (self >= -lambd) & (self <= lambd)
    return np.asarray(np.where(inside, np.zeros((), grad_out.dtype), grad_out))


@op("aten::hardtanh_backward(Tensor grad_output, Tensor self, Scalar min_val, Scalar max_val) -> Tensor")
def hardtanh_backward(grad_output, self, min_val, max_val):
    """grad strictly inside (min_val, max_val), 0 at and beyond the bounds."""
    inside = (self > min_val) & (self < max_val)
    return np.asarray(np.where(inside, grad_output, np.zeros((), grad_output.dtype)))


@op("aten::elu_backward(Tensor grad_output, Scalar alpha, Scalar scale, Scalar input_scale, bool is_result, Tensor self_or_result) -> Tensor")
def elu_backward(grad_output, alpha, scale, input_scale, is_result, self_or_result):
    v = self_or_result
    if is_result:
        neg = grad_output * input_scale * (v + alpha * scale)
    else:
        with np.errstate(over="ignore"):
            neg = grad_output * input_scale * alpha * scale * np.exp(np.minimum(v, 0) * input_scale)
    return _like(grad_output, np.where(v <= 0, neg, grad_output * scale))


@op("aten::silu_backward(Tensor grad_output, Tensor self) -> Tensor")
def silu_backward(grad_output, self):
    s = _sigmoid(self)
    return _like(grad_output, grad_output * s * (1 + self * (1 - s)))


@op("aten::softplus_backward(Tensor grad_output, Tensor self, Scalar beta, Scalar threshold) -> Tensor")
def softplus_backward(grad_output, self, beta, threshold):
    with np.errstate(over="ignore", invalid="ignore"):
        z = np.exp(self * beta)
        soft = grad_output * z / (z + 1)
    return _like(grad_output, np.where(self * beta > threshold, grad_output, soft))


@op("aten::hardsigmoid_backward(Tensor grad_output, Tensor self) -> Tensor")
def hardsigmoid_backward(grad_output, self):
    inside = (self > -3) & (self < 3)
    return _like(grad_output, np.where(inside, grad_output / 6, 0))


@op("aten::hardswish_backward(Tensor grad_output, Tensor self) -> Tensor")
def hardswish_backward(grad_output, self):
    mid = grad_output * (self / 3 + 0.5)
    return _like(grad_output, np.where(self <= -3, 0, np.where(self < 3, mid, grad_output)))


@op("aten::mish_backward(Tensor grad_output, Tensor self) -> Tensor")
def mish_backward(grad_output, self):
    s = _sigmoid(self)
    with np.errstate(over="ignore"):
        t = np.tanh(np.log1p(np.exp(self)))
    return _like(grad_output, grad_output * (t + self * s * (1 - t * t)))


@op("aten::log_sigmoid_backward(Tensor grad_output, Tensor self, Tensor buffer) -> Tensor")
def log_sigmoid_backward(grad_output, self, buffer):
    """PyTorch's CPU formula from the forward's buffer z = exp(-|x|)."""
    negative = self < 0
    max_deriv = np.where(negative, 1.0, 0.0)
    sign = np.where(negative, 1.0, -1.0)
    return _like(grad_output, (max_deriv - sign * (buffer / (1 + buffer))) * grad_output)


@op("aten::_prelu_kernel_backward(Tensor grad_output, Tensor self, Tensor weight) -> (Tensor, Tensor)")
def _prelu_kernel_backward(grad_output, self, weight):
    """(grad of self, grad of weight reduced to weight's broadcast shape)."""
    pos = self > 0
    gx = np.where(pos, grad_output, weight * grad_output)
    gw = sum_to(np.where(pos, 0, self * grad_output), weight.shape)
    return _like(grad_output, gx), np.asarray(gw, dtype=weight.dtype)


@op("aten::glu_backward(Tensor grad_output, Tensor self, int dim) -> Tensor")
def glu_backward(grad_output, self, dim):
    """d(a * sigmoid(b)): [grad * sigmoid(b), grad * a * sigmoid(b) * (1 - sigmoid(b))]."""
    from ._common import normalize_dim
    d = normalize_dim(dim, self.ndim)
    a, b = np.split(self, 2, axis=d)
    s = _sigmoid(b)
    return _like(grad_output, np.concatenate([grad_output * s, grad_output * a * s * (1 - s)], axis=d))
