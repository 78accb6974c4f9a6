"""Unary pointwise math on tensors (exp, log, trig, rounding, sign, ...) and the helpers the
other pointwise modules share: PyTorch's in-place cast rule and dtype names for messages.

Floating ops promote integer and bool inputs to float32 (PyTorch's default dtype); rounding
ops keep integer dtypes and reject bool, as PyTorch's CPU kernels do.
"""

from __future__ import annotations

import math

import numpy as np

from .dtypes import DEFAULT_FLOAT, scalar_type_name
from .erf import erf as _erf, erfc as _erfc
from .registry import derivative, op
from .script_spelling import radd, rmul

# ---- shared helpers

def not_implemented(kernel: str, dtype) -> RuntimeError:
    return RuntimeError(f'"{kernel}" not implemented for \'{scalar_type_name(dtype)}\'')


def can_cast(src, dst) -> bool:
    """c10::canCast: no complex->real, float->integral or non-bool->bool writes."""
    s, d = np.dtype(src).kind, np.dtype(dst).kind
    if s == "c" and d != "c":
        return False
    if s == "f" and d in "iub":
        return False
    return not (s != "b" and d == "b")


def store(self: np.ndarray, out) -> np.ndarray:
    """Write an out-of-place result into `self` as PyTorch's in-place variants do: the result
    dtype must be castable to self's, and its shape must not be larger than self's."""
    out = np.asarray(out)
    if not can_cast(out.dtype, self.dtype):
        raise RuntimeError(f"result type {scalar_type_name(out.dtype)} can't be cast to the desired "
                           f"output type {scalar_type_name(self.dtype)}")
    if np.broadcast_shapes(out.shape, self.shape) != self.shape:
        raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast "
                           f"shape {list(np.broadcast_shapes(out.shape, self.shape))}")
    self[...] = out
    return self


def as_float(x: np.ndarray) -> np.ndarray:
    """Integer/bool tensors promoted to the default float dtype (what float ops compute in)."""
    return x if x.dtype.kind in "fc" else x.astype(DEFAULT_FLOAT)


def inplace_of(fn):
    """The `_` variant of an out-of-place implementation."""
    def impl(self, *args):
        return store(self, fn(self, *args))
    impl.__name__ = fn.__name__ + "_"
    impl.__doc__ = f"In-place {fn.__name__}."
    return impl


# emitter shorthands for derivative formulas
def mul(e, a, b):
    return e.op("aten::mul", a, b)


def div(e, a, b):
    return e.op("aten::div", a, b)


def add(e, a, b):
    return e.op("aten::add", a, b)


def neg(e, a):
    return e.op("aten::neg", a)


# ---- floating unary ops



def _float_fn(fn):
    def impl(self):
        x = as_float(self)
        with np.errstate(all="ignore"):
            return np.asarray(fn(x), dtype=x.dtype)
    return impl


_LN2, _LN10, _TWO_OVER_SQRT_PI = math.log(2.0), math.log(10.0), 2.0 / math.sqrt(math.pi)

