"""Native lowering rules of the pointwise ops: arithmetic, unary math, comparisons and
selection, casts, activations and the backward ops the derivative formulas emit."""

from __future__ import annotations

import math

import numpy as np

from . import activations, activations_backward, arith, conversion, pointwise  # noqa: F401
from . import pointwise_binary, pointwise_compare, pointwise_select  # noqa: F401
from .lowering_common import NotLowerable
from .registry import lowering

SQRT1_2 = 0.70710678118654752440
SQRT_2_PI = math.sqrt(2.0 / math.pi)
INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


# ---- arithmetic

@lowering("aten::add.Tensor", "aten::add.Scalar")
def _add(e, x, y, alpha=1):
    return e.add(x, y if alpha == 1 else e.mul(y, alpha))


@lowering("aten::sub.Tensor", "aten::sub.Scalar")
def _sub(e, x, y, alpha=1):
    return e.sub(x, y if alpha == 1 else e.mul(y, alpha))


@lowering("aten::rsub.Tensor", "aten::rsub.Scalar")
def _rsub(e, x, y, alpha=1):
    return e.sub(y, x if alpha == 1 else e.mul(x, alpha))


@lowering("aten::mul.Tensor", "aten::mul.Scalar")
def _mul(e, x, y):
    return e.mul(x, y)


@lowering("aten::div.Tensor", "aten::div.Scalar", "aten::true_divide.Tensor",
          "aten::true_divide.Scalar")
def _div(e, x, y):
    return e.div(x, y)


@lowering("aten::div.Tensor_mode", "aten::div.Scalar_mode")
def _div_mode(e, x, y, rounding_mode=None):
    if rounding_mode is None:
        return e.div(x, y)
    if rounding_mode == "trunc":
        return e.trunc_divide(x, y)
    if rounding_mode == "floor":
        return e.floor_divide(x, y)
    raise NotLowerable(f"rounding mode {rounding_mode!r}")


@lowering("aten::floor_divide", "aten::floor_divide.Scalar")
def _floor_divide(e, x, y):
    return e.floor_divide(x, y)


@lowering("aten::remainder.Tensor", "aten::remainder.Scalar", "aten::remainder.Scalar_Tensor")
def _remainder(e, x, y):
    return e.remainder(x, y)


@lowering("aten::fmod.Tensor", "aten::fmod.Scalar")
def _fmod(e, x, y):
    return e.fmod(x, y)


for _name in ("and", "or", "xor"):
    lowering(f"aten::__{_name}__.Tensor", f"aten::__{_name}__.Scalar")(
        (lambda n: lambda e, x, y: e.bitwise(n, x, y))(_name))


# unary ops whose rule is the emitter method of the same name
for _name in ("neg", "abs", "sign", "floor", "ceil", "trunc", "round", "logical_not", "isnan",
              "isinf", "isfinite", "bitwise_not"):
    lowering(f"aten::{_name}")(lambda e, x, _method=_name: getattr(e, _method)(x))


@lowering("aten::maximum")
def _maximum(e, x, y):
    return e.maximum(x, y)


@lowering("aten::minimum")
def _minimum(e, x, y):
    return e.minimum(x, y)


@lowering("aten::addcmul")
def _addcmul(e, x, t1, t2, value=1):
    return e.add(x, e.mul(e.mul(t1, t2), value))


@lowering("aten::addcdiv")
def _addcdiv(e, x, t1, t2, value=1):
    return e.add(x, e.mul(e.div(t1, t2), value))


@lowering("aten::lerp.Scalar", "aten::lerp.Tensor")
def _lerp(e, x, end, weight):
    return e.add(x, e.mul(weight, e.sub(end, x)))


@lowering("aten::square")
def _square(e, x):
    return e.mul(x, x)


@lowering("aten::reciprocal")
def _reciprocal(e, x):
    return e.div(1.0, e.to_float(x))


# ---- unary math

def _math(name):
    return lambda e, x: e.call(name, e.to_float(x))


for _name in ("exp", "expm1", "log", "log1p", "log2", "log10", "sin", "cos", "tan", "atan",
              "sinh", "cosh", "asin", "acos", "erf", "erfc", "tanh", "sigmoid"):
    lowering(f"aten::{_name}")(_math(_name))


@lowering("aten::sqrt")
def _sqrt(e, x):
    return e.sqrt(e.to_float(x))


@lowering("aten::rsqrt")
def _rsqrt(e, x):
    return e.div(1.0, e.sqrt(e.to_float(x)))


