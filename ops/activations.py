"""Activation functions (relu, sigmoid, gelu, elu, softplus, ...) with their in-place forms.

Each derivative calls the PyTorch backward op of the same name (`aten::threshold_backward`,
`aten::gelu_backward`, ...; see activations_backward.py), as derivatives.yaml does.
"""

from __future__ import annotations

import math

import numpy as np

from .pointwise import FLOAT_UNARY, _float_fn, not_implemented, store
from .registry import derivative, op
from .script_spelling import radd, rsub
from .types import NamedType

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _float_only(kernel, x):
    if x.dtype.kind not in "fc":
        raise not_implemented(kernel, x.dtype)
    return x


def _real_only(kernel, x):
    """Kernels PyTorch has no complex version of: never computed on a silently dropped
    imaginary part."""
    if x.dtype.kind != "f":
        raise not_implemented(kernel, x.dtype)
    return x


def _no_complex_clamp(x):
    if x.dtype.kind == "c":
        raise NotImplementedError("clamp is not supported for complex types")


def _inplace(fn):
    def impl(self, *args):
        return store(self, fn(self, *args))
    impl.__name__ = fn.__name__ + "_"
    return impl


def _sigmoid(x):
    if x.dtype.kind == "c":
        return np.asarray(1 / (1 + np.exp(-x)), dtype=x.dtype)
    with np.errstate(over="ignore"):
        e = np.exp(-np.abs(x))  # once: the two branches share it
        d = 1 + e
        return np.asarray(np.where(x >= 0, 1 / d, e / d), dtype=x.dtype)


# ---- relu / relu6 / threshold / hardtanh


@op("aten::relu(Tensor self) -> Tensor")
def relu(self):
    if self.dtype == np.bool_:
        raise RuntimeError("Boolean inputs not supported for relu")
    _no_complex_clamp(self)
    return np.asarray(np.maximum(self, np.zeros((), self.dtype)))


op("aten::relu_(Tensor(a!) self) -> Tensor(a!)")(_inplace(relu))


@derivative("aten::relu", "aten::relu_")
def relu_grad(e, grads, inputs, outputs):
    """symbolic_script's relu: g * (result > 0).type_as(result)."""
    result = outputs[0]
    return [e.op("aten::mul", grads[0], e.op("aten::type_as", e.op("aten::gt", result, 0), result))]


@op("aten::threshold(Tensor self, Scalar threshold, Scalar value) -> Tensor")
def threshold(self, threshold, value):
    """`value` where self <= threshold, else self (NaN stays NaN)."""
    return np.asarray(np.where(self <= threshold, np.asarray(value).astype(self.dtype), self),
                      dtype=self.dtype)


op("aten::threshold_(Tensor(a!) self, Scalar threshold, Scalar value) -> Tensor(a!)")(_inplace(threshold))


@derivative("aten::threshold", "aten::threshold_")
def threshold_grad(e, grads, inputs, outputs):
    if e.symbolic:  # symbolic_script: grad * (self >= threshold).type_as(self)
        x = inputs[0]
        return [e.op("aten::mul", grads[0], e.op("aten::type_as", e.op("aten::ge", x, inputs[1]), x)), None, None]
    return [e.op("aten::threshold_backward", grads[0], inputs[0], inputs[1]), None, None]


@op("aten::hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor")
def hardtanh(self, min_val=-1, max_val=1):
    if self.dtype == np.bool_:
        raise not_implemented("hardtanh_cpu", self.dtype)
    _no_complex_clamp(self)
    lo, hi = np.asarray(min_val).astype(self.dtype), np.asarray(max_val).astype(self.dtype)
    return np.asarray(np.minimum(np.maximum(self, lo), hi), dtype=self.dtype)


op("aten::hardtanh_(Tensor(a!) self, Scalar min_val=-1, Scalar max_val=1) -> Tensor(a!)")(_inplace(hardtanh))