# name -> (numpy function, gradient (e, g, x, out) -> grad of x)
FLOAT_UNARY = {
    "exp": (np.exp, lambda e, g, x, y: mul(e, g, y)),
    "expm1": (np.expm1, lambda e, g, x, y: mul(e, g, add(e, y, 1.0))),
    "log": (np.log, lambda e, g, x, y: div(e, g, x)),
    "log1p": (np.log1p, lambda e, g, x, y: div(e, g, add(e, x, 1.0))),
    "log2": (np.log2, lambda e, g, x, y: div(e, g, mul(e, x, _LN2))),
    "log10": (np.log10, lambda e, g, x, y: div(e, g, mul(e, x, _LN10))),
    "sqrt": (np.sqrt, lambda e, g, x, y: div(e, g, mul(e, y, 2.0))),
    "rsqrt": (lambda x: 1.0 / np.sqrt(x),
              lambda e, g, x, y: mul(e, g, mul(e, e.op("aten::pow", y, 3), -0.5))),
    "sin": (np.sin, lambda e, g, x, y: mul(e, g, e.op("aten::cos", x))),
    "cos": (np.cos, lambda e, g, x, y: mul(e, g, neg(e, e.op("aten::sin", x)))),
    "tan": (np.tan, lambda e, g, x, y: mul(e, g, add(e, mul(e, y, y), 1.0))),
    "atan": (np.arctan, lambda e, g, x, y: div(e, g, add(e, mul(e, x, x), 1.0))),
    "sinh": (np.sinh, lambda e, g, x, y: mul(e, g, e.op("aten::cosh", x))),
    "cosh": (np.cosh, lambda e, g, x, y: mul(e, g, e.op("aten::sinh", x))),
    "asin": (np.arcsin, lambda e, g, x, y: mul(e, g, e.op("aten::rsqrt", e.op("aten::rsub", mul(e, x, x), 1.0)))),
    "acos": (np.arccos, lambda e, g, x, y: mul(e, neg(e, g), e.op("aten::rsqrt", e.op("aten::rsub", mul(e, x, x), 1.0)))),
    "erf": (lambda x: _erf(x),
            lambda e, g, x, y: mul(e, g, mul(e, e.op("aten::exp", neg(e, mul(e, x, x))), _TWO_OVER_SQRT_PI))),
    "erfc": (lambda x: _erfc(x),
             lambda e, g, x, y: mul(e, g, mul(e, e.op("aten::exp", neg(e, mul(e, x, x))), -_TWO_OVER_SQRT_PI))),
    "reciprocal": (lambda x: 1.0 / x, lambda e, g, x, y: mul(e, neg(e, g), mul(e, y, y))),
}


# name -> symbolic_script's spelling of the same gradient (e, g, self, result), which the
# symbolic emitter uses so that `df` reads as PyTorch's; the eager path keeps the formulas
# above (those of PyTorch's eager autograd)
_C_ERF = 1.1283791670955126  # symbolic_script's precomputed 2 / sqrt(pi)
SPELLED_UNARY = {
    "exp": lambda e, g, x, y: mul(e, g, y),
    "expm1": lambda e, g, x, y: mul(e, g, add(e, y, 1)),
    "log": lambda e, g, x, y: div(e, g, x),
    "log1p": lambda e, g, x, y: div(e, g, add(e, x, 1)),
    "log2": lambda e, g, x, y: div(e, g, mul(e, x, 0.6931471805599453)),
    "log10": lambda e, g, x, y: div(e, g, mul(e, x, 2.3025850929940456)),
    "sqrt": lambda e, g, x, y: div(e, g, rmul(e, 2, y)),
    "rsqrt": lambda e, g, x, y: div(e, mul(e, mul(e, mul(e, neg(e, g), y), y), y), 2),
    "sin": lambda e, g, x, y: mul(e, g, e.op("aten::cos", x)),
    "cos": lambda e, g, x, y: mul(e, g, neg(e, e.op("aten::sin", x))),
    "tan": lambda e, g, x, y: mul(e, g, radd(e, 1., mul(e, y, y))),
    "atan": lambda e, g, x, y: div(e, g, add(e, mul(e, x, x), 1)),
    "sinh": lambda e, g, x, y: mul(e, g, e.op("aten::cosh", x)),
    "cosh": lambda e, g, x, y: mul(e, g, e.op("aten::sinh", x)),
    "asin": lambda e, g, x, y: mul(e, g, e.op("aten::rsqrt", add(e, mul(e, neg(e, x), x), 1))),
    "acos": lambda e, g, x, y: mul(e, g, neg(e, e.op("aten::rsqrt", add(e, mul(e, neg(e, x), x), 1)))),
    "erf": lambda e, g, x, y: mul(e, rmul(e, _C_ERF, e.op("aten::exp", mul(e, neg(e, x), x))), g),
    "erfc": lambda e, g, x, y: mul(e, rmul(e, -_C_ERF, e.op("aten::exp", mul(e, neg(e, x), x))), g),
    "reciprocal": lambda e, g, x, y: mul(e, mul(e, neg(e, g), y), y),
    "abs": lambda e, g, x, y: mul(e, g, e.op("aten::sign", x)),
    "floor": lambda e, g, x, y: e.op("aten::zeros_like", g, None, None, None, None, *e.context_literals(1)),
    "ceil": lambda e, g, x, y: e.op("aten::zeros_like", g, None, None, None, None, *e.context_literals(1)),
    "round": lambda e, g, x, y: e.op("aten::zeros_like", g, None, None, None, None, *e.context_literals(1)),
    "trunc": lambda e, g, x, y: e.op("aten::zeros_like", g, None, None, None, None, *e.context_literals(1)),
    "frac": lambda e, g, x, y: g,
}