@lowering("aten::frac")
def _frac(e, x):
    return e.sub(x, e.trunc(x))


@lowering("aten::pow.Tensor_Scalar")
def _pow_scalar(e, x, exponent):
    if exponent == 2:
        return e.mul(x, x)
    if exponent == 1:
        return e.add(x, 0)
    if exponent == 0.5 and e.is_float(x):
        return e.sqrt(x)
    if isinstance(exponent, float) or e.is_float(x):
        return e.call("pow", e.to_float(x), exponent)
    if x.dtype == np.bool_ or not isinstance(exponent, int) or exponent < 0:
        raise NotLowerable("powers of bool, negative or run-time integer powers stay interpreted")
    return _integer_power(e, x, exponent)


def _integer_power(e, x, n: int):
    """x ** n for an integer tensor and a constant n >= 0, by repeated squaring (wrapping on
    overflow as PyTorch's integer kernels do)."""
    result, square = None, e.value(x)
    while True:
        if n & 1:
            result = square if result is None else e.mul(result, square)
        n >>= 1
        if not n:
            return result if result is not None else e.add(e.mul(x, 0), 1)
        square = e.mul(square, square)


@lowering("aten::pow.Tensor_Tensor")
def _pow_tensor(e, x, y):
    if not (e.is_float(x) or e.is_float(y)):
        raise NotLowerable("integer powers stay interpreted")
    return e.call("pow", x, y)


@lowering("aten::pow.Scalar")
def _pow_base(e, base, y):
    """`base ** y` for a number base (symbolic_script's pow_2 backward recomputes it)."""
    if not e.is_float(y):
        raise NotLowerable("integer powers stay interpreted")
    return e.call("pow", e.to_float(base), y)


# ---- comparisons and selection

for _name in ("eq", "ne", "lt", "le", "gt", "ge"):
    lowering(f"aten::{_name}.Tensor", f"aten::{_name}.Scalar")(
        (lambda n: lambda e, x, y: getattr(e, n)(x, y))(_name))


@lowering("aten::logical_and")
def _logical_and(e, x, y):
    return e.logical_and(x, y)


@lowering("aten::logical_or")
def _logical_or(e, x, y):
    return e.logical_or(x, y)


@lowering("aten::logical_xor")
def _logical_xor(e, x, y):
    return e.logical_xor(x, y)


@lowering("aten::where.self", "aten::where.ScalarOther", "aten::where.ScalarSelf",
          "aten::where.Scalar")
def _where(e, cond, x, y):
    return e.where(cond, x, y)


@lowering("aten::masked_fill.Scalar", "aten::masked_fill.Tensor")
def _masked_fill(e, x, mask, value):
    return e.where(mask, e.cast(value, x.dtype) if not hasattr(value, "dtype") else value, x)


@lowering("aten::clamp", "aten::clip", "aten::clamp.Tensor", "aten::clip.Tensor")
def _clamp(e, x, lo=None, hi=None):
    if lo is None and hi is None:
        raise NotLowerable("clamp without bounds")
    if lo is not None:
        x = e.maximum(x, lo)
    if hi is not None:
        x = e.minimum(x, hi)
    return x


@lowering("aten::nan_to_num")
def _nan_to_num(e, x, nan=None, posinf=None, neginf=None):
    if not e.is_float(x):
        return e.value(x)
    info = np.finfo(x.dtype)
    x = e.where(e.isnan(x), e.cast(0.0 if nan is None else nan, x.dtype), x)
    x = e.where(e.eq(x, math.inf), e.cast(float(info.max) if posinf is None else posinf, x.dtype), x)
    return e.where(e.eq(x, -math.inf), e.cast(float(info.min) if neginf is None else neginf, x.dtype), x)


@lowering("aten::clamp_min")
def _clamp_min(e, x, lo):
    return e.maximum(x, lo)


@lowering("aten::clamp_max")
def _clamp_max(e, x, hi):
    return e.minimum(x, hi)


# ---- activations

def _float_only(e, x):
    """Activations PyTorch defines for floating tensors only (others raise in the interpreter)."""
    if not e.is_float(x):
        raise NotLowerable("activation of a non-float tensor")
    return x


@lowering("aten::relu")
def _relu(e, x):
    if x.dtype == np.bool_:
        raise NotLowerable("relu of bool")
    return e.maximum(x, 0)