@derivative("aten::hardtanh", "aten::hardtanh_")
def hardtanh_grad(e, grads, inputs, outputs):
    x, lo, hi = inputs
    if e.symbolic:  # symbolic_script: grad * ((self >= min_val) * (self <= max_val))
        mask = e.op("aten::mul", e.op("aten::ge", x, lo), e.op("aten::le", x, hi))
        return [e.op("aten::mul", grads[0], mask), None, None]
    return [e.op("aten::hardtanh_backward", grads[0], x, lo, hi), None, None]


@op("aten::hardshrink(Tensor self, Scalar lambd=0.5) -> Tensor")
def hardshrink(self, lambd=0.5):
    """x where |x| > lambd, else 0."""
    x = _real_only("hardshrink_cpu", self)
    return np.asarray(np.where((x >= -lambd) & (x <= lambd), np.zeros((), x.dtype), x), dtype=x.dtype)


@derivative("aten::hardshrink")
def hardshrink_grad(e, grads, inputs, outputs):
    x, lambd = inputs
    if e.symbolic:  # symbolic_script: mask = (self > lambd) | (self < -lambd); grad * mask
        lambd = e.node.inputs[1]
        mask = e.op("aten::__or__", e.op("aten::gt", x, lambd),
                    e.op("aten::lt", x, e.op("aten::neg", lambd, returns=NamedType("Scalar"))))
        return [e.op("aten::mul", grads[0], mask), None]
    return [e.op("aten::hardshrink_backward", grads[0], x, lambd), None]


@op("aten::relu6(Tensor self) -> Tensor")
def relu6(self):
    return hardtanh(self, 0, 6)


op("aten::relu6_(Tensor(a!) self) -> Tensor(a!)")(_inplace(relu6))


@derivative("aten::relu6", "aten::relu6_")
def relu6_grad(e, grads, inputs, outputs):
    if e.symbolic:  # symbolic_script: grad * ((result > 0) & (result < 6.0))
        y = outputs[0]
        return [e.op("aten::mul", grads[0], e.op("aten::__and__", e.op("aten::gt", y, 0), e.op("aten::lt", y, 6.0)))]
    return [e.op("aten::hardtanh_backward", grads[0], inputs[0], 0, 6)]


# ---- tanh / sigmoid


op("aten::tanh(Tensor self) -> Tensor")(_float_fn(np.tanh))
op("aten::tanh_(Tensor(a!) self) -> Tensor(a!)")(_inplace(_float_fn(np.tanh)))
op("aten::sigmoid(Tensor self) -> Tensor")(_float_fn(_sigmoid))
op("aten::sigmoid_(Tensor(a!) self) -> Tensor(a!)")(_inplace(_float_fn(_sigmoid)))


@derivative("aten::tanh", "aten::tanh_")
def tanh_grad(e, grads, inputs, outputs):
    y = outputs[0]
    if e.symbolic:  # symbolic_script: grad_output * (1 - output * output)
        return [e.op("aten::mul", grads[0], rsub(e, 1, e.op("aten::mul", y, y)))]
    return [e.op("aten::tanh_backward", grads[0], y)]


@derivative("aten::sigmoid", "aten::sigmoid_")
def sigmoid_grad(e, grads, inputs, outputs):
    y = outputs[0]
    if e.symbolic:  # symbolic_script: (1 - result) * result * grad_output
        return [e.op("aten::mul", e.op("aten::mul", rsub(e, 1, y), y), grads[0])]
    return [e.op("aten::sigmoid_backward", grads[0], y)]


# ---- gelu


def check_approximate(approximate):
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")


@op('aten::gelu(Tensor self, *, str approximate="none") -> Tensor')
def gelu(self, approximate="none"):
    check_approximate(approximate)
    x = _real_only("GeluKernelImpl", self)
    if approximate == "tanh":
        inner = math.sqrt(2 / math.pi) * (x + 0.044715 * (x * x * x))  # as PyTorch (pow is ~40x slower)
        out = 0.5 * x * (1 + np.tanh(inner))
    else:
        out = 0.5 * x * (1 + FLOAT_UNARY["erf"][0](x / math.sqrt(2)))
    return np.asarray(out, dtype=x.dtype)


