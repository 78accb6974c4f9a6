"""The number emitter that ops/lowering_numbers.py's rules are written against: LLVM values of
kind int (i64), float (double) or bool (i1) with TorchScript's semantics as this interpreter
runs them. Where the interpreter raises or leaves int64 (a division or modulo by zero, an
overflow, int() of nan/inf), the emitted code branches to the program's refusal block, so the
call returns a non-zero status and the interpreter re-runs the program."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np
from llvmlite import ir

from irjit.ops.lowering_common import Comparisons, NotLowerable

from .entry import ArrayGuards
from .kernel import Buffer
from .scalar_ops import from_memory, math_functions, memory_type

I1, I8, I64, F64 = ir.IntType(1), ir.IntType(8), ir.IntType(64), ir.DoubleType()
LLVM_TYPES = {"int": I64, "float": F64, "bool": I1}
INT64_MIN = -(2 ** 63)
TWO_63 = 2.0 ** 63


@dataclass(frozen=True)
class Num:
    """A number inside a program: its LLVM value and kind ("int", "float" or "bool")."""

    value: ir.Value
    kind: str


@dataclass(frozen=True)
class TensorArg:
    """A tensor argument (a `PyObject*`, None when undefined) and, where its type is complete,
    the buffer its value is read through (one element, checked by the entry's array guards)."""

    obj: ir.Value
    buffer: Optional[Buffer]


@dataclass(frozen=True)
class ListArg:
    """A list argument of numbers, read only: its elements (i64, double or i8) and length."""

    data: ir.Value
    length: ir.Value
    kind: str


class NumberEmitter(Comparisons):
    """Builds number code at `b`; `refuse_if(cond)` leaves through the function's refusal block."""

    def __init__(self, builder: ir.IRBuilder, refuse: ir.Block, guards: ArrayGuards):
        self.b = builder
        self._refuse = refuse
        self._guards = guards
        self._math = math_functions()

    # ---- operands
    def const(self, value: Any) -> Num:
        if isinstance(value, bool):
            return Num(ir.Constant(I1, int(value)), "bool")
        if isinstance(value, int):
            if not INT64_MIN <= value < 2 ** 63:
                raise NotLowerable(f"int constant {value} outside int64")
            return Num(ir.Constant(I64, value), "int")
        if isinstance(value, float):
            return Num(ir.Constant(F64, value), "float")
        raise NotLowerable(f"{type(value).__name__} constant in a number program")

    def num(self, x: Any) -> Num:
        if isinstance(x, Num):
            return x
        if isinstance(x, (bool, int, float)):
            return self.const(x)
        raise NotLowerable(f"{type(x).__name__} where a number is expected")

    def refuse_if(self, cond: ir.Value) -> None:
        """Branch to the refusal block when `cond` holds; code continues where it does not."""
        ok = self.b.append_basic_block("ok")
        self.b.cbranch(cond, self._refuse, ok)
        self.b.position_at_end(ok)

    # ---- conversions
    def to_float(self, x) -> Num:
        x = self.num(x)
        if x.kind == "float":
            return x
        conv = self.b.uitofp if x.kind == "bool" else self.b.sitofp
        return Num(conv(x.value, F64), "float")

    def as_int(self, x) -> Num:
        """An int or bool as int (bools take part in int arithmetic as 0/1)."""
        x = self.num(x)
        if x.kind == "float":
            raise NotLowerable("a float where an int is expected")
        return x if x.kind == "int" else Num(self.b.zext(x.value, I64), "int")

    def to_bool(self, x) -> Num:
        x = self.num(x)
        if x.kind == "bool":
            return x
        if x.kind == "float":  # nan is true, as Python's bool(nan)
            return Num(self.b.fcmp_unordered("!=", x.value, ir.Constant(F64, 0.0)), "bool")
        return Num(self.b.icmp_signed("!=", x.value, ir.Constant(I64, 0)), "bool")

    def _checked_fptosi(self, f: ir.Value) -> Num:
        """A float that is already integral (or truncated by the conversion) as int64; nan,
        infinities and values outside int64 are refused."""
        b = self.b
        inside = b.and_(b.fcmp_ordered(">=", f, ir.Constant(F64, -TWO_63)),
                        b.fcmp_ordered("<", f, ir.Constant(F64, TWO_63)))
        self.refuse_if(b.not_(inside))
        return Num(b.fptosi(f, I64), "int")

    def to_int(self, x) -> Num:
        x = self.num(x)
        if x.kind != "float":
            return self.as_int(x)
        return self._checked_fptosi(x.value)

    def _rounded_int(self, intrinsic: str, x) -> Num:
        x = self.num(x)
        if x.kind != "float":
            return self.as_int(x)
        return self._checked_fptosi(self._intrinsic(intrinsic, x.value))

    def floor(self, x) -> Num:
        return self._rounded_int("llvm.floor", x)

    def ceil(self, x) -> Num:
        return self._rounded_int("llvm.ceil", x)

    def round(self, x) -> Num:
        return Num(self._intrinsic("llvm.roundeven", self.to_float(x).value), "float")

    def _intrinsic(self, name: str, *args: ir.Value) -> ir.Value:
        ty = args[0].type
        fn = self.b.module.declare_intrinsic(name, [ty], ir.FunctionType(ty, [a.type for a in args]))
        return self.b.call(fn, list(args))

    # ---- arithmetic
    def _is_float(self, *xs) -> bool:
        return any(self.num(x).kind == "float" for x in xs)

    def _with_overflow(self, name: str) -> ir.Function:
        fnty = ir.FunctionType(ir.LiteralStructType([I64, I1]), [I64, I64])
        return self.b.module.declare_intrinsic(f"llvm.{name}.with.overflow", [I64], fnty)

    def _checked_int(self, name: str, x: Num, y: Num) -> Num:
        """x (+|-|*) y on int64, refused on overflow (the interpreter's ints do not wrap)."""
        pair = self.b.call(self._with_overflow(name), [x.value, y.value])
        self.refuse_if(self.b.extract_value(pair, 1))
        return Num(self.b.extract_value(pair, 0), "int")

    def _arith(self, int_op: str, float_op: Callable, x, y) -> Num:
        if self._is_float(x, y):
            return Num(float_op(self.to_float(x).value, self.to_float(y).value), "float")
        return self._checked_int(int_op, self.as_int(x), self.as_int(y))

    def add(self, x, y) -> Num:
        return self._arith("sadd", self.b.fadd, x, y)

    def sub(self, x, y) -> Num:
        return self._arith("ssub", self.b.fsub, x, y)

    def mul(self, x, y) -> Num:
        return self._arith("smul", self.b.fmul, x, y)

    def div(self, x, y) -> Num:
        """True division (IEEE: x/0 is +-inf, 0/0 nan, as C++ and the interpreter)."""
        return Num(self.b.fdiv(self.to_float(x).value, self.to_float(y).value), "float")

    def neg(self, x) -> Num:
        x = self.num(x)
        if x.kind == "float":
            return Num(self.b.fneg(x.value), "float")
        return self._checked_int("ssub", self.const(0), self.as_int(x))

    def abs(self, x) -> Num:
        x = self.num(x)
        if x.kind == "float":
            return Num(self._intrinsic("llvm.fabs", x.value), "float")
        x = self.as_int(x)
        negative = self.b.icmp_signed("<", x.value, ir.Constant(I64, 0))
        return Num(self.b.select(negative, self.neg(x).value, x.value), "int")

    def _int_divmod(self, x, y, *, floor: bool) -> tuple[ir.Value, ir.Value]:
        """(quotient, remainder) of ints, rounded toward -inf when `floor`, else toward zero;
        a zero divisor and INT64_MIN / -1 are refused."""
        b = self.b
        x, y = self.as_int(x).value, self.as_int(y).value
        zero = ir.Constant(I64, 0)
        self.refuse_if(b.icmp_signed("==", y, zero))
        self.refuse_if(b.and_(b.icmp_signed("==", x, ir.Constant(I64, INT64_MIN)),
                              b.icmp_signed("==", y, ir.Constant(I64, -1))))
        q, r = b.sdiv(x, y), b.srem(x, y)
        if floor:  # a non-zero remainder whose sign differs from the divisor's
            adjust = b.and_(b.icmp_signed("!=", r, zero),
                            b.icmp_signed("<", b.xor(r, y), zero))
            q = b.select(adjust, b.sub(q, ir.Constant(I64, 1)), q)
            r = b.select(adjust, b.add(r, y), r)
        return q, r

    def _float_divmod(self, x: ir.Value, y: ir.Value) -> tuple[ir.Value, ir.Value]:
        """Python's float floordiv and mod (floatobject.c's float_divmod) of a non-zero y."""
        b = self.b
        zero = ir.Constant(F64, 0.0)
        mod = b.frem(x, y)
        div = b.fdiv(b.fsub(x, mod), y)
        nonzero = b.fcmp_unordered("!=", mod, zero)
        signs_differ = b.xor(b.fcmp_ordered("<", y, zero), b.fcmp_ordered("<", mod, zero))
        adjust = b.and_(nonzero, signs_differ)
        mod = b.select(adjust, b.fadd(mod, y), mod)
        div = b.select(adjust, b.fsub(div, ir.Constant(F64, 1.0)), div)
        mod = b.select(nonzero, mod, self._intrinsic("llvm.copysign", zero, y))
        floordiv = self._intrinsic("llvm.floor", div)
        floordiv = b.select(b.fcmp_ordered(">", b.fsub(div, floordiv), ir.Constant(F64, 0.5)),
                            b.fadd(floordiv, ir.Constant(F64, 1.0)), floordiv)
        quotient = b.fdiv(x, y)
        floordiv = b.select(b.fcmp_unordered("!=", div, zero), floordiv,
                            self._intrinsic("llvm.copysign", zero, quotient))
        return floordiv, mod

    def floordiv(self, x, y) -> Num:
        if not self._is_float(x, y):
            return Num(self._int_divmod(x, y, floor=True)[0], "int")
        b = self.b
        x, y = self.to_float(x).value, self.to_float(y).value
        self.refuse_if(self._inf(x))  # the interpreter's floor(inf / y) raises
        floordiv, _ = self._float_divmod(x, y)
        by_zero = b.fcmp_ordered("==", y, ir.Constant(F64, 0.0))  # x // 0.0 is x / 0.0
        return Num(b.select(by_zero, b.fdiv(x, y), floordiv), "float")

    def remainder(self, x, y) -> Num:
        if not self._is_float(x, y):
            return Num(self._int_divmod(x, y, floor=True)[1], "int")
        b = self.b
        x, y = self.to_float(x).value, self.to_float(y).value
        _, mod = self._float_divmod(x, y)
        nan = b.or_(b.fcmp_ordered("==", y, ir.Constant(F64, 0.0)), self._inf(x))
        return Num(b.select(nan, ir.Constant(F64, float("nan")), mod), "float")

    def round_to_zero_floordiv(self, x, y) -> Num:
        return Num(self._int_divmod(x, y, floor=False)[0], "int")

    def fmod(self, x, y) -> Num:
        return Num(self.b.frem(self.to_float(x).value, self.to_float(y).value), "float")

    def copysign(self, x, y) -> Num:
        return Num(self._intrinsic("llvm.copysign", self.to_float(x).value, self.to_float(y).value),
                   "float")

    def pow(self, x, y) -> Num:
        """Float power; 0.0 to a negative power is refused (the interpreter raises)."""
        b = self.b
        x, y = self.to_float(x).value, self.to_float(y).value
        zero = ir.Constant(F64, 0.0)
        self.refuse_if(b.and_(b.fcmp_ordered("==", x, zero), b.fcmp_ordered("<", y, zero)))
        return self.call("pow", Num(x, "float"), Num(y, "float"))

    # ---- comparisons (ints against floats exactly, as Python compares them)
    _PREDICATES = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}

    def _compare(self, name: str, x, y) -> Num:
        x, y = self.num(x), self.num(y)
        op = self._PREDICATES[name]
        b = self.b
        if x.kind != "float" and y.kind != "float":
            return Num(b.icmp_signed(op, self.as_int(x).value, self.as_int(y).value), "bool")
        if x.kind == "float" and y.kind == "float":
            cmp = b.fcmp_unordered if name == "ne" else b.fcmp_ordered
            return Num(cmp(op, x.value, y.value), "bool")
        if x.kind == "float":  # float op int == int (mirrored op) float
            mirrored = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}.get(name, name)
            return self._compare(mirrored, y, x)
        return Num(self._compare_int_float(op, self.as_int(x).value, y.value), "bool")

    def _compare_int_float(self, op: str, i: ir.Value, f: ir.Value) -> ir.Value:
        """i op f exactly: where the rounded int differs from f the float comparison decides
        (rounding is monotone); where they are equal f is integral, compared as an int (or
        it is 2**63, above every int64)."""
        b = self.b
        d = b.sitofp(i, F64)
        by_float = b.fcmp_unordered(op, d, f) if op == "!=" else b.fcmp_ordered(op, d, f)
        big = b.fcmp_ordered(">=", f, ir.Constant(F64, TWO_63))
        fi = b.fptosi(b.select(big, ir.Constant(F64, 0.0), f), I64)
        by_int = b.select(big, ir.Constant(I1, int(op in ("<", "<=", "!="))), b.icmp_signed(op, i, fi))
        return b.select(b.fcmp_ordered("==", d, f), by_int, by_float)

    def _pick(self, x, y, better: str) -> Num:
        """The interpreter's prim::max/min (Python's max/min: `y if y (>|<) x else x`), a
        float when either is (the schema's type); a nan operand is refused (Python's answer
        then depends on the operand order)."""
        x, y = self.num(x), self.num(y)
        take_y = self._compare(better, y, x).value
        if not self._is_float(x, y):
            return Num(self.b.select(take_y, self.as_int(y).value, self.as_int(x).value), "int")
        fx, fy = self.to_float(x).value, self.to_float(y).value
        self.refuse_if(self.b.or_(self._nan(fx), self._nan(fy)))
        return Num(self.b.select(take_y, fy, fx), "float")

    def maximum(self, x, y) -> Num:
        return self._pick(x, y, "gt")

    def minimum(self, x, y) -> Num:
        return self._pick(x, y, "lt")

    # ---- logic
    def not_(self, x) -> Num:
        return Num(self.b.not_(self.to_bool(x).value), "bool")

    def _bitwise(self, fn: Callable, x, y) -> Num:
        x, y = self.num(x), self.num(y)
        if x.kind == "bool" and y.kind == "bool":
            return Num(fn(x.value, y.value), "bool")
        return Num(fn(self.as_int(x).value, self.as_int(y).value), "int")

    def and_(self, x, y) -> Num:
        return self._bitwise(self.b.and_, x, y)

    def or_(self, x, y) -> Num:
        return self._bitwise(self.b.or_, x, y)

    def xor(self, x, y) -> Num:
        return self._bitwise(self.b.xor, x, y)

    def all(self, xs) -> Num:
        if isinstance(xs, ListArg):  # no element is false
            return self.not_(self.contains(xs, {"bool": False, "int": 0, "float": 0.0}[xs.kind]))
        result = ir.Constant(I1, 1)
        for x in self._list(xs):
            result = self.b.and_(result, self.to_bool(x).value)
        return Num(result, "bool")

    def any(self, xs) -> Num:
        if isinstance(xs, ListArg):
            if xs.kind != "bool":
                raise NotLowerable("any() of a list argument of numbers")
            return self.contains(xs, True)
        result = ir.Constant(I1, 0)
        for x in self._list(xs):
            result = self.b.or_(result, self.to_bool(x).value)
        return Num(result, "bool")

    def _list(self, xs) -> list:
        """The items of a list built in the program or a constant list."""
        if not isinstance(xs, (list, tuple)):
            raise NotLowerable("a list that is neither built in the program nor constant")
        return list(xs)

    # ---- lists: built in the program (Python lists of numbers) or list arguments
    def length(self, xs) -> Num:
        if isinstance(xs, ListArg):
            return Num(xs.length, "int")
        return self.const(len(self._list(xs)))

    def _index(self, xs, idx) -> ir.Value:
        """`idx` made non-negative (Python's negative indices); out of range is refused."""
        b = self.b
        n = self.length(xs).value
        i = self.as_int(idx).value
        i = b.select(b.icmp_signed("<", i, ir.Constant(I64, 0)), b.add(i, n), i)
        self.refuse_if(b.or_(b.icmp_signed("<", i, ir.Constant(I64, 0)), b.icmp_signed(">=", i, n)))
        return i

    def _load(self, xs: ListArg, i: ir.Value) -> Num:
        ty = I8 if xs.kind == "bool" else LLVM_TYPES[xs.kind]
        value = self.b.load(self.b.gep(xs.data, [i], source_etype=ty), typ=ty)
        return Num(self.b.icmp_unsigned("!=", value, ir.Constant(I8, 0)) if xs.kind == "bool" else value,
                   xs.kind)

    def getitem(self, xs, idx) -> Num:
        i = self._index(xs, idx)
        if isinstance(xs, ListArg):
            return self._load(xs, i)
        items = [self.num(x) for x in self._list(xs)]
        kinds = {x.kind for x in items}
        if len(kinds) != 1:
            raise NotLowerable("a list of numbers of different kinds")
        result = items[-1].value
        for k in reversed(range(len(items) - 1)):
            result = self.b.select(self.b.icmp_signed("==", i, ir.Constant(I64, k)), items[k].value, result)
        return Num(result, kinds.pop())

    def contains(self, xs, item) -> Num:
        """`item in xs` by ==; a nan item is refused (Python compares identity first)."""
        item = self.num(item)
        if item.kind == "float":
            self.refuse_if(self._nan(item.value))
        if not isinstance(xs, ListArg):
            return self.any([self.eq(x, item) for x in self._list(xs)])
        b = self.b
        before = b.block
        head, body, done = (b.append_basic_block(n) for n in ("in_head", "in_body", "in_done"))
        b.branch(head)
        b.position_at_end(head)
        i = b.phi(I64)
        found = b.phi(I1)
        i.add_incoming(ir.Constant(I64, 0), before)
        found.add_incoming(ir.Constant(I1, 0), before)
        b.cbranch(b.and_(b.not_(found), b.icmp_signed("<", i, xs.length)), body, done)
        b.position_at_end(body)
        hit = self.eq(self._load(xs, i), item).value
        i.add_incoming(b.add(i, ir.Constant(I64, 1)), b.block)
        found.add_incoming(hit, b.block)
        b.branch(head)
        b.position_at_end(done)
        return Num(found, "bool")

    def defined(self, x) -> Num:
        """Whether a tensor argument is not None (compared with None's address)."""
        if x is None:
            return self.const(False)
        if not isinstance(x, TensorArg):
            raise NotLowerable("an autograd check of a value that is not a tensor")
        none = self._guards.process_address("None")
        return Num(self.b.icmp_unsigned("!=", self.b.ptrtoint(x.obj, I64), none), "bool")

    def is_none(self, x) -> Num:
        """`x is None` for a value of a program: a tensor argument may be, a number is not."""
        if x is None:
            return self.const(True)
        if isinstance(x, TensorArg):
            return self.not_(self.defined(x))
        if isinstance(x, Num):
            return self.const(False)
        raise NotLowerable("`is None` of a value that is neither a number nor a tensor")

    def _checked_buffer(self, x) -> Buffer:
        """The layout of a tensor argument, checked at run time (guards emitted here)."""
        if not isinstance(x, TensorArg) or x.buffer is None:
            raise NotLowerable("the layout of a tensor without a complete type")
        self._guards.array(x.obj, x.buffer, x.buffer.position)
        return x.buffer

    def dim(self, x) -> Num:
        return self.const(len(self._checked_buffer(x).sizes))

    def numel(self, x) -> Num:
        return self.const(int(np.prod(self._checked_buffer(x).sizes)))

    def size(self, x, dim) -> Num:
        """The size of dimension `dim` (negative from the end); out of range is refused."""
        sizes = self._checked_buffer(x).sizes
        if not sizes:
            raise NotLowerable("the size of a 0-dim tensor")
        b = self.b
        d = self.as_int(dim).value
        rank = ir.Constant(I64, len(sizes))
        d = b.select(b.icmp_signed("<", d, ir.Constant(I64, 0)), b.add(d, rank), d)
        self.refuse_if(b.or_(b.icmp_signed("<", d, ir.Constant(I64, 0)), b.icmp_signed(">=", d, rank)))
        result = ir.Constant(I64, sizes[-1])
        for k in reversed(range(len(sizes) - 1)):
            result = b.select(b.icmp_signed("==", d, ir.Constant(I64, k)), ir.Constant(I64, sizes[k]), result)
        return Num(result, "int")

    def item(self, x, zero_dim: bool = False) -> Num:
        """The one element of a tensor argument (its layout checked at run time) as a
        number of its dtype's kind; `zero_dim` for the implicit conversions' rank check."""
        if not isinstance(x, TensorArg) or x.buffer is None:
            raise NotLowerable("the value of a tensor without a complete type")
        buf = x.buffer
        if int(np.prod(buf.sizes)) != 1 or zero_dim and buf.sizes:
            raise NotLowerable("a number from a tensor of more than one element")
        data = self._guards.array(x.obj, buf, buf.position)
        value = from_memory(self.b, self.b.load(data, typ=memory_type(buf.dtype)), buf.dtype)
        if buf.dtype.kind == "f":
            return Num(self.b.fpext(value, F64) if value.type != F64 else value, "float")
        if buf.dtype.kind == "b":
            return Num(value, "bool")
        return Num(self.b.sext(value, I64) if value.type != I64 else value, "int")

    # ---- float predicates and math functions
    def _nan(self, f: ir.Value) -> ir.Value:
        return self.b.fcmp_unordered("uno", f, f)

    def _inf(self, f: ir.Value) -> ir.Value:
        return self.b.fcmp_ordered("==", self._intrinsic("llvm.fabs", f), ir.Constant(F64, float("inf")))

    def isnan(self, x) -> Num:
        return Num(self._nan(self.to_float(x).value), "bool")

    def isinf(self, x) -> Num:
        return Num(self._inf(self.to_float(x).value), "bool")

    def isfinite(self, x) -> Num:
        f = self.to_float(x).value
        return Num(self.b.fcmp_ordered("<", self._intrinsic("llvm.fabs", f), ir.Constant(F64, float("inf"))),
                   "bool")

    def call(self, name: str, *xs) -> Num:
        if name not in self._math:
            raise NotLowerable(f"the math library has no {name}")
        from . import mathlib
        return Num(mathlib.emit(self.b, name, [self.to_float(x).value for x in xs]), "float")
