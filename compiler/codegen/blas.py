"""Matrix products for generated code: `emit_gemm` emits `C = alpha * A @ B + beta * C` as a
call to a per-module function (always inlined, so constant sizes and strides fold) that picks at
run time the loop kernel (tiny products, int64, no BLAS here) or the BLAS `blas_library` found:
GEMV for matrix-vector products, GEMM otherwise.

API for the code generator:
- `Matrix(ptr, row_stride, col_stride)`: a strided operand; `ptr` is `float*`/`double*`/`i64*`,
  strides are in elements, as i64 values (constants or run time) or Python ints.
- `emit_gemm(builder, dtype, m, n, k, a, b, c, alpha=1, beta=0, scratch=None)`: A is m×k, B k×n,
  C m×n; dtype "float32", "float64" or "int64"; beta == 0 overwrites C without reading it. C
  must not overlap A or B. An operand with unit row or column stride goes to BLAS as is (the
  transpose flags say which); any other operand is copied into `scratch`, a caller-provided
  buffer of `gemm_scratch_elems(m, n, k, a_strides, b_strides)` elements (0 when both operands
  are usable as they are; without strides, enough for any), or, when `scratch` is None, the
  product runs in the loop kernel instead (correct, slower). A C with neither unit stride also
  uses the loop kernel.
  A CBLAS-style operand with leading dimension ld is `Matrix(ptr, ld, 1)`, transposed
  `Matrix(ptr, 1, ld)`.
- `matmul.py` builds batched products (`torch.matmul`) on `emit_gemm`.
- Symbols: emitting registers the BLAS functions with the JIT (`llvm.add_symbol`); code loaded
  some other way (an object cache) calls `register_symbols()` before it is linked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence, Union

from llvmlite import ir

from . import blas_calls, blas_library, gemm_kernel, parallel
from .blas_library import BlasLibrary
from .ir_loops import I64, element, for_range, i64, smax

ELEMENT_TYPES = {"float32": ir.FloatType(), "float64": ir.DoubleType(), "int64": ir.IntType(64)}

# Products with m*n*k at most this run in the loop kernel. tools/bench_gemm.py on this machine
# (2-core AMD EPYC, AVX-512; float32, run-time sizes, per call): 5x5x5 loop 0.07 µs vs OpenBLAS
# 0.10 µs, 6x6x6 0.15 vs 0.11, 8x8x8 0.17 vs 0.11; square products cross over between 125 and 216,
# in float64 too (5x5x5 0.09 vs 0.12 µs, 6x6x6 0.135 vs 0.133).
SMALL_GEMM_VOLUME = 128

DEFAULT = "default"  # `library` argument: the fastest BLAS found here (None: loop kernel only)


@dataclass(frozen=True)
class Matrix:
    """A strided matrix operand: element pointer and row/column strides in elements."""
    ptr: ir.Value
    row_stride: Union[ir.Value, int]
    col_stride: Union[ir.Value, int]

    def transposed(self) -> "Matrix":
        return Matrix(self.ptr, self.col_stride, self.row_stride)


def gemm_scratch_elems(m: int, n: int, k: int, a_strides: Optional[Sequence[int]] = None,
                       b_strides: Optional[Sequence[int]] = None) -> int:
    """Elements of the scratch buffer `emit_gemm` may copy an m×k A and a k×n B into: when an
    operand's (row, column) strides are given, only if it has no unit stride BLAS can use."""
    a_size = 0 if a_strides is not None and _blas_can_read(m, k, *a_strides) else m * k
    b_size = 0 if b_strides is not None and _blas_can_read(k, n, *b_strides) else k * n
    return a_size + b_size


def _blas_can_read(rows: int, cols: int, rs: int, cs: int) -> bool:
    """Python twin of `_Operand.row_major() or _Operand.column_major()` for known strides."""
    row_major = (cs == 1 or cols <= 1) and (rows <= 1 or rs >= max(1, cols))
    column_major = (rs == 1 or rows <= 1) and (cols <= 1 or cs >= max(1, rows))
    return row_major or column_major