@lowering("aten::threshold")
def _threshold(e, x, threshold, value):
    return e.where(e.le(x, threshold), e.cast(value, x.dtype), x)


@lowering("aten::hardtanh")
def _hardtanh(e, x, lo=-1, hi=1):
    return e.minimum(e.maximum(x, e.cast(lo, x.dtype)), e.cast(hi, x.dtype))


@lowering("aten::hardshrink")
def _hardshrink(e, x, lambd=0.5):
    x = _float_only(e, x)
    return e.where(_within(e, x, lambd), e.cast(0, x.dtype), x)


def _within(e, x, lambd):
    """-lambd <= x <= lambd (hardshrink's dead zone)."""
    bound = e.cast(lambd, x.dtype)
    return e.logical_and(e.ge(x, e.neg(bound)), e.le(x, bound))


@lowering("aten::relu6")
def _relu6(e, x):
    return _hardtanh(e, x, 0, 6)


@lowering("aten::gelu")
def _gelu(e, x, approximate="none"):
    if approximate == "tanh":
        inner = e.mul(SQRT_2_PI, e.add(x, e.mul(0.044715, e.mul(e.mul(x, x), x))))
        return e.mul(e.mul(0.5, x), e.add(1, e.call("tanh", inner)))
    if approximate != "none":
        raise NotLowerable("unknown gelu approximation")
    return e.mul(e.mul(0.5, x), e.add(1, e.call("erf", e.mul(x, SQRT1_2))))


@lowering("aten::leaky_relu")
def _leaky_relu(e, x, slope=0.01):
    return e.where(e.gt(x, 0), x, e.mul(x, slope))


@lowering("aten::elu")
def _elu(e, x, alpha=1, scale=1, input_scale=1):
    neg = e.mul(scale * alpha, e.call("expm1", e.mul(e.minimum(x, 0), input_scale)))
    return e.where(e.gt(x, 0), e.mul(x, scale), neg)


@lowering("aten::selu")
def _selu(e, x):
    return _elu(e, x, activations.SELU_ALPHA, activations.SELU_SCALE, 1)


@lowering("aten::silu")
def _silu(e, x):
    x = _float_only(e, x)
    return e.mul(x, e.call("sigmoid", x))


@lowering("aten::softplus")
def _softplus(e, x, beta=1, threshold=20):
    x = _float_only(e, x)
    bx = e.mul(x, beta)
    return e.where(e.gt(bx, threshold), x, e.div(e.call("log1p", e.call("exp", bx)), beta))


@lowering("aten::hardsigmoid")
def _hardsigmoid(e, x):
    x = _float_only(e, x)
    return e.div(e.minimum(e.maximum(e.add(x, 3), 0), 6), 6)


@lowering("aten::hardswish")
def _hardswish(e, x):
    x = _float_only(e, x)
    return e.mul(x, e.div(e.minimum(e.maximum(e.add(x, 3), 0), 6), 6))


@lowering("aten::mish")
def _mish(e, x):
    return e.mul(x, e.call("tanh", _softplus(e, _float_only(e, x))))


@lowering("aten::log_sigmoid")
def _log_sigmoid(e, x):
    x = _float_only(e, x)
    return e.sub(e.minimum(x, 0), e.call("log1p", e.call("exp", e.neg(e.abs(x)))))


@lowering("aten::prelu")
def _prelu(e, x, weight):
    x = _float_only(e, x)
    if e.numel(weight) == 1:
        weight = e.reshape(weight, [])
    elif len(x.sizes) >= 2 and len(weight.sizes) == 1:  # one weight per channel (dim 1)
        weight = e.reshape(weight, [weight.sizes[0]] + [1] * (len(x.sizes) - 2))
    return _prelu_kernel(e, x, weight)


@lowering("aten::_prelu_kernel")
def _prelu_kernel(e, x, weight):
    return e.where(e.gt(x, 0), x, e.mul(weight, x))


@lowering("aten::glu")
def _glu(e, x, dim=-1):
    x = _float_only(e, x)
    if not x.sizes:
        raise NotLowerable("glu of a scalar")
    d = dim % len(x.sizes)
    if x.sizes[d] % 2:
        raise NotLowerable("glu of an odd dimension")
    half = x.sizes[d] // 2
    a, b = e.slice(x, d, 0, half, 1), e.slice(x, d, half, 2 * half, 1)
    return e.mul(a, e.call("sigmoid", b))


# ---- backward ops