op('aten::gelu_(Tensor(a!) self, *, str approximate="none") -> Tensor(a!)')(_inplace(gelu))


@derivative("aten::gelu", "aten::gelu_")
def gelu_grad(e, grads, inputs, outputs):
    return [e.op("aten::gelu_backward", grads[0], inputs[0], inputs[1]), None]


# ---- leaky_relu / elu family


@op("aten::leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor")
def leaky_relu(self, negative_slope=0.01):
    x = _real_only("leaky_relu_cpu", self)
    return np.asarray(np.where(x > 0, x, x * negative_slope), dtype=x.dtype)


op("aten::leaky_relu_(Tensor(a!) self, Scalar negative_slope=0.01) -> Tensor(a!)")(_inplace(leaky_relu))


@derivative("aten::leaky_relu", "aten::leaky_relu_")
def leaky_relu_grad(e, grads, inputs, outputs):
    if e.symbolic:  # symbolic_script: grad * where(self > 0, 1.0, negative_slope).type_as(result)
        slope = e.op("aten::where", e.op("aten::gt", inputs[0], 0), 1.0, inputs[1])
        return [e.op("aten::mul", grads[0], e.op("aten::type_as", slope, outputs[0])), None]
    return [e.op("aten::leaky_relu_backward", grads[0], inputs[0], inputs[1], False), None]


@op("aten::elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor")
def elu(self, alpha=1, scale=1, input_scale=1):
    x = _real_only("elu_cpu", self)
    with np.errstate(over="ignore"):
        neg = scale * alpha * np.expm1(np.minimum(x, 0) * input_scale)
    return np.asarray(np.where(x > 0, x * scale, neg), dtype=x.dtype)


op("aten::elu_(Tensor(a!) self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor(a!)")(_inplace(elu))


@derivative("aten::elu", "aten::elu_")
def elu_grad(e, grads, inputs, outputs):
    x, alpha, scale, input_scale = inputs
    return [e.op("aten::elu_backward", grads[0], alpha, scale, input_scale, False, x), None, None, None]


@op("aten::selu(Tensor self) -> Tensor")
def selu(self):
    return elu(self, SELU_ALPHA, SELU_SCALE, 1)


op("aten::selu_(Tensor(a!) self) -> Tensor(a!)")(_inplace(selu))


@derivative("aten::selu", "aten::selu_")
def selu_grad(e, grads, inputs, outputs):
    return [e.op("aten::elu_backward", grads[0], SELU_ALPHA, SELU_SCALE, 1, False, inputs[0])]


@op("aten::celu(Tensor self, Scalar alpha=1.) -> Tensor")
def celu(self, alpha=1.0):
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    return elu(self, alpha, 1, 1.0 / alpha)


op("aten::celu_(Tensor(a!) self, Scalar alpha=1.) -> Tensor(a!)")(_inplace(celu))


@derivative("aten::celu", "aten::celu_")
def celu_grad(e, grads, inputs, outputs):
    x, alpha = inputs
    inv = e.op("aten::div", 1.0, alpha)
    return [e.op("aten::elu_backward", grads[0], alpha, 1, inv, False, x), None]


# ---- smooth activations


@op("aten::silu(Tensor self) -> Tensor")
def silu(self):
    x = _float_only("silu_cpu", self)
    return np.asarray(x * _sigmoid(x), dtype=x.dtype)


op("aten::silu_(Tensor(a!) self) -> Tensor(a!)")(_inplace(silu))


@derivative("aten::silu", "aten::silu_")
def silu_grad(e, grads, inputs, outputs):
    if e.symbolic:  # symbolic_script: grad * (sigmoid(x) * (1 + x * (1 - sigmoid(x))))
        x = inputs[0]
        s = e.op("aten::sigmoid", x)
        return [e.op("aten::mul", grads[0], e.op("aten::mul", s, radd(e, 1, e.op("aten::mul", x, rsub(e, 1, s)))))]
    return [e.op("aten::silu_backward", grads[0], inputs[0])]