def register_symbols(library: Union[BlasLibrary, None, str] = DEFAULT) -> None:
    """Make the BLAS functions generated code calls resolvable; run before JIT-linking."""
    library = _resolve(library)
    if library is not None:
        library.register_symbols()


def emit_gemm(builder: ir.IRBuilder, dtype: str, m, n, k, a: Matrix, b: Matrix, c: Matrix,
              alpha=1, beta=0, scratch: Optional[ir.Value] = None,
              library: Union[BlasLibrary, None, str] = DEFAULT,
              small_volume: int = SMALL_GEMM_VOLUME) -> None:
    """Emit `C = alpha * A @ B + beta * C` (A m×k, B k×n, C m×n) at the builder's position;
    products with m*n*k <= small_volume run without BLAS: straight-line code when the sizes are
    Python ints, else the loop kernel."""
    library = _resolve(library) if dtype != "int64" else None
    ety = ELEMENT_TYPES[dtype]
    if all(isinstance(d, int) for d in (m, n, k)) and max(m * n * k, m * n) <= small_volume:
        gemm_kernel.emit_unrolled(builder, ety, m, n, k, alpha, _strided(a), _strided(b),
                                  _strided(c), beta)
        return
    if library is not None and _emit_known_call(builder, dtype, library, m, n, k, a, b, c, alpha,
                                                beta, scratch, small_volume):
        return
    fn = _gemm_function(builder.module, dtype, library, small_volume)
    if scratch is None:
        scratch = ir.Constant(ety.as_pointer(), None)
    builder.call(fn, [i64(m), i64(n), i64(k), _scalar(ety, alpha),
                      a.ptr, i64(a.row_stride), i64(a.col_stride),
                      b.ptr, i64(b.row_stride), i64(b.col_stride), _scalar(ety, beta),
                      c.ptr, i64(c.row_stride), i64(c.col_stride), scratch])


def _gemm_function(module: ir.Module, dtype: str, library: Optional[BlasLibrary],
                   small_volume: int) -> ir.Function:
    """The module's GEMM entry for `dtype` and `library`: the kernel signature plus a scratch
    pointer; defined on first use, internal, always inlined so constant sizes and strides fold."""
    ety = ELEMENT_TYPES[dtype]
    name = f"irjit_gemm_{dtype}_{library.symbol('gemm') if library else 'loops'}"
    name += f"_{small_volume}" if library else ""
    existing = module.globals.get(name)
    if existing is not None:
        return existing
    kernel = gemm_kernel.kernel_function(module, ety, f"irjit_gemm_kernel_{dtype}")
    sig = gemm_kernel.signature(ety)
    fn = ir.Function(module, ir.FunctionType(sig.return_type, list(sig.args) + [ety.as_pointer()]), name)
    fn.linkage = "internal"
    fn.attributes.add("alwaysinline")
    builder = ir.IRBuilder(fn.append_basic_block("entry"))
    *args, scratch = fn.args
    use_loops = builder.append_basic_block("loops")
    if library is None:
        builder.branch(use_loops)
    else:
        library.register_symbols()
        use_blas = builder.append_basic_block("blas")
        builder.cbranch(_is_small(builder, *args[:3], small_volume), use_loops, use_blas)
        builder.position_at_end(use_blas)
        _emit_blas_call(builder, dtype, library, args, scratch, use_loops)
    builder.position_at_end(use_loops)
    builder.call(kernel, args)
    builder.ret_void()
    return fn


def _is_small(builder: ir.IRBuilder, m, n, k, small_volume: int) -> ir.Value:
    """m*n*k <= small_volume, computed without overflow; zero-size products are small too."""
    b, limit = builder, i64(small_volume)
    each = [b.icmp_signed("<=", d, limit) for d in (m, n, k)]
    volume = b.icmp_signed("<=", b.mul(b.mul(m, n), k), limit)
    small = b.and_(b.and_(each[0], each[1]), b.and_(each[2], volume))
    empty = [b.icmp_signed("==", d, i64(0)) for d in (m, n, k)]
    return b.or_(small, b.or_(empty[0], b.or_(empty[1], empty[2])))


