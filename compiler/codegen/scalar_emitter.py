"""The scalar emitter that lowering rules are written against (see ops/lowering_common.py):
it builds kernel expressions, applying PyTorch's type promotion to every operation."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Union

import numpy as np

from irjit.ops.dtypes import DEFAULT_FLOAT, result_type
from irjit.ops.lowering_common import NotLowerable

from .kernel import Const, Expr, Op
from .scalar_ops import BOOL, SUPPORTED_DTYPES, is_float, math_functions

# operand priority in promotion, as torch.result_type ranks them
DIMENSIONED, ZERO_DIM, NUMBER = 0, 1, 2


@dataclass(frozen=True)
class Val:
    """A value inside a kernel: its expression, dtype and promotion priority."""

    expr: Expr
    dtype: np.dtype
    priority: int = DIMENSIONED


Operand = Union[Val, bool, int, float]


def _sample(v: Val) -> Any:
    """A stand-in that `result_type` ranks like `v`."""
    if v.priority == NUMBER:
        return {"b": True, "i": 1, "f": 1.0}[v.dtype.kind]
    return np.empty((1,) if v.priority == DIMENSIONED else (), v.dtype)


class ExprEmitter:
    """Builds kernel expressions for lowering rules."""

    def __init__(self):
        self._math = math_functions()

    # ---- operands
    def const(self, value: Any) -> Val:
        if isinstance(value, np.generic):
            value = value.item()
        if isinstance(value, bool):
            return Val(Const(value, BOOL), BOOL, NUMBER)
        if isinstance(value, int):
            return Val(Const(value, np.dtype(np.int64)), np.dtype(np.int64), NUMBER)
        if isinstance(value, float):
            return Val(Const(value, np.dtype(np.float64)), np.dtype(np.float64), NUMBER)
        raise NotLowerable(f"unsupported constant {value!r}")

    def _val(self, x: Operand) -> Val:
        return x if isinstance(x, Val) else self.const(x)

    def promote(self, *xs: Val) -> np.dtype:
        dtype = result_type(*[_sample(x) for x in xs])
        if dtype not in SUPPORTED_DTYPES:
            raise NotLowerable(f"dtype {dtype}")
        return dtype

    def cast(self, x: Operand, dtype) -> Val:
        x = self._val(x)
        dtype = np.dtype(dtype)
        if dtype not in SUPPORTED_DTYPES:
            raise NotLowerable(f"dtype {dtype}")
        if x.dtype == dtype:
            return x
        if isinstance(x.expr, Const):
            return Val(Const(np.array(x.expr.value).astype(dtype).item(), dtype), dtype, x.priority)
        return Val(Op("cast", (x.expr,), dtype), dtype, x.priority)

    def is_float(self, x: Operand) -> bool:
        return is_float(self._val(x).dtype)

    def to_float(self, x: Operand) -> Val:
        x = self._val(x)
        return x if is_float(x.dtype) else self.cast(x, DEFAULT_FLOAT)

    # ---- building
    def _op(self, name: str, dtype: np.dtype, *xs: Val, priority: int) -> Val:
        return Val(Op(name, tuple(x.expr for x in xs), dtype), dtype, priority)

    def _binary(self, name: str, x: Operand, y: Operand, dtype=None) -> Val:
        x, y = self._val(x), self._val(y)
        common = self.promote(x, y)
        out = common if dtype is None else dtype
        return self._op(name, out, self.cast(x, common), self.cast(y, common),
                        priority=min(x.priority, y.priority))

    def add(self, x, y):
        if self._val(x).dtype == BOOL and self._val(y).dtype == BOOL:
            return self._binary("or", x, y)
        return self._binary("add", x, y)

    def sub(self, x, y):
        return self._binary("sub", x, y)

    def mul(self, x, y):
        if self._val(x).dtype == BOOL and self._val(y).dtype == BOOL:
            return self._binary("and", x, y)
        return self._binary("mul", x, y)

    def div(self, x, y):
        x, y = self._val(x), self._val(y)
        common = self.promote(x, y)
        if not is_float(common):
            common = DEFAULT_FLOAT
        return self._op("div", common, self.cast(x, common), self.cast(y, common),
                        priority=min(x.priority, y.priority))

    def maximum(self, x, y):
        return self._binary("max", x, y)

    def minimum(self, x, y):
        return self._binary("min", x, y)

    def _unary(self, name: str, x: Operand) -> Val:
        x = self._val(x)
        return self._op(name, x.dtype, x, priority=x.priority)

    def neg(self, x):
        if self._val(x).dtype == BOOL:
            raise NotLowerable("negation of bool")
        return self._unary("neg", x)

    def abs(self, x):
        return self._unary("abs", x)

    def sign(self, x):
        return self._unary("sign", x)

    def sqrt(self, x):
        return self._unary("sqrt", self.to_float(x))

    def floor(self, x):
        return self._unary("floor", x)

    def ceil(self, x):
        return self._unary("ceil", x)

    def trunc(self, x):
        return self._unary("trunc", x)

    def round(self, x):
        return self._unary("round", x)

    def _compare(self, name, x, y):
        return self._binary(name, x, y, dtype=BOOL)

    def lt(self, x, y):
        return self._compare("lt", x, y)

    def le(self, x, y):
        return self._compare("le", x, y)

    def gt(self, x, y):
        return self._compare("gt", x, y)

    def ge(self, x, y):
        return self._compare("ge", x, y)

    def eq(self, x, y):
        return self._compare("eq", x, y)

    def ne(self, x, y):
        return self._compare("ne", x, y)

    def isnan(self, x):
        x = self._val(x)
        if not is_float(x.dtype):
            return self.cast(False, BOOL)
        return self._op("isnan", BOOL, x, priority=x.priority)

    def _logical(self, name, x, y):
        x, y = self.cast(x, BOOL), self.cast(y, BOOL)
        return self._op(name, BOOL, x, y, priority=min(x.priority, y.priority))

    def logical_and(self, x, y):
        return self._logical("and", x, y)

    def logical_or(self, x, y):
        return self._logical("or", x, y)

    def logical_xor(self, x, y):
        return self._logical("xor", x, y)

    def logical_not(self, x):
        x = self.cast(x, BOOL)
        return self._op("not", BOOL, x, priority=x.priority)

    def where(self, cond, x, y):
        c = self.cast(cond, BOOL)
        x, y = self._val(x), self._val(y)
        common = self.promote(x, y)
        return self._op("select", common, c, self.cast(x, common), self.cast(y, common),
                        priority=min(c.priority, x.priority, y.priority))

    def call(self, name: str, *xs: Operand) -> Val:
        if name not in self._math:
            raise NotLowerable(f"the math library has no {name}")
        vals = [self._val(x) for x in xs]
        dtype = self.promote(*vals)
        if not is_float(dtype):
            dtype = DEFAULT_FLOAT
        return self._op(f"math.{name}", dtype, *[self.cast(v, dtype) for v in vals],
                        priority=min(v.priority for v in vals))