@op("aten::softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor")
def softplus(self, beta=1, threshold=20):
    """log(1 + exp(beta x)) / beta, and x itself where beta x > threshold."""
    x = _float_only("softplus_cpu", self)
    with np.errstate(over="ignore"):
        soft = np.log1p(np.exp(x * beta)) / beta
    return np.asarray(np.where(x * beta > threshold, x, soft), dtype=x.dtype)


@derivative("aten::softplus")
def softplus_grad(e, grads, inputs, outputs):
    x, beta, threshold = inputs
    if e.symbolic:
        # symbolic_script: z = exp(result * beta); where(result * beta > threshold, g, g * (z - 1.) / z)
        g, result = grads[0], outputs[0]
        z = e.op("aten::exp", e.op("aten::mul", result, beta))
        return [e.op("aten::where", e.op("aten::gt", e.op("aten::mul", result, beta), threshold), g,
                     e.op("aten::div", e.op("aten::mul", g, e.op("aten::sub", z, 1.)), z)), None, None]
    return [e.op("aten::softplus_backward", grads[0], x, beta, threshold), None, None]


@op("aten::hardsigmoid(Tensor self) -> Tensor")
def hardsigmoid(self):
    x = _float_only("hardsigmoid_cpu", self)
    return np.asarray(np.minimum(np.maximum(x + 3, 0), 6) / 6, dtype=x.dtype)


op("aten::hardsigmoid_(Tensor(a!) self) -> Tensor(a!)")(_inplace(hardsigmoid))


@derivative("aten::hardsigmoid", "aten::hardsigmoid_")
def hardsigmoid_grad(e, grads, inputs, outputs):
    if e.symbolic:
        # symbolic_script: m = (x > -3.) & (x < 3.); where(m, grad * (1.0 / 6.0), m.type_as(x))
        x = inputs[0]
        m = e.op("aten::__and__", e.op("aten::gt", x, -3.), e.op("aten::lt", x, 3.))
        lhs = e.op("aten::mul", grads[0], e.op("aten::div", 1.0, 6.0))
        return [e.op("aten::where", m, lhs, e.op("aten::type_as", m, x))]
    return [e.op("aten::hardsigmoid_backward", grads[0], inputs[0])]


@op("aten::hardswish(Tensor self) -> Tensor")
def hardswish(self):
    x = _float_only("hardswish_cpu", self)
    return np.asarray(x * np.minimum(np.maximum(x + 3, 0), 6) / 6, dtype=x.dtype)


op("aten::hardswish_(Tensor(a!) self) -> Tensor(a!)")(_inplace(hardswish))


@derivative("aten::hardswish", "aten::hardswish_")
def hardswish_grad(e, grads, inputs, outputs):
    if e.symbolic:
        # symbolic_script: m = (x >= 3.).type_as(result);
        # m = where((x > -3.) & (x < 3.), x / 3. + .5, m); grad * m
        x = inputs[0]
        m = e.op("aten::type_as", e.op("aten::ge", x, 3.), outputs[0])
        inner = e.op("aten::__and__", e.op("aten::gt", x, -3.), e.op("aten::lt", x, 3.))
        m = e.op("aten::where", inner, e.op("aten::add", e.op("aten::div", x, 3.), .5), m)
        return [e.op("aten::mul", grads[0], m)]
    return [e.op("aten::hardswish_backward", grads[0], inputs[0])]


@op("aten::mish(Tensor self) -> Tensor")
def mish(self):
    x = _float_only("mish_cpu", self)
    return np.asarray(x * np.tanh(softplus(x)), dtype=x.dtype)


op("aten::mish_(Tensor(a!) self) -> Tensor(a!)")(_inplace(mish))


@derivative("aten::mish", "aten::mish_")
def mish_grad(e, grads, inputs, outputs):
    return [e.op("aten::mish_backward", grads[0], inputs[0])]


# ---- log_sigmoid


@op("aten::log_sigmoid_forward(Tensor self) -> (Tensor output, Tensor buffer)")
def log_sigmoid_forward(self):
    """log(sigmoid(x)) computed stably, and the buffer exp(-|x|) the backward reuses."""
    x = _float_only("log_sigmoid_cpu", self)
    z = np.exp(-np.abs(x))
    return np.asarray(np.minimum(x, 0) - np.log1p(z), dtype=x.dtype), np.asarray(z, dtype=x.dtype)