@dataclass
class _Operand:
    """A rows×cols operand's layout as BLAS sees it: row-major as is, or column-major (its
    transpose is row-major), or neither (copied into scratch first)."""
    ptr: ir.Value
    rs: ir.Value
    cs: ir.Value
    rows: ir.Value
    cols: ir.Value

    def row_major(self, b: ir.IRBuilder) -> ir.Value:
        return _unit_and_leading(b, self.cs, self.cols, self.rs, self.rows)

    def column_major(self, b: ir.IRBuilder) -> ir.Value:
        return _unit_and_leading(b, self.rs, self.rows, self.cs, self.cols)

    def row_major_ld(self, b: ir.IRBuilder) -> ir.Value:
        return b.select(_at_most_one(b, self.rows), smax(b, 1, self.cols), self.rs)

    def column_major_ld(self, b: ir.IRBuilder) -> ir.Value:
        return b.select(_at_most_one(b, self.cols), smax(b, 1, self.rows), self.cs)


def _at_most_one(b: ir.IRBuilder, v) -> ir.Value:
    return b.icmp_signed("<=", v, i64(1))


def _unit_and_leading(b: ir.IRBuilder, inner_stride, inner, outer_stride, outer) -> ir.Value:
    """Inner stride 1 (or one inner element) and an outer stride that skips whole inner runs."""
    unit = b.or_(b.icmp_signed("==", inner_stride, i64(1)), _at_most_one(b, inner))
    leading = b.or_(b.icmp_signed(">=", outer_stride, smax(b, 1, inner)), _at_most_one(b, outer))
    return b.and_(unit, leading)


def _emit_blas_call(builder: ir.IRBuilder, dtype: str, library: BlasLibrary, args, scratch,
                    use_loops: ir.Block) -> None:
    """Call the BLAS: GEMV for a matrix-vector product, else GEMM (copying operands without a
    unit stride into scratch); a C without a unit stride, or copies without scratch, branch
    to `use_loops`."""
    b = builder
    m, n, k, alpha, a, a_rs, a_cs, bp, b_rs, b_cs, beta, c, c_rs, c_cs = args
    c_row = _Operand(c, c_rs, c_cs, m, n).row_major(b)
    c_col = _Operand(c, c_rs, c_cs, m, n).column_major(b)
    # A column-major C is the row-major C^T = B^T A^T: swap the operands and transpose all three.
    swap = b.not_(c_row)
    pick = lambda x, y: b.select(swap, y, x)
    rows, cols = pick(m, n), pick(n, m)
    x = _Operand(pick(a, bp), pick(a_rs, b_cs), pick(a_cs, b_rs), rows, k)
    y = _Operand(pick(bp, a), pick(b_rs, a_cs), pick(b_cs, a_rs), k, cols)
    out = _Operand(c, pick(c_rs, c_cs), pick(c_cs, c_rs), rows, cols)
    c_usable = b.or_(c_row, c_col)
    fits = _fits_library_ints(b, library)

    gemv = _MatrixVector(b, x, y, out)
    use_gemv = b.append_basic_block("blas.gemv")
    try_gemm = b.append_basic_block("blas.try_gemm")
    b.cbranch(b.and_(b.and_(gemv.applies, c_usable), fits(gemv.ints)), use_gemv, try_gemm)
    b.position_at_end(use_gemv)
    blas_calls.call_gemv(b, library, dtype, gemv.trans, gemv.stored_rows, gemv.stored_cols, alpha,
                         gemv.matrix.ptr, gemv.ld, gemv.vector, gemv.vector_inc, beta, c, gemv.out_inc)
    b.ret_void()

    b.position_at_end(try_gemm)
    x_row, x_col, y_row, y_col = x.row_major(b), x.column_major(b), y.row_major(b), y.column_major(b)
    x_copy, y_copy = b.not_(b.or_(x_row, x_col)), b.not_(b.or_(y_row, y_col))
    no_scratch = b.icmp_unsigned("==", scratch, ir.Constant(scratch.type, None))
    x_ld = b.select(x_copy, smax(b, 1, k), b.select(x_row, x.row_major_ld(b), x.column_major_ld(b)))
    y_ld = b.select(y_copy, smax(b, 1, cols), b.select(y_row, y.row_major_ld(b), y.column_major_ld(b)))
    c_ld = out.row_major_ld(b)
    usable = b.and_(c_usable, b.not_(b.and_(b.or_(x_copy, y_copy), no_scratch)))
    usable = b.and_(usable, fits([rows, cols, k, x_ld, y_ld, c_ld]))
    use_gemm = b.append_basic_block("blas.gemm")
    b.cbranch(usable, use_gemm, use_loops)
    b.position_at_end(use_gemm)
    # X's copy first, Y's after it (or first, alone), as gemm_scratch_elems counts them
    x_scratch = scratch
    y_scratch = element(b, scratch, b.select(x_copy, b.mul(rows, k), i64(0)))
    with b.if_then(x_copy):
        _emit_copy(b, x, x_scratch)
    with b.if_then(y_copy):
        _emit_copy(b, y, y_scratch)
    x_ptr, y_ptr = b.select(x_copy, x_scratch, x.ptr), b.select(y_copy, y_scratch, y.ptr)
    x_trans = b.and_(b.not_(x_row), x_col)
    y_trans = b.and_(b.not_(y_row), y_col)
    blas_calls.call_gemm(b, library, dtype, x_trans, y_trans, rows, cols, k, alpha, x_ptr, x_ld,
                         y_ptr, y_ld, beta, c, c_ld)
    b.ret_void()


