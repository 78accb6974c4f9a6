"""TorchScript's math builtins on numbers (`math.sqrt`, `math.floor`, `round`, ...), number
conversions (`int()`, `float()`, `bool()`, implicit tensor->number) and `sum` of lists.

Domain errors give nan/inf as in C++ (`math.sqrt(-1)` is nan), not Python exceptions.
"""

from __future__ import annotations

import cmath
import math
import re

import numpy as np

from .registry import op
from .scalar import INT_MIN


_FLOAT_FUNCS = {
    "sqrt": np.sqrt, "exp": np.exp, "expm1": np.expm1, "log": np.log, "log1p": np.log1p,
    "log10": np.log10, "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin,
    "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh,
    "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
}
_HAS_COMPLEX = {"sqrt", "exp", "log", "log10", "sin", "cos", "tan", "asin", "acos", "atan",
                "sinh", "cosh", "tanh", "asinh", "acosh", "atanh"}


def _register_float_func(name, fn):
    def impl(a):
        if isinstance(a, complex):
            return getattr(cmath, name)(a)
        with np.errstate(all="ignore"):
            return float(fn(np.float64(a)))
    schemas = [f"aten::{name}.int(int a) -> float", f"aten::{name}.float(float a) -> float"]
    if name in _HAS_COMPLEX:
        schemas.append(f"aten::{name}.complex(complex a) -> complex")
    schemas.append(f"aten::{name}.Scalar(Scalar a) -> Scalar")
    op(*schemas)(impl)


for _name, _fn in _FLOAT_FUNCS.items():
    _register_float_func(_name, _fn)


@op("aten::erf.int(int a) -> float", "aten::erf.float(float a) -> float",
    "aten::erf.Scalar(Scalar a) -> Scalar")
def erf(a):
    return math.erf(a)


@op("aten::erfc.int(int a) -> float", "aten::erfc.float(float a) -> float",
    "aten::erfc.Scalar(Scalar a) -> Scalar")
def erfc(a):
    return math.erfc(a)


@op("aten::log.int_int(int a, int b) -> float", "aten::log.float_float(float a, float b) -> float",
    "aten::log.int_float(int a, float b) -> float", "aten::log.float_int(float a, int b) -> float",
    "aten::log.Scalar_Scalar(Scalar a, Scalar b) -> float")
def log_base(a, b):
    with np.errstate(all="ignore"):
        return float(np.log(np.float64(a)) / np.log(np.float64(b)))


def _to_int(x: float) -> int:
    """C++ double->int64 conversion (truncation; nan/inf give INT64_MIN like x86)."""
    if math.isnan(x) or math.isinf(x):
        return INT_MIN
    return int(x)


@op("aten::floor.int(int a) -> int", "aten::floor.float(float a) -> int",
    "aten::floor.Scalar(Scalar a) -> Scalar")
def floor(a):
    return a if isinstance(a, int) else _to_int(math.floor(a)) if math.isfinite(a) else INT_MIN


@op("aten::ceil.int(int a) -> int", "aten::ceil.float(float a) -> int",
    "aten::ceil.Scalar(Scalar a) -> Scalar")
def ceil(a):
    return a if isinstance(a, int) else _to_int(math.ceil(a)) if math.isfinite(a) else INT_MIN


@op("aten::round.int(int a) -> float", "aten::round.float(float a) -> float",
    "aten::round.Scalar(Scalar a) -> Scalar")
def round_(a):
    """Half to even, like std::nearbyint (TorchScript's round(2.5) is 2.0)."""
    return float(np.round(np.float64(a)))


@op("aten::isnan.float(float a) -> bool", "aten::isnan.complex(complex a) -> bool")
def isnan(a):
    return cmath.isnan(a) if isinstance(a, complex) else math.isnan(a)


@op("aten::isinf.float(float a) -> bool", "aten::isinf.complex(complex a) -> bool")
def isinf(a):
    return cmath.isinf(a) if isinstance(a, complex) else math.isinf(a)


