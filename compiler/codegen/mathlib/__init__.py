"""Vectorizable elementary functions emitted as inline LLVM IR (no libm calls).

`emit(builder, name, args)` writes the instructions for `name` applied to float or double
values, scalars or fixed-width vectors, and returns the result; `FUNCTIONS` names what is
supported. Everything is range reduction, polynomials (fitted by tools/dev/fit_mathlib.py),
integer bit manipulation and selects, so LLVM's loop vectorizer turns loops over these
functions into SIMD code. Special values follow C99/numpy: NaN propagates, signed zeros,
infinities, overflow to inf and gradual underflow through the subnormals (no FTZ needed).

Accuracy, measured by tests/codegen/test_mathlib.py against float64 libm/numpy (float32) and
libm or mpmath (float64) over random bit patterns and sweeps: at most 4 ulp everywhere, most
functions 1-2 ulp, but float32 erf: one rational for speed (GELU), within 6 ulp (every float32
checked), 98% of inputs within 1. sin/cos/tan: float32 over its whole range; float64 for
|x| < 1.7e12, finite (sin/cos within [-1, 1]) beyond. Modules: exp_log, hyperbolic, trig,
power, special; core holds the emission context and coefficients.py the fitted polynomials.
"""

from llvmlite import ir

from . import exp_log, hyperbolic, power, special, trig
from .core import Ctx

_TABLE = {
    "exp": (1, exp_log.exp),
    "exp2": (1, exp_log.exp2),
    "expm1": (1, exp_log.expm1),
    "log": (1, exp_log.log),
    "log2": (1, exp_log.log2),
    "log10": (1, exp_log.log10),
    "log1p": (1, exp_log.log1p),
    "tanh": (1, hyperbolic.tanh),
    "sigmoid": (1, hyperbolic.sigmoid),
    "sinh": (1, hyperbolic.sinh),
    "cosh": (1, hyperbolic.cosh),
    "asinh": (1, hyperbolic.asinh),
    "acosh": (1, hyperbolic.acosh),
    "atanh": (1, hyperbolic.atanh),
    "sin": (1, trig.sin),
    "cos": (1, trig.cos),
    "tan": (1, trig.tan),
    "atan": (1, trig.atan),
    "atan2": (2, trig.atan2),
    "asin": (1, trig.asin),
    "acos": (1, trig.acos),
    "pow": (2, power.pow),
    "erf": (1, special.erf),
    "erfc": (1, special.erfc),
    "gelu_erf": (1, special.gelu_erf),
    "gelu_tanh": (1, special.gelu_tanh),
    "sqrt": (1, special.sqrt),
    "rsqrt": (1, special.rsqrt),
}

FUNCTIONS = frozenset(_TABLE)


def emit(builder: ir.IRBuilder, name: str, args: list[ir.Value]) -> ir.Value:
    """The value of function `name` of `args` (all of one float type), emitted at builder."""
    if name not in _TABLE:
        raise KeyError(f"mathlib has no function {name!r}; it has {sorted(FUNCTIONS)}")
    arity, fn = _TABLE[name]
    if len(args) != arity:
        raise TypeError(f"mathlib.{name} takes {arity} argument(s), got {len(args)}")
    assert all(a.type == args[0].type for a in args), "mathlib arguments differ in type"
    return fn(Ctx(builder, args[0].type), *args)