def _register_unary(name, impl, grad):
    fn = op(f"aten::{name}(Tensor self) -> Tensor")(impl)
    op(f"aten::{name}_(Tensor(a!) self) -> Tensor(a!)")(inplace_of(fn))
    spelled = SPELLED_UNARY.get(name)

    def formula(e, grads, inputs, outputs):
        g = grads[0] if grads[0] is not None else e.zeros_like(outputs[0])
        if e.symbolic and spelled is not None:
            return [spelled(e, g, inputs[0], outputs[0])]
        return [grad(e, g, inputs[0], outputs[0])]
    formula.__name__ = f"{name}_grad"
    derivative(f"aten::{name}", f"aten::{name}_")(formula)


for _name, (_fn, _grad) in FLOAT_UNARY.items():
    _register_unary(_name, _float_fn(_fn), _grad)


# ---- ops that keep integer dtypes

def _zero_grad(e, g, x, y):
    return e.zeros_like(g)


def _abs(self):
    if self.dtype == np.bool_:
        raise not_implemented("abs_cpu", self.dtype)
    return np.abs(self)


def _sign(self):
    if self.dtype.kind != "f":
        return np.sign(self) if self.dtype != np.bool_ else self.copy()
    return np.asarray(np.where(np.isnan(self), 0, np.sign(self)) + 0.0, dtype=self.dtype)


def _rounding(kernel, fn):
    def impl(self):
        if self.dtype == np.bool_:
            raise not_implemented(kernel, self.dtype)
        if self.dtype.kind in "iu":
            return self.copy()
        return np.asarray(fn(self), dtype=self.dtype)
    return impl


def _frac(self):
    if self.dtype.kind != "f":
        raise not_implemented("frac_cpu", self.dtype)
    return np.asarray(self - np.trunc(self), dtype=self.dtype)


def _square(self):
    return _pow_impl(self, 2)


INT_UNARY = {
    "abs": (_abs, lambda e, g, x, y: mul(e, g, e.op("aten::sign", x))),
    "sign": (_sign, _zero_grad),
    "floor": (_rounding("floor_vml_cpu", np.floor), _zero_grad),
    "ceil": (_rounding("ceil_vml_cpu", np.ceil), _zero_grad),
    "round": (_rounding("round_vml_cpu", np.round), _zero_grad),  # half to even, like nearbyint
    "trunc": (_rounding("trunc_vml_cpu", np.trunc), _zero_grad),
    "frac": (_frac, lambda e, g, x, y: g),
    "square": (_square, lambda e, g, x, y: mul(e, g, mul(e, x, 2.0))),
}

for _name, (_fn, _grad) in INT_UNARY.items():
    _register_unary(_name, _fn, _grad)


@op("aten::round.decimals(Tensor self, *, int decimals) -> Tensor")
def round_decimals(self, decimals):
    """Round to `decimals` places as PyTorch does: nearbyint(x * 10^d) / 10^d (d < 0 divides)."""
    if self.dtype.kind != "f":
        raise not_implemented("round_cpu", self.dtype)
    ten = np.asarray(10.0 ** abs(decimals), dtype=self.dtype)
    with np.errstate(all="ignore"):
        if decimals >= 0:
            return np.asarray(np.round(self * ten) / ten, dtype=self.dtype)
        return np.asarray(np.round(self / ten) * ten, dtype=self.dtype)


@op("aten::round_.decimals(Tensor(a!) self, *, int decimals) -> Tensor(a!)")
def round_decimals_(self, decimals):
    return store(self, round_decimals(self, decimals))


@derivative("aten::round.decimals", "aten::round_.decimals")
def round_decimals_grad(e, grads, inputs, outputs):
    return [e.zeros_like(outputs[0]), None]


# ---- pow