@op("aten::isfinite.float(float a) -> bool", "aten::isfinite.complex(complex a) -> bool")
def isfinite(a):
    return cmath.isfinite(a) if isinstance(a, complex) else math.isfinite(a)


@op("aten::gcd.int(int a, int b) -> int")
def gcd(a, b):
    return math.gcd(a, b)


@op("aten::factorial.int(int a) -> int")
def factorial(a):
    if a < 0:
        raise ValueError("factorial() not defined for negative values")
    return math.factorial(a)


@op("aten::copysign.int(int a, int b) -> float", "aten::copysign.float(float a, float b) -> float",
    "aten::copysign.int_float(int a, float b) -> float", "aten::copysign.float_int(float a, int b) -> float",
    "aten::copysign(Scalar a, Scalar b) -> float")
def copysign(a, b):
    return math.copysign(float(a), float(b))


@op("aten::sum.int(int[] self) -> int", "aten::sum.float(float[] self) -> float",
    "aten::sum.complex(complex[] self) -> complex", "aten::sum.bool(bool[] self) -> int")
def sum_list(self):
    if self and isinstance(self[0], float):
        return float(sum(self, 0.0))
    return sum(int(x) if isinstance(x, bool) else x for x in self)


# ---- conversions


def _item(a: np.ndarray, what: str = "Scalar"):
    if a.size != 1:
        raise RuntimeError(f"a Tensor with {a.size} elements cannot be converted to Scalar")
    return a.reshape(()).item()


@op("aten::Int.Tensor(Tensor a) -> int", "aten::Int.bool(bool a) -> int",
    "aten::Int.float(float a) -> int", "aten::Int.Scalar(Scalar a) -> int", "aten::Int.str(str a) -> int")
def to_int(a):
    if isinstance(a, np.ndarray):
        a = _item(a)
    if isinstance(a, str):
        if not re.fullmatch(r"[+-]?\d+", a):
            raise ValueError(f"invalid literal for int() with base 10: '{a}'")
        return int(a)
    if isinstance(a, complex):
        a = a.real
    return _to_int(a) if isinstance(a, float) else int(a)


_FLOAT_PREFIX = re.compile(r"\s*([+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan))",
                           re.IGNORECASE)


@op("aten::Float.Tensor(Tensor a) -> float", "aten::Float.Scalar(Scalar a) -> float",
    "aten::Float.int(int a) -> float", "aten::Float.bool(bool a) -> float", "aten::Float.str(str a) -> float")
def to_float(a):
    if isinstance(a, np.ndarray):
        a = _item(a)
    if isinstance(a, str):
        m = _FLOAT_PREFIX.match(a)  # std::stod: leading spaces, longest numeric prefix
        if m is None:
            raise ValueError("stod")
        return float(m.group(1))
    if isinstance(a, complex):
        a = a.real
    return float(a)


@op("aten::Bool.Tensor(Tensor a) -> bool", "aten::Bool.int(int a) -> bool", "aten::Bool.float(float a) -> bool")
def to_bool(a):
    if isinstance(a, np.ndarray):
        a = _item(a)
    return bool(a)


def _implicit(a: np.ndarray, integral: bool = False):
    from .dtypes import scalar_type_name
    if a.ndim != 0:
        raise RuntimeError("Cannot input a tensor of dimension other than 0 as a scalar argument")
    if integral and a.dtype.kind not in "iu":
        raise RuntimeError(f"Cannot input a tensor of type {scalar_type_name(a.dtype)} as an integral argument")
    return a.item()


@op("aten::ScalarImplicit(Tensor a) -> Scalar")
def scalar_implicit(a):
    return _implicit(a)


@op("aten::IntImplicit(Tensor a) -> int")
def int_implicit(a):
    return int(_implicit(a, integral=True))


@op("aten::FloatImplicit(Tensor a) -> float")
def float_implicit(a):
    return float(_implicit(a))


@op("aten::ComplexImplicit(Tensor a) -> complex")
def complex_implicit(a):
    return complex(_implicit(a))