@op("aten::log_sigmoid(Tensor self) -> Tensor")
def log_sigmoid(self):
    return log_sigmoid_forward(self)[0]


@derivative("aten::log_sigmoid_forward")
def log_sigmoid_forward_grad(e, grads, inputs, outputs):
    x, buffer = inputs[0], outputs[1]
    g = grads[0] if grads[0] is not None else e.zeros_like(outputs[0])
    gx = e.op("aten::log_sigmoid_backward", g, x, buffer)
    if grads[1] is not None:  # PyTorch treats the buffer as non-differentiable; be exact anyway
        d_buffer = e.op("aten::mul", e.op("aten::neg", e.op("aten::sign", x)), buffer)
        gx = e.op("aten::add", gx, e.op("aten::mul", grads[1], d_buffer))
    return [gx]


@derivative("aten::log_sigmoid")
def log_sigmoid_grad(e, grads, inputs, outputs):
    # d/dx log(sigmoid(x)) = sigmoid(-x)
    return [e.op("aten::mul", grads[0], e.op("aten::sigmoid", e.op("aten::neg", inputs[0])))]


# ---- prelu / glu


def _prelu_weight(self, weight):
    """The weight shaped to broadcast along the channel dim (dim 1, none for inputs < 2-d)."""
    channels = self.shape[1] if self.ndim >= 2 else 1
    if weight.size != 1 and weight.size != channels:
        raise RuntimeError("Mismatch of parameter numbers and input channel size. Found parameter "
                           f"numbers = {weight.size} and channel size = {channels}.")
    if weight.size == 1 or self.ndim < 2:
        return weight.reshape(()) if weight.size == 1 else weight
    return weight.reshape((1, channels) + (1,) * (self.ndim - 2))


@op("aten::prelu(Tensor self, Tensor weight) -> Tensor")
def prelu(self, weight):
    x = _float_only("prelu_cpu", self)
    return _prelu_kernel(x, _prelu_weight(x, weight))


@op("aten::_prelu_kernel(Tensor self, Tensor weight) -> Tensor")
def _prelu_kernel(self, weight):
    dt = np.result_type(self.dtype, weight.dtype)
    return np.asarray(np.where(self > 0, self, weight * self), dtype=dt)


@derivative("aten::_prelu_kernel")
def _prelu_kernel_grad(e, grads, inputs, outputs):
    gx, gw = e.op("aten::_prelu_kernel_backward", grads[0], inputs[0], inputs[1])
    return [gx, gw]


@derivative("aten::prelu")
def prelu_grad(e, grads, inputs, outputs):
    x, w = inputs
    shape_x, shape_w = e.shape(x), e.shape(w)
    if len(shape_x) < 2 or math.prod(shape_w) == 1:
        gx, gw = e.op("aten::_prelu_kernel_backward", grads[0], x, w)
        return [gx, gw]
    # channel weights: broadcast along dim 1, as aten::prelu does before calling the kernel
    wb = e.op("aten::reshape", w, [1, shape_w[0]] + [1] * (len(shape_x) - 2))
    gx, gw = e.op("aten::_prelu_kernel_backward", grads[0], x, wb)
    return [gx, e.op("aten::reshape", gw, list(shape_w))]


@op("aten::glu(Tensor self, int dim=-1) -> Tensor")
def glu(self, dim=-1):
    """First half of `dim` times the sigmoid of the second half."""
    from ._common import normalize_dim
    x = _float_only("glu_cpu", self)
    if x.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = normalize_dim(dim, x.ndim)
    if x.shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {x.shape[d]}")
    a, b = np.split(x, 2, axis=d)
    return np.asarray(a * _sigmoid(b), dtype=x.dtype)


@derivative("aten::glu")
def glu_grad(e, grads, inputs, outputs):
    return [e.op("aten::glu_backward", grads[0], inputs[0], inputs[1]), None]

