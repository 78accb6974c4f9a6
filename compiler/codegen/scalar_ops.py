"""Scalar operations on LLVM values of the kernel dtypes (float32/64, int32/64, bool), with
PyTorch's semantics: NaN-propagating min/max, true division, casts as `Tensor.to`. Math
functions come from `mathlib` as inline code; only LLVM intrinsics that never become libm
calls (sqrt, fabs, floor, ...) are used here."""

from __future__ import annotations

import math
import struct
from typing import Callable

import numpy as np
from llvmlite import ir

F32 = np.dtype(np.float32)
F64 = np.dtype(np.float64)
I64D = np.dtype(np.int64)
I32D = np.dtype(np.int32)
BOOL = np.dtype(np.bool_)
SUPPORTED_DTYPES = frozenset({F32, F64, I64D, I32D, BOOL})

_REG = {F32: ir.FloatType(), F64: ir.DoubleType(), I64D: ir.IntType(64), I32D: ir.IntType(32),
        BOOL: ir.IntType(1)}
_MEM = {**_REG, BOOL: ir.IntType(8)}


def register_type(dtype: np.dtype) -> ir.Type:
    return _REG[np.dtype(dtype)]


def memory_type(dtype: np.dtype) -> ir.Type:
    return _MEM[np.dtype(dtype)]


def is_float(dtype: np.dtype) -> bool:
    return np.dtype(dtype).kind == "f"


def from_memory(b: ir.IRBuilder, v: ir.Value, dtype: np.dtype) -> ir.Value:
    return b.icmp_unsigned("!=", v, ir.Constant(v.type, 0)) if dtype == BOOL else v


def to_memory(b: ir.IRBuilder, v: ir.Value, dtype: np.dtype) -> ir.Value:
    return b.zext(v, ir.IntType(8)) if dtype == BOOL else v


def constant(value, dtype: np.dtype) -> ir.Constant:
    """An exact constant: float32 values are rounded to float32 first (LLVM IR requires
    float constants that the type represents exactly)."""
    ty = register_type(dtype)
    if dtype == F32:
        return ir.Constant(ty, struct.unpack("f", struct.pack("f", float(value)))[0])
    if dtype == F64:
        return ir.Constant(ty, float(value))
    return ir.Constant(ty, int(value))


def cast(b: ir.IRBuilder, v: ir.Value, src: np.dtype, dst: np.dtype) -> ir.Value:
    src, dst = np.dtype(src), np.dtype(dst)
    if src == dst:
        return v
    ty = register_type(dst)
    if dst == BOOL:
        if is_float(src):
            return b.fcmp_unordered("!=", v, ir.Constant(v.type, 0.0))
        return b.icmp_unsigned("!=", v, ir.Constant(v.type, 0))
    if src == BOOL:
        return b.uitofp(v, ty) if is_float(dst) else b.zext(v, ty)
    if is_float(src) and is_float(dst):
        return b.fpext(v, ty) if dst.itemsize > src.itemsize else b.fptrunc(v, ty)
    if is_float(src):
        return b.fptosi(v, ty)
    if is_float(dst):
        return b.sitofp(v, ty)
    return b.sext(v, ty) if dst.itemsize > src.itemsize else b.trunc(v, ty)


def _intrinsic(b: ir.IRBuilder, name: str, args: list) -> ir.Value:
    ty = args[0].type
    fn = b.module.declare_intrinsic(name, [ty], ir.FunctionType(ty, [a.type for a in args]))
    return b.call(fn, args)


def _float_or_int(fop: Callable, iop: Callable) -> Callable:
    return lambda b, args, dt: fop(b, *args) if is_float(dt) else iop(b, *args)


_CMP = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}


def _compare(op: str) -> Callable:
    def emit(b, args, dt):
        x, y = args
        if isinstance(x.type, (ir.FloatType, ir.DoubleType)):
            if op == "ne":
                return b.fcmp_unordered("!=", x, y)
            return b.fcmp_ordered(_CMP[op], x, y)
        if x.type == ir.IntType(1):
            return b.icmp_unsigned(_CMP[op], x, y)
        return b.icmp_signed(_CMP[op], x, y)
    return emit


def _minmax(which: str) -> Callable:
    def emit(b, args, dt):
        x, y = args
        if is_float(dt):
            return _intrinsic(b, "llvm.maximum" if which == "max" else "llvm.minimum", [x, y])
        if dt == BOOL:
            return b.or_(x, y) if which == "max" else b.and_(x, y)
        cmp = b.icmp_signed(">" if which == "max" else "<", x, y)
        return b.select(cmp, x, y)
    return emit