def _int_pow(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Integer power with PyTorch's rule for negative exponents (1, +-1 for base -1, else 0)."""
    a, b = np.broadcast_arrays(a, b)
    neg_exp = b < 0
    if not neg_exp.any():
        return np.asarray(np.power(a, b))
    safe = np.power(a, np.where(neg_exp, 0, b))
    special = np.where(a == 1, 1, np.where(a == -1, np.where(b % 2 == 0, 1, -1), 0))
    return np.asarray(np.where(neg_exp, special, safe), dtype=a.dtype)


def _pow_impl(base, exponent):
    from .dtypes import result_type
    dt = result_type(base, exponent)
    if dt == np.bool_:
        raise not_implemented("pow", dt)
    a, b = np.asarray(base, dtype=dt), np.asarray(exponent, dtype=dt)
    if dt.kind in "iu":
        if not isinstance(exponent, np.ndarray) and exponent < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        return _int_pow(a, b)
    with np.errstate(all="ignore"):
        return np.asarray(np.power(a, b), dtype=dt)


@op("aten::pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor",
    "aten::pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor",
    "aten::pow.Scalar(Scalar self, Tensor exponent) -> Tensor")
def pow_(self, exponent):
    return _pow_impl(self, exponent)


@op("aten::pow_.Scalar(Tensor(a!) self, Scalar exponent) -> Tensor(a!)",
    "aten::pow_.Tensor(Tensor(a!) self, Tensor exponent) -> Tensor(a!)")
def pow_inplace(self, exponent):
    return store(self, _pow_impl(self, exponent))


@derivative("aten::pow.Tensor_Scalar", "aten::pow_.Scalar")
def pow_tensor_scalar_grad(e, grads, inputs, outputs):
    g, (x, p) = grads[0], inputs
    if e.symbolic and e.node.kind == "aten::pow":
        # symbolic_script's pow_0: `if float(exponent) == 0.0` when the backward runs
        return [e.if_(e.op("aten::eq", e.op("aten::Float", p), 0.0),
                      lambda: e.op("aten::zeros_like", x, None, None, None, None, 1),
                      lambda: mul(e, mul(e, g, p), e.op("aten::pow", x, e.op("aten::sub", e.op("aten::Float", p), 1)))),
                None]
    if p == 0:
        return [e.zeros_like(x), None]
    return [mul(e, g, mul(e, e.op("aten::pow", x, e.op("aten::sub", p, 1)), p)), None]


def _log_base_grad(e, g, out, base):
    """d(base^p)/dp = base^p * log(base), taken as 0 where base == 0 (PyTorch's convention)."""
    log_base = e.op("aten::log", base)
    if e.is_tensor(base):
        log_base = e.op("aten::masked_fill", log_base, e.op("aten::eq", base, 0), 0.0)
    return mul(e, g, mul(e, out, log_base))


@derivative("aten::pow.Tensor_Tensor", "aten::pow_.Tensor")
def pow_tensor_tensor_grad(e, grads, inputs, outputs):
    g, (x, p), out = grads[0], inputs, outputs[0]
    if e.symbolic and e.node.kind == "aten::pow":
        # symbolic_script's pow_1: sizes taken in the forward; a where on `exponent == 0.0`,
        # and the exponent's gradient from a recomputed power
        e.forward_sizes(x, p)
        gx = e.sum_to(e.op("aten::where", e.op("aten::eq", p, 0.0),
                           e.op("aten::zeros_like", x, None, None, None, None, 1),
                           mul(e, mul(e, g, p), e.op("aten::pow", x, e.op("aten::sub", p, 1)))), x)
        return [gx, e.sum_to(mul(e, mul(e, g, e.op("aten::pow", x, p)), e.op("aten::log", x)), p)]
    gx = mul(e, g, mul(e, e.op("aten::pow", x, e.op("aten::sub", p, 1.0)), p))
    gx = e.op("aten::masked_fill", gx, e.op("aten::eq", p, 0.0), 0.0)
    return [e.sum_to(gx, x), e.sum_to(_log_base_grad(e, g, out, x), p)]


@derivative("aten::pow.Scalar")
def pow_scalar_grad(e, grads, inputs, outputs):
    g, (base, p), out = grads[0], inputs, outputs[0]
    if e.symbolic:  # symbolic_script's pow_2: `grad * pow(self, exponent) * log(float(self))`
        return [None, mul(e, mul(e, g, e.op("aten::pow", base, p)), e.op("aten::log", e.op("aten::Float", base)))]
    if base == 0:
        return [None, e.zeros_like(p)]
    return [None, mul(e, g, mul(e, out, e.op("aten::log", base)))]