class _Fold:
    """The integer and boolean operations of an IRBuilder that the dispatch helpers use, on
    Python values: with sizes and strides known when the code is generated, the decision the
    emitted dispatch would take at run time is taken once, here."""

    @staticmethod
    def _v(x):
        return x.constant if isinstance(x, ir.Constant) else x

    def icmp_signed(self, op: str, a, b) -> bool:
        a, b = self._v(a), self._v(b)
        return {"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]

    def select(self, cond, a, b):
        return a if self._v(cond) else b

    def and_(self, a, b) -> bool:
        return bool(self._v(a)) and bool(self._v(b))

    def or_(self, a, b) -> bool:
        return bool(self._v(a)) or bool(self._v(b))

    def not_(self, a) -> bool:
        return not self._v(a)

    def mul(self, a, b) -> int:
        return self._v(a) * self._v(b)


def _known(*values) -> bool:
    return all(isinstance(v, int) for v in values)


def _emit_known_call(builder: ir.IRBuilder, dtype: str, library: BlasLibrary, m, n, k, a: Matrix,
                     b: Matrix, c: Matrix, alpha, beta, scratch: Optional[ir.Value],
                     small_volume: int) -> bool:
    """For sizes and strides known now, emit the BLAS call (and operand copies) that
    `_gemm_function`'s dispatch would make at run time, without the dispatch and the loop kernel
    for LLVM to fold away (a product then compiles in a fraction of the time). False, emitting
    nothing, when the sizes are not all known or the dispatch would pick the loop kernel."""
    if not _known(m, n, k, a.row_stride, a.col_stride, b.row_stride, b.col_stride, c.row_stride,
                  c.col_stride):
        return False
    f = _Fold()
    if _is_small(f, m, n, k, small_volume):
        return False
    # as in _emit_blas_call, on Python values
    c_row = _Operand(c.ptr, c.row_stride, c.col_stride, m, n).row_major(f)
    c_col = _Operand(c.ptr, c.row_stride, c.col_stride, m, n).column_major(f)
    swap = not c_row
    pick = lambda x, y: y if swap else x  # noqa: E731
    rows, cols = pick(m, n), pick(n, m)
    x = _Operand(pick(a.ptr, b.ptr), pick(a.row_stride, b.col_stride), pick(a.col_stride, b.row_stride), rows, k)
    y = _Operand(pick(b.ptr, a.ptr), pick(b.row_stride, a.col_stride), pick(b.col_stride, a.row_stride), k, cols)
    out = _Operand(c.ptr, pick(c.row_stride, c.col_stride), pick(c.col_stride, c.row_stride), rows, cols)
    c_usable = c_row or c_col
    fits_library = _fits_library_ints(f, library)
    fits = lambda values: bool(f._v(fits_library(values)))  # noqa: E731
    flag = lambda v: ir.Constant(ir.IntType(1), int(bool(f._v(v))))  # noqa: E731
    num = lambda v: ir.Constant(I64, f._v(v))  # noqa: E731
    ety = ELEMENT_TYPES[dtype]
    gemv = _MatrixVector(f, x, y, out)
    if gemv.applies and c_usable and fits(gemv.ints):
        library.register_symbols()
        blas_calls.call_gemv(builder, library, dtype, flag(gemv.trans), num(gemv.stored_rows),
                             num(gemv.stored_cols), _scalar(ety, alpha), gemv.matrix.ptr, num(gemv.ld),
                             gemv.vector, num(gemv.vector_inc), _scalar(ety, beta), c.ptr, num(gemv.out_inc))
        return True
    x_row, x_col, y_row, y_col = x.row_major(f), x.column_major(f), y.row_major(f), y.column_major(f)
    x_copy, y_copy = not (x_row or x_col), not (y_row or y_col)
    x_ld = max(1, k) if x_copy else f._v(x.row_major_ld(f) if x_row else x.column_major_ld(f))
    y_ld = max(1, cols) if y_copy else f._v(y.row_major_ld(f) if y_row else y.column_major_ld(f))
    c_ld = f._v(out.row_major_ld(f))
    if not (c_usable and not ((x_copy or y_copy) and scratch is None)
            and fits([rows, cols, k, x_ld, y_ld, c_ld])):
        return False
    library.register_symbols()
    x_ptr, y_ptr = x.ptr, y.ptr
    if x_copy:  # X's copy first, Y's after it (or first, alone), as gemm_scratch_elems counts them
        x_ptr = scratch
        _emit_copy(builder, _Operand(x.ptr, i64(x.rs), i64(x.cs), i64(rows), i64(k)), scratch)
    if y_copy:
        y_ptr = element(builder, scratch, i64(rows * k if x_copy else 0))
        _emit_copy(builder, _Operand(y.ptr, i64(y.rs), i64(y.cs), i64(k), i64(cols)), y_ptr)
    x_trans = not x_row and x_col
    for start, count in row_blocks(rows, cols, k):
        # (X's row `start` begins `start` elements in when X is read transposed)
        x_at = element(builder, x_ptr, start if x_trans else start * x_ld) if start else x_ptr
        c_at = element(builder, c.ptr, start * c_ld) if start else c.ptr
        blas_calls.call_gemm(builder, library, dtype, flag(x_trans), flag(not y_row and y_col),
                             num(count), num(cols), num(k), _scalar(ety, alpha), x_at, num(x_ld),
                             y_ptr, num(y_ld), _scalar(ety, beta), c_at, num(c_ld))
    return True


# OpenBLAS runs a GEMM on the calling thread up to this m*n*k (SMP_THRESHOLD_MIN *
# GEMM_MULTITHREAD_THRESHOLD in its interface/gemm.c) and hands larger ones to its own threads
BLAS_ONE_THREAD_MNK = 65536 * 4
MAX_ROW_BLOCKS = 32


def row_blocks(rows: int, cols: int, k: int) -> list[tuple[int, int]]:
    """(first row, rows) of the calls a known product's GEMM is made of: one call, except for
    a product too small for irjit's own threads (`parallel.THREAD_FLOPS`) that the BLAS would
    hand to its threads, which is cut into row blocks it runs on the calling thread. OpenBLAS's
    threads spin for ~0.1 s after each threaded call, and one spinning on the second core kept
    irjit's pool off it: mlp's 10-column output layer (128x10x1024, two threads) made the
    tiled first layer of the next call run alone, ~1,300 us a forward instead of ~800
    (tools/bench_native.py, two cores)."""
    volume = rows * cols * k
    if volume <= BLAS_ONE_THREAD_MNK or 2 * volume >= parallel.THREAD_FLOPS:
        return [(0, rows)]
    per = BLAS_ONE_THREAD_MNK // (cols * k)
    if per < 1 or -(-rows // per) > MAX_ROW_BLOCKS:
        return [(0, rows)]
    return [(start, min(per, rows - start)) for start in range(0, rows, per)]


class _MatrixVector:
    """A product with one row or one column of output as GEMV: the matrix is X (one output
    column) or Y^T (one output row), the vector the other operand; it applies when the matrix
    has a unit stride and the vector and output positive increments."""

    def __init__(self, b: ir.IRBuilder, x: _Operand, y: _Operand, out: _Operand):
        one = lambda v: b.icmp_signed("==", v, i64(1))
        column = one(out.cols)
        pick = lambda p, q: b.select(column, p, q)
        k = x.cols
        self.matrix = _Operand(pick(x.ptr, y.ptr), pick(x.rs, y.cs), pick(x.cs, y.rs),
                               pick(out.rows, out.cols), k)
        self.vector = pick(y.ptr, x.ptr)
        self.vector_inc = b.select(_at_most_one(b, k), i64(1), pick(y.rs, x.cs))
        self.out_inc = b.select(_at_most_one(b, self.matrix.rows), i64(1), pick(out.rs, out.cs))
        row_major, column_major = self.matrix.row_major(b), self.matrix.column_major(b)
        self.trans = b.not_(row_major)
        self.stored_rows = b.select(self.trans, k, self.matrix.rows)
        self.stored_cols = b.select(self.trans, self.matrix.rows, k)
        self.ld = b.select(row_major, self.matrix.row_major_ld(b), self.matrix.column_major_ld(b))
        positive = b.and_(b.icmp_signed(">=", self.vector_inc, i64(1)),
                          b.icmp_signed(">=", self.out_inc, i64(1)))
        self.applies = b.and_(b.or_(one(out.rows), column),
                              b.and_(b.or_(row_major, column_major), positive))
        self.ints = [self.stored_rows, self.stored_cols, self.ld, self.vector_inc, self.out_inc]


def _fits_library_ints(b: ir.IRBuilder, library: BlasLibrary):
    """values -> i1: every value fits the library's integers (always, for 64-bit BLAS)."""
    limit = i64(2 ** (library.int_bits - 1) - 1)

    def fits(values) -> ir.Value:
        result = ir.Constant(ir.IntType(1), 1)
        if library.int_bits < 64:
            for v in values:
                result = b.and_(result, b.icmp_signed("<=", v, limit))
        return result
    return fits


def _emit_copy(b: ir.IRBuilder, src: _Operand, dst: ir.Value) -> None:
    """Copy a strided operand into `dst`, row-major with leading dimension `cols`."""
    with for_range(b, 0, src.rows, name="copy.i") as i:
        with for_range(b, 0, src.cols, name="copy.j") as j:
            value = b.load(element(b, src.ptr, b.add(b.mul(i, src.rs), b.mul(j, src.cs))))
            b.store(value, element(b, dst, b.add(b.mul(i, src.cols), j)))


def _strided(mat: Matrix) -> tuple[ir.Value, ir.Value, ir.Value]:
    return mat.ptr, i64(mat.row_stride), i64(mat.col_stride)


def _resolve(library):
    return blas_library.default_library() if library == DEFAULT else library


def _scalar(ety: ir.Type, v) -> ir.Value:
    return v if isinstance(v, ir.Value) else ir.Constant(ety, v)