def _abs(b, args, dt):
    (x,) = args
    if is_float(dt):
        return _intrinsic(b, "llvm.fabs", [x])
    if dt == BOOL:
        return x
    return b.select(b.icmp_signed("<", x, ir.Constant(x.type, 0)), b.neg(x), x)


def _rounding(intrinsic: str) -> Callable:
    return lambda b, args, dt: _intrinsic(b, intrinsic, args) if is_float(dt) else args[0]


def _sign(b, args, dt):
    (x,) = args
    if dt == BOOL:
        return x
    zero = ir.Constant(x.type, 0.0 if is_float(dt) else 0)
    one = ir.Constant(x.type, 1.0 if is_float(dt) else 1)
    if is_float(dt):
        pos = b.uitofp(b.fcmp_ordered(">", x, zero), x.type)
        neg = b.uitofp(b.fcmp_ordered("<", x, zero), x.type)
        s = b.fsub(pos, neg)
        return b.select(b.fcmp_unordered("uno", x, x), x, s)  # NaN stays NaN
    return b.sub(b.zext(b.icmp_signed(">", x, zero), x.type), b.zext(b.icmp_signed("<", x, zero), x.type))


# name -> emit(builder, args, dtype) -> value; `dtype` is the operands' (common) dtype for
# comparisons and the result dtype otherwise.
SCALAR_OPS: dict[str, Callable] = {
    "add": _float_or_int(lambda b, x, y: b.fadd(x, y), lambda b, x, y: b.add(x, y)),
    "sub": _float_or_int(lambda b, x, y: b.fsub(x, y), lambda b, x, y: b.sub(x, y)),
    "mul": _float_or_int(lambda b, x, y: b.fmul(x, y), lambda b, x, y: b.mul(x, y)),
    "div": lambda b, args, dt: b.fdiv(*args),
    "neg": _float_or_int(lambda b, x: b.fneg(x), lambda b, x: b.neg(x)),
    "max": _minmax("max"), "min": _minmax("min"),
    "abs": _abs, "sign": _sign,
    "sqrt": lambda b, args, dt: _intrinsic(b, "llvm.sqrt", args),
    "floor": _rounding("llvm.floor"), "ceil": _rounding("llvm.ceil"),
    "trunc": _rounding("llvm.trunc"), "round": _rounding("llvm.roundeven"),
    "copysign": lambda b, args, dt: _intrinsic(b, "llvm.copysign", args),
    "select": lambda b, args, dt: b.select(*args),
    "and": lambda b, args, dt: b.and_(*args), "or": lambda b, args, dt: b.or_(*args),
    "xor": lambda b, args, dt: b.xor(*args),
    "not": lambda b, args, dt: b.not_(args[0]),
    "isnan": lambda b, args, dt: b.fcmp_unordered("uno", args[0], args[0]),
    **{name: _compare(name) for name in _CMP},
    # index arithmetic (truncating, non-zero constant divisors)
    "idiv": lambda b, args, dt: b.sdiv(*args), "irem": lambda b, args, dt: b.srem(*args),
}


def math_functions() -> frozenset:
    """The names `mathlib` emits inline (empty until the math library is present)."""
    try:
        from . import mathlib
    except ImportError:
        return frozenset()
    return frozenset(mathlib.FUNCTIONS)


def emit_op(b: ir.IRBuilder, name: str, args: list, arg_dtypes: list, dtype: np.dtype) -> ir.Value:
    if name == "cast":
        return cast(b, args[0], arg_dtypes[0], dtype)
    if name.startswith("math."):
        from . import mathlib
        return mathlib.emit(b, name[5:], args)
    if name in _CMP:
        return SCALAR_OPS[name](b, args, arg_dtypes[0])
    if name == "select":
        return b.select(*args)
    return SCALAR_OPS[name](b, args, dtype)


def reduce_identity(combine: str, dtype: np.dtype) -> ir.Constant:
    if combine in ("sum", "prod"):
        return constant(int(combine == "prod"), dtype)
    if is_float(dtype):
        return constant(-math.inf if combine == "max" else math.inf, dtype)
    if dtype == BOOL:
        return constant(combine == "min", dtype)
    info = np.iinfo(dtype)
    return constant(info.min if combine == "max" else info.max, dtype)


def combine(b: ir.IRBuilder, how: str, acc: ir.Value, x: ir.Value, dtype: np.dtype) -> ir.Value:
    """One step of a reduction; float sums may be reassociated (so they vectorize)."""
    if how == "sum":
        if is_float(dtype):
            return b.fadd(acc, x, flags=("reassoc", "nsz"))
        return b.add(acc, x)
    if how == "prod":
        return b.fmul(acc, x) if is_float(dtype) else b.mul(acc, x)
    return SCALAR_OPS[how](b, [acc, x], dtype)