@lowering("aten::threshold_backward")
def _threshold_backward(e, grad, x, threshold):
    return e.where(e.le(x, threshold), e.cast(0, grad.dtype), grad)


@lowering("aten::tanh_backward")
def _tanh_backward(e, grad, y):
    return e.mul(grad, e.sub(1, e.mul(y, y)))


@lowering("aten::sigmoid_backward")
def _sigmoid_backward(e, grad, y):
    return e.mul(e.mul(grad, e.sub(1, y)), y)


@lowering("aten::gelu_backward")
def _gelu_backward(e, grad, x, approximate="none"):
    if approximate == "tanh":
        k_beta = math.sqrt(2.0) * (2.0 / math.sqrt(math.pi)) * 0.5
        k_kappa = 0.044715
        t = e.call("tanh", e.mul(k_beta, e.add(x, e.mul(k_kappa, e.mul(e.mul(x, x), x)))))
        left_d = e.mul(0.5, e.add(1, t))
        right_d = e.mul(e.mul(e.mul(e.mul(0.5, x), e.sub(1, e.mul(t, t))), k_beta),
                        e.add(1, e.mul(3 * k_kappa, e.mul(x, x))))
        return e.mul(grad, e.add(left_d, right_d))
    if approximate != "none":
        raise NotLowerable("unknown gelu approximation")
    cdf = e.mul(0.5, e.add(1, e.call("erf", e.mul(x, SQRT1_2))))
    pdf = e.mul(e.call("exp", e.mul(-0.5, e.mul(x, x))), INV_SQRT_2PI)
    return e.mul(grad, e.add(cdf, e.mul(x, pdf)))


@lowering("aten::leaky_relu_backward")
def _leaky_relu_backward(e, grad, x, slope, self_is_result):
    return e.where(e.gt(x, 0), grad, e.mul(grad, slope))


@lowering("aten::hardshrink_backward")
def _hardshrink_backward(e, grad, x, lambd):
    return e.where(_within(e, x, lambd), e.cast(0, grad.dtype), grad)


@lowering("aten::hardtanh_backward")
def _hardtanh_backward(e, grad, x, lo, hi):
    inside = e.logical_and(e.gt(x, lo), e.lt(x, hi))
    return e.where(inside, grad, e.cast(0, grad.dtype))


@lowering("aten::silu_backward")
def _silu_backward(e, grad, x):
    s = e.call("sigmoid", x)
    return e.mul(e.mul(grad, s), e.add(1, e.mul(x, e.sub(1, s))))


@lowering("aten::elu_backward")
def _elu_backward(e, grad, alpha, scale, input_scale, is_result, v):
    if is_result:
        neg = e.mul(e.mul(grad, input_scale), e.add(v, alpha * scale))
    else:
        neg = e.mul(e.mul(grad, input_scale * alpha * scale),
                    e.call("exp", e.mul(e.minimum(v, 0), input_scale)))
    return e.where(e.le(v, 0), neg, e.mul(grad, scale))


@lowering("aten::softplus_backward")
def _softplus_backward(e, grad, x, beta, threshold):
    z = e.call("exp", e.mul(x, beta))
    return e.where(e.gt(e.mul(x, beta), threshold), grad, e.div(e.mul(grad, z), e.add(z, 1)))


@lowering("aten::hardsigmoid_backward")
def _hardsigmoid_backward(e, grad, x):
    inside = e.logical_and(e.gt(x, -3), e.lt(x, 3))
    return e.where(inside, e.div(grad, 6), 0)


@lowering("aten::hardswish_backward")
def _hardswish_backward(e, grad, x):
    mid = e.mul(grad, e.add(e.div(x, 3), 0.5))
    return e.where(e.le(x, -3), 0, e.where(e.lt(x, 3), mid, grad))


@lowering("aten::mish_backward")
def _mish_backward(e, grad, x):
    s = e.call("sigmoid", x)
    t = e.call("tanh", e.call("log1p", e.call("exp", x)))
    return e.mul(grad, e.add(t, e.mul(e.mul(x, s), e.sub(1, e.mul(t, t)))))


@lowering("aten::log_sigmoid_backward")
def _log_sigmoid_backward(e, grad, x, buffer):
    negative = e.lt(x, 0)
    max_deriv = e.where(negative, 1.0, 0.0)
    sign = e.where(negative, 1.0, -1.0)
    return e.mul(e.sub(max_deriv, e.mul(sign, e.div(buffer, e.add(buffer, 1)))), grad)
