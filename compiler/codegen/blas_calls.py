"""Calls from LLVM IR into a `BlasLibrary`'s GEMM and GEMV, stated in row-major terms and
translated to the library's ABI: CBLAS (row-major, arguments by value) or Fortran (column-major,
every argument by pointer)."""

from __future__ import annotations

from llvmlite import ir

from .blas_library import CBLAS_NO_TRANS, CBLAS_ROW_MAJOR, CBLAS_TRANS, BlasLibrary
from .ir_loops import entry_alloca

I8 = ir.IntType(8)
I32 = ir.IntType(32)
_LETTER = {"float32": "s", "float64": "d"}


def call_gemm(b: ir.IRBuilder, library: BlasLibrary, dtype: str, x_trans, y_trans, rows, cols, k,
              alpha, x, x_ld, y, y_ld, beta, c, c_ld) -> None:
    """C (rows×cols, row-major) = alpha * op(X) @ op(Y) + beta * C; op transposes a row-major
    stored operand when its flag (i1) is set."""
    name = library.symbol(_LETTER[dtype] + "gemm")
    if library.abi == "cblas":
        _call(b, name, [_i32(CBLAS_ROW_MAJOR), _cblas_trans(b, x_trans), _cblas_trans(b, y_trans),
                        rows, cols, k, alpha, x, x_ld, y, y_ld, beta, c, c_ld])
        return
    # Column-major, the row-major C is C^T = op(Y)^T op(X)^T, and a row-major operand read
    # column-major is already transposed: Y goes first and each operand keeps its flag.
    n = _fortran_int(b, library)
    _call_by_reference(b, name, [
        (_fortran_trans(b, y_trans), True), (_fortran_trans(b, x_trans), True),
        (n(cols), True), (n(rows), True), (n(k), True), (alpha, True), (y, False), (n(y_ld), True),
        (x, False), (n(x_ld), True), (beta, True), (c, False), (n(c_ld), True)])


def call_gemv(b: ir.IRBuilder, library: BlasLibrary, dtype: str, trans, stored_rows, stored_cols,
              alpha, a, lda, x, x_inc, beta, y, y_inc) -> None:
    """y = alpha * op(A) @ x + beta * y for a row-major stored A (stored_rows×stored_cols, leading
    dimension lda); op transposes when `trans` (i1) is set; increments are positive."""
    name = library.symbol(_LETTER[dtype] + "gemv")
    if library.abi == "cblas":
        _call(b, name, [_i32(CBLAS_ROW_MAJOR), _cblas_trans(b, trans), stored_rows, stored_cols,
                        alpha, a, lda, x, x_inc, beta, y, y_inc])
        return
    # column-major sees the stored A transposed: swap its dims and flip the flag
    n = _fortran_int(b, library)
    _call_by_reference(b, name, [
        (_fortran_trans(b, b.not_(trans)), True), (n(stored_cols), True), (n(stored_rows), True),
        (alpha, True), (a, False), (n(lda), True), (x, False), (n(x_inc), True), (beta, True),
        (y, False), (n(y_inc), True)])


def _i32(v: int) -> ir.Constant:
    return ir.Constant(I32, v)


def _cblas_trans(b: ir.IRBuilder, flag) -> ir.Value:
    return b.select(flag, _i32(CBLAS_TRANS), _i32(CBLAS_NO_TRANS))


def _fortran_trans(b: ir.IRBuilder, flag) -> ir.Value:
    return b.select(flag, ir.Constant(I8, ord("T")), ir.Constant(I8, ord("N")))


def _fortran_int(b: ir.IRBuilder, library: BlasLibrary):
    """i64 -> the library's integer (callers check 32-bit values fit before calling)."""
    if library.int_bits == 64:
        return lambda v: v
    return lambda v: b.trunc(v, ir.IntType(library.int_bits))


def _declare(module: ir.Module, name: str, arg_types: list[ir.Type]) -> ir.Function:
    existing = module.globals.get(name)
    return existing if existing is not None else ir.Function(
        module, ir.FunctionType(ir.VoidType(), arg_types), name)


def _call(b: ir.IRBuilder, name: str, args: list[ir.Value]) -> None:
    b.call(_declare(b.module, name, [a.type for a in args]), args)


def _call_by_reference(b: ir.IRBuilder, name: str, args: list[tuple[ir.Value, bool]]) -> None:
    """Call with each (value, by_reference) argument passed as is or through a stack slot."""
    values = []
    for value, by_reference in args:
        if by_reference:
            slot = entry_alloca(b, value.type)
            b.store(value, slot)
            value = slot
        values.append(value)
    _call(b, name, values)
