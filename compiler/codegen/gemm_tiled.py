"""A register-tiled SIMD GEMM for products whose sizes and strides are known when the code is
generated: `C (+)= A @ B` for float32 and float64, specialized to its shape, on several threads
when large. It beats calling the BLAS where the BLAS would pack a large operand on every call
(a linear layer's weight read transposed) and where its threads scale poorly (few rows).

The product is computed as a tile grid of T = S V: T is C (vectors along C's rows) or C^T
(vectors along C's columns), whichever lets the larger operand be read in place:
- V, the vector operand, is read `NR` elements at a time along T's columns: in place when
  those are contiguous, else copied first into panels of NR columns (zero-padded) in `scratch`;
- S, the broadcast operand, is read one element at a time along T's rows and broadcast (its
  rows copied first when they are 4 KiB apart);
- each MR x NR tile of T is summed over k in MR * NR / lanes vector registers (one fused
  multiply-add per register and k, in blocks of K_BLOCK terms added together in the stack)
  and stored once (+ beta * C), or handed to the group's epilogue (gemm_epilogue.py); tiles of
  C^T are square and transposed in registers first, so every store runs along C's rows.
Work items are the MR-row blocks of T or its NR-column panels — the dimension whose operand is
larger, so that it is read once while the other stays in cache — and threads claim them."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Optional

from llvmlite import ir

from . import parallel, simd
from .ir_loops import element, entry_alloca, for_range, i64

I32 = ir.IntType(32)
MAX_ROWS = 14  # broadcast streams a tile reads at once
K_BLOCK = 256  # terms summed in registers before they are added to C


@dataclass(frozen=True)
class TiledPlan:
    """How one product C (m x n) = A (m x k) @ B (k x n) is tiled (strides in elements)."""
    dtype: str
    m: int
    n: int
    k: int
    a_strides: tuple[int, int]
    b_strides: tuple[int, int]
    c_strides: tuple[int, int]
    transposed: bool  # T = C^T: vectors run along C's columns (m)
    pack: bool  # V is copied into panels first
    pack_s: bool  # S is copied into row blocks first (its rows would share cache sets)
    lanes: int
    mr: int
    nr: int
    rows_outer: bool  # work items are row blocks of T (else column panels)

    # T = S V in T's terms: rows, cols, and how S, V and T are laid out over A, B and C
    @property
    def rows(self) -> int:
        return self.n if self.transposed else self.m

    @property
    def cols(self) -> int:
        return self.m if self.transposed else self.n

    @property
    def s_strides(self) -> tuple[int, int]:  # (row, k)
        return (self.b_strides[1], self.b_strides[0]) if self.transposed else self.a_strides

    @property
    def v_strides(self) -> tuple[int, int]:  # (k, col)
        return (self.a_strides[1], self.a_strides[0]) if self.transposed else self.b_strides

    @property
    def t_strides(self) -> tuple[int, int]:  # (row, col) in C
        return (self.c_strides[1], self.c_strides[0]) if self.transposed else self.c_strides

    @property
    def panels(self) -> int:
        return -(-self.cols // self.nr)

    @property
    def row_blocks(self) -> int:
        return -(-self.rows // self.mr)

    @property
    def items(self) -> int:
        return self.row_blocks if self.rows_outer else self.panels

    @property
    def packed_v_elems(self) -> int:
        return self.panels * self.k * self.nr if self.pack else 0

    @property
    def scratch_elems(self) -> int:
        """V's panels, then S's row blocks."""
        return self.packed_v_elems + (self.row_blocks * self.k * self.mr if self.pack_s else 0)

    @property
    def flops(self) -> int:
        return 2 * self.m * self.n * self.k


def tiled_plan(dtype: str, m: int, n: int, k: int, a_strides, b_strides, c_strides) -> Optional[TiledPlan]:
    """The tiling of the product, or None when it does not apply (not float32/float64, empty)."""
    if dtype not in simd.ELEMENT_TYPES or min(m, n, k) < 1:
        return None
    a_strides, b_strides, c_strides = tuple(a_strides), tuple(b_strides), tuple(c_strides)
    # V in place needs unit stride along T's columns: B's columns (C = T) or A's rows (T = C^T)
    b_in_place = b_strides[1] == 1 or n == 1
    a_in_place = a_strides[0] == 1 or m == 1
    if b_in_place:
        transposed, pack = False, False
    elif a_in_place:
        transposed, pack = True, False
    else:  # copy the smaller operand; the tile's stores stay along C's rows when they tie
        transposed, pack = m * k < n * k, True
    lanes = simd.lanes(dtype)
    cols = m if transposed else n
    rows = n if transposed else m
    if transposed:  # square tiles: transposed in registers, then stored along C's rows
        vectors, mr = 1, lanes
    else:
        vectors = 2 if cols > lanes else 1
        mr = _even_rows(rows, min(MAX_ROWS, (simd.vector_registers() * 3 // 4) // vectors, rows))
    nr = vectors * lanes
    # the larger operand is read once: S (rows x k) when items are row blocks, V otherwise
    rows_outer = rows >= cols or pack
    # S's rows a multiple of 4 KiB apart fall into one set of the L1 cache, which holds 8 of
    # them: a tile's MR rows would evict each other, so they are copied together first, when
    # enough column panels reuse the copy
    s_rs = (b_strides[1] if transposed else a_strides[0]) * (4 if dtype == "float32" else 8)
    pack_s = mr > 8 and s_rs % 4096 == 0 and -(-cols // nr) >= 4
    return TiledPlan(dtype, m, n, k, a_strides, b_strides, c_strides, transposed, pack, pack_s,
                     lanes, mr, nr, rows_outer)


def _even_rows(rows: int, mr: int) -> int:
    """MR, or the largest number of rows from 2/3 of it that divides T's rows: a short last
    row block is a second copy of the tile's code (~10-15 ms of optimizing and code generation
    a product), and tiles of 8 x 2 vectors run as fast as 12 x 2 (64 rows, one core:
    tools/bench_products.py shapes within 1%)."""
    if rows % mr == 0:
        return mr
    for d in range(mr - 1, -(-2 * mr // 3) - 1, -1):
        if rows % d == 0:
            return d
    return mr


def emit_pack(b: ir.IRBuilder, plan: TiledPlan, v_ptr: ir.Value, scratch: ir.Value) -> None:
    """scratch[panel][k][j] = V[k][panel * NR + j] (0 past the last column)."""
    p = plan
    _emit_blocks(b, p.dtype, p.panels, p.cols, p.nr, p.k, v_ptr, *p.v_strides, scratch)


def emit_pack_s(b: ir.IRBuilder, plan: TiledPlan, s_ptr: ir.Value, scratch: ir.Value) -> None:
    """scratch[block][k][r] = S[block * MR + r][k] (0 past the last row)."""
    p = plan
    s_rs, s_ks = p.s_strides
    _emit_blocks(b, p.dtype, p.row_blocks, p.rows, p.mr, p.k, s_ptr, s_ks, s_rs, scratch)


def _emit_blocks(b: ir.IRBuilder, dtype: str, count: int, total: int, width: int, k: int,
                 src: ir.Value, k_stride: int, j_stride: int, dst: ir.Value) -> None:
    """dst[block][kk][j] = src[kk * k_stride + (block * width + j) * j_stride] for the `total`
    indices block * width + j, zeros past them."""
    ety = simd.ELEMENT_TYPES[dtype]
    with for_range(b, 0, count, name="pack.block") as block:
        dst_block = element(b, dst, b.mul(block, i64(k * width)))
        j0 = b.mul(block, i64(width))
        valid = b.sub(i64(total), j0)
        valid = b.select(b.icmp_signed("<", valid, i64(width)), valid, i64(width))
        with for_range(b, 0, k, name="pack.k") as kk:
            row = element(b, dst_block, b.mul(kk, i64(width)))
            first = element(b, src, b.add(b.mul(kk, i64(k_stride)), b.mul(j0, i64(j_stride))))
            with for_range(b, 0, valid, name="pack.j") as j:
                b.store(b.load(element(b, first, b.mul(j, i64(j_stride)))), element(b, row, j))
            with for_range(b, valid, width, name="pack.z") as j:
                b.store(ir.Constant(ety, 0.0), element(b, row, j))


def _mask(lanes: int, valid: int) -> ir.Constant:
    return ir.Constant(ir.VectorType(ir.IntType(1), lanes), [int(x < valid) for x in range(lanes)])


def _masked_load(b: ir.IRBuilder, ptr: ir.Value, vty: ir.VectorType, valid: int) -> ir.Value:
    """Lanes [0, valid) from ptr, zeros after (the others are not read)."""
    name = f"llvm.masked.load.v{vty.count}{'f32' if vty.element == ir.FloatType() else 'f64'}.p0"
    fn = b.module.globals.get(name) or ir.Function(
        b.module, ir.FunctionType(vty, [vty.element.as_pointer(), I32, ir.VectorType(ir.IntType(1), vty.count), vty]),
        name)
    align = 4 if vty.element == ir.FloatType() else 8
    return b.call(fn, [ptr, ir.Constant(I32, align), _mask(vty.count, valid), simd.zeros(vty)])


def _masked_store(b: ir.IRBuilder, value: ir.Value, ptr: ir.Value, valid: int) -> None:
    vty = value.type
    name = f"llvm.masked.store.v{vty.count}{'f32' if vty.element == ir.FloatType() else 'f64'}.p0"
    fn = b.module.globals.get(name) or ir.Function(
        b.module, ir.FunctionType(ir.VoidType(), [vty, vty.element.as_pointer(), I32,
                                                  ir.VectorType(ir.IntType(1), vty.count)]), name)
    align = 4 if vty.element == ir.FloatType() else 8
    b.call(fn, [value, ptr, ir.Constant(I32, align), _mask(vty.count, valid)])


def _emit_tile(b: ir.IRBuilder, p: TiledPlan, s_tile, s_rs: int, s_ks: int, v_base, v_ks: int,
               t_ptr, r0, c0, rows: int, valid: int, beta, epilogue=None) -> None:
    """T[r0 : r0 + rows, c0 : c0 + NR] (`valid` columns of the last vector are real): V's
    columns c0.. start at `v_base`, row k `v_ks` further; S[r0 + r][k] is s_tile[r * s_rs +
    k * s_ks]. The sum
    over k runs in blocks of K_BLOCK, each added to T (as the BLAS does: rounding errors grow
    with the block, not with k)."""
    ety = simd.ELEMENT_TYPES[p.dtype]
    lanes = p.lanes
    vectors = p.nr // lanes
    vty = ir.VectorType(ety, lanes)
    blocks = -(-p.k // K_BLOCK)
    in_place = not p.pack

    def k_loop(k0, k1) -> list[list[ir.Value]]:
        """The tile's sums over k in [k0, k1), kept in phis (not stack slots for SROA to
        promote: a third of the tile's IR less to print, parse and optimize)."""
        pre = b.block
        with for_range(b, k0, k1, name="k") as kk:
            head = ir.IRBuilder(kk.parent)
            head.position_after(kk)
            acc = [[head.phi(vty) for _ in range(vectors)] for _ in range(rows)]
            v_row = element(b, v_base, b.mul(kk, i64(v_ks)))
            vecs = []
            for v in range(vectors):
                at = element(b, v_row, i64(v * lanes))
                last = valid - v * lanes
                if in_place and last < lanes:  # past the matrix: only the real columns are read
                    vecs.append(_masked_load(b, at, vty, max(last, 0)))
                else:
                    vecs.append(simd.load_vector(b, at, ety, lanes))
            s_k = element(b, s_tile, b.mul(kk, i64(s_ks)))
            totals = []
            for r in range(rows):
                s = simd.splat(b, b.load(element(b, s_k, i64(r * s_rs))), lanes)
                totals.append([b.fadd(acc[r][v], b.fmul(s, vecs[v], flags=("contract",)), flags=("contract",))
                               for v in range(vectors)])
            for r in range(rows):
                for v in range(vectors):
                    acc[r][v].add_incoming(simd.zeros(vty), pre)
                    acc[r][v].add_incoming(totals[r][v], b.block)
        return acc

    if blocks == 1:
        values = k_loop(i64(0), i64(p.k))
    else:  # each block's sums join the tile's running sums (in the stack, in L1)
        sums = [[entry_alloca(b, vty) for _ in range(vectors)] for _ in range(rows)]
        with for_range(b, 0, blocks, name="kb") as kb:
            k0 = b.mul(kb, i64(K_BLOCK))
            k1 = b.add(k0, i64(K_BLOCK))
            acc = k_loop(k0, b.select(b.icmp_signed("<", k1, i64(p.k)), k1, i64(p.k)))
            first = b.icmp_signed("==", kb, i64(0))
            for r in range(rows):
                for v in range(vectors):
                    b.store(b.select(first, acc[r][v], b.fadd(b.load(sums[r][v]), acc[r][v])), sums[r][v])
        values = [[b.load(sums[r][v]) for v in range(vectors)] for r in range(rows)]
    given = getattr(epilogue, "given", None)
    if given is not None:  # an epilogue through a pointer that may be null: then stored
        tile, bounds = _emit_tile_buffer(b, p, values, r0, c0, valid)
        with b.if_else(given(b)) as (on_epilogue, on_store):
            with on_epilogue:
                epilogue(b, tile, bounds)
            with on_store:
                _emit_buffer_store(b, p, tile, len(values), t_ptr, r0, c0, valid, beta)
    elif epilogue is not None:
        _emit_tile_epilogue(b, p, values, r0, c0, valid, epilogue)
    else:
        _emit_tile_store(b, p, values, t_ptr, r0, c0, valid, beta)


def _emit_tile_epilogue(b: ir.IRBuilder, p: TiledPlan, values, r0, c0, valid: int, epilogue) -> None:
    """Hand the tile to `epilogue(builder, tile, bounds)` as C's elements [i0, i1) x [j0, j1),
    row-major in a stack buffer `p.nr` wide (bounds: four i64s)."""
    epilogue(b, *_emit_tile_buffer(b, p, values, r0, c0, valid))


def _emit_buffer_store(b: ir.IRBuilder, p: TiledPlan, tile: ir.Value, rows: int, t_ptr, r0, c0,
                       valid: int, beta) -> None:
    """`_emit_tile_store` of a tile that `_emit_tile_buffer` wrote (`rows` rows of T, `valid`
    columns), read back from the buffer (for a product whose epilogue pointer is null)."""
    ety = simd.ELEMENT_TYPES[p.dtype]
    lanes = p.lanes
    t_rs, t_cs = p.t_strides
    if p.transposed:  # the buffer's row j is C's row c0 + j, its `rows` first lanes real
        for j in range(valid):
            value = simd.load_vector(b, element(b, tile, i64(j * p.nr)), ety, lanes)
            dst = element(b, t_ptr, b.add(b.mul(b.add(c0, i64(j)), i64(t_cs)), b.mul(r0, i64(t_rs))))
            _store_lanes(b, p, value, dst, rows, beta)
        return
    for r in range(rows):
        t_row = element(b, t_ptr, b.add(b.mul(b.add(r0, i64(r)), i64(t_rs)), c0))
        for v in range(p.nr // lanes):
            if valid > v * lanes:
                value = simd.load_vector(b, element(b, tile, i64(r * p.nr + v * lanes)), ety, lanes)
                _store_lanes(b, p, value, element(b, t_row, i64(v * lanes)), min(lanes, valid - v * lanes), beta)


def _emit_tile_buffer(b: ir.IRBuilder, p: TiledPlan, values, r0, c0, valid: int) -> tuple[ir.Value, ir.Value]:
    """(tile, bounds): the tile's values as C's elements [i0, i1) x [j0, j1), row-major in a
    stack buffer `p.nr` wide, and those bounds (four i64s)."""
    ety = simd.ELEMENT_TYPES[p.dtype]
    lanes = p.lanes
    tile = b.bitcast(entry_alloca(b, ir.ArrayType(ety, epilogue_tile_elems(p))), ety.as_pointer())
    bounds = b.bitcast(entry_alloca(b, ir.ArrayType(ir.IntType(64), 4)), ir.IntType(64).as_pointer())
    rows = len(values)
    if p.transposed:  # C's rows c0 + j hold T's column j: transposed in registers
        columns = transpose_square(b, [row[0] for row in values] +
                                   [simd.zeros(ir.VectorType(ety, lanes))] * (lanes - rows))
        for j, value in enumerate(columns[:valid]):
            simd.store_vector(b, value, element(b, tile, i64(j * p.nr)))
        corners = (c0, b.add(c0, i64(valid)), r0, b.add(r0, i64(rows)))
    else:
        for r, row in enumerate(values):
            for v, value in enumerate(row):
                simd.store_vector(b, value, element(b, tile, i64(r * p.nr + v * lanes)))
        corners = (r0, b.add(r0, i64(rows)), c0, b.add(c0, i64(valid)))
    for k, corner in enumerate(corners):
        b.store(corner, element(b, bounds, i64(k)))
    return tile, bounds


def epilogue_tile_elems(p: TiledPlan) -> int:
    """Elements of the stack tile an epilogue reads (rows of p.nr)."""
    return (p.lanes if p.transposed else p.mr) * p.nr


def transpose_square(b: ir.IRBuilder, vectors: list[ir.Value]) -> list[ir.Value]:
    """The n x n matrix whose rows are `vectors` (n lanes each, n a power of 2), transposed:
    for each bit s of the index, rows r and r | s swap the elements (r, l | s) and (r | s, l)
    (two shuffles a pair, log2(n) rounds). Each round's results pass through
    `llvm.arithmetic.fence` (no instruction): instruction selection otherwise combines the
    rounds' shuffles recursively, ~9 ms of code generation for a 16 x 16 transposition against
    ~4 with the fences, for the same shuffle instructions (56 `vperm`/`vshuf`)."""
    v = list(vectors)
    n = len(v)
    mask = lambda lanes: ir.Constant(ir.VectorType(I32, n), lanes)  # noqa: E731
    s = 1
    while s < n:
        low = mask([l if not l & s else n + l - s for l in range(n)])
        high = mask([l + s if not l & s else n + l for l in range(n)])
        for r in range(n):
            if not r & s:
                v[r], v[r | s] = b.shuffle_vector(v[r], v[r | s], low), b.shuffle_vector(v[r], v[r | s], high)
        s *= 2
        if s < n:
            v = [_fence(b, x) for x in v]
    return v


def _fence(b: ir.IRBuilder, value: ir.Value) -> ir.Value:
    """`value` through `llvm.arithmetic.fence`, which code generation does not look through."""
    vty = value.type
    name = f"llvm.arithmetic.fence.v{vty.count}{'f32' if vty.element == ir.FloatType() else 'f64'}"
    fn = b.module.globals.get(name) or ir.Function(b.module, ir.FunctionType(vty, [vty]), name)
    return b.call(fn, [value])


def _emit_tile_store(b: ir.IRBuilder, p: TiledPlan, values, t_ptr, r0, c0, valid: int, beta) -> None:
    """T[r0 + r, c0 + j] = values[r][j] + beta * T[...] for the `valid` columns (C is
    contiguous: T's rows run along C's rows, or, for T = C^T, its columns do after the tile is
    transposed in registers)."""
    lanes = p.lanes
    t_rs, t_cs = p.t_strides
    if p.transposed:  # square tiles: C's row c0 + j holds T's column j
        rows = len(values)
        columns = transpose_square(b, [row[0] for row in values] +
                                   [simd.zeros(values[0][0].type)] * (lanes - rows))
        for j, value in enumerate(columns[:valid]):
            dst = element(b, t_ptr, b.add(b.mul(b.add(c0, i64(j)), i64(t_cs)), b.mul(r0, i64(t_rs))))
            _store_lanes(b, p, value, dst, rows, beta)
        return
    assert t_cs == 1, "C is contiguous"
    for r, row in enumerate(values):
        t_row = element(b, t_ptr, b.add(b.mul(b.add(r0, i64(r)), i64(t_rs)), c0))
        for v, value in enumerate(row):
            if valid > v * lanes:
                _store_lanes(b, p, value, element(b, t_row, i64(v * lanes)), min(lanes, valid - v * lanes), beta)


def _store_lanes(b: ir.IRBuilder, p: TiledPlan, value: ir.Value, dst: ir.Value, count: int, beta) -> None:
    """dst[0:count] = value[0:count] + beta * dst[0:count] (masked when count < lanes)."""
    ety = simd.ELEMENT_TYPES[p.dtype]
    vty = value.type
    if not _is_zero(beta):
        old = _masked_load(b, dst, vty, count) if count < p.lanes else simd.load_vector(b, dst, ety, p.lanes)
        value = b.fadd(value, _times_beta(b, beta, old, ety, p.lanes), flags=("contract",))
    if count < p.lanes:
        _masked_store(b, value, dst, count)
    else:
        simd.store_vector(b, value, dst)


def _is_zero(beta) -> bool:
    return not isinstance(beta, ir.Value) and beta == 0


def _times_beta(b: ir.IRBuilder, beta, old: ir.Value, ety, lanes: int) -> ir.Value:
    """beta * old (old itself for a Python 1)."""
    if not isinstance(beta, ir.Value):
        if beta == 1:
            return old
        beta = ir.Constant(ety, float(beta))
    return b.fmul(simd.splat(b, beta, lanes), old, flags=("contract",))


def emit_items(b: ir.IRBuilder, p: TiledPlan, a: ir.Value, bm: ir.Value, c: ir.Value,
               scratch: Optional[ir.Value], start, stop, beta=0, epilogue=None) -> None:
    """The tiles of work items [start, stop) (row blocks of T, or column panels), after
    `emit_pack` and `emit_pack_s` filled `scratch` when the plan packs."""
    s_ptr, v_ptr = (bm, a) if p.transposed else (a, bm)
    v_ks, v_cs = p.v_strides
    full_rows, rest_rows = divmod(p.rows, p.mr)
    full_cols, rest_cols = divmod(p.cols, p.nr)

    def panel_base(panel):
        if p.pack:
            return element(b, scratch, b.mul(panel, i64(p.k * p.nr))), p.nr
        return element(b, v_ptr, b.mul(b.mul(panel, i64(p.nr)), i64(v_cs))), v_ks

    def s_tile(r0):
        """(S's rows from r0 on, row stride, k stride): packed blocks hold MR rows per k."""
        if p.pack_s:
            return element(b, scratch, b.add(i64(p.packed_v_elems), b.mul(r0, i64(p.k)))), 1, p.mr
        s_rs, s_ks = p.s_strides
        return element(b, s_ptr, b.mul(r0, i64(s_rs))), s_rs, s_ks

    def tile(r0, c0, rows, base, ks, valid):
        _emit_tile(b, p, *s_tile(r0), base, ks, c, r0, c0, rows, valid, beta, epilogue)

    def tiles_of_panel(panel, valid):
        """Every row block of one column panel."""
        base, ks = panel_base(panel)
        c0 = b.mul(panel, i64(p.nr))
        if full_rows:
            with for_range(b, 0, full_rows, name="rb") as rb:
                tile(b.mul(rb, i64(p.mr)), c0, p.mr, base, ks, valid)
        if rest_rows:
            tile(i64(full_rows * p.mr), c0, rest_rows, base, ks, valid)

    def tiles_of_row_block(rb, rows):
        """Every column panel of one row block."""
        r0 = b.mul(rb, i64(p.mr))
        if full_cols:
            with for_range(b, 0, full_cols, name="panel") as panel:
                base, ks = panel_base(panel)
                tile(r0, b.mul(panel, i64(p.nr)), rows, base, ks, p.nr)
        if rest_cols:
            base, ks = panel_base(i64(full_cols))
            tile(r0, i64(full_cols * p.nr), rows, base, ks, rest_cols)

    # an item is a row block (or a column panel); the last one may be short
    tiles, full, rest, width = (tiles_of_row_block, full_rows, rest_rows, p.mr) if p.rows_outer else \
        (tiles_of_panel, full_cols, rest_cols, p.nr)
    with for_range(b, start, stop, name="item") as item:
        if rest:
            with b.if_else(b.icmp_signed("==", item, i64(full))) as (on_last, on_full):
                with on_last:
                    tiles(item, rest)
                with on_full:
                    tiles(item, width)
        else:
            tiles(item, width)


EPILOGUE_TYPE = ir.FunctionType(I32, [ir.PointerType()] * 3)  # i32 (args, tile, bounds)

THREAD_FLOPS = parallel.THREAD_FLOPS  # (a module attribute, so tests can lower it)


@dataclass(frozen=True)
class BatchedPlan:
    """A batch of equal products (`tiled_plan`), each operand advancing by its batch strides
    (elements; 0 repeats an operand)."""
    plan: TiledPlan
    batch: tuple[int, ...]
    a_batch: tuple[int, ...]
    b_batch: tuple[int, ...]
    c_batch: tuple[int, ...]

    @property
    def count(self) -> int:
        total = 1
        for n in self.batch:
            total *= n
        return total

    @property
    def scratch_elems(self) -> int:
        return self.count * self.plan.scratch_elems


def _batch_offsets(b: ir.IRBuilder, bp: BatchedPlan, index) -> tuple[ir.Value, ir.Value, ir.Value]:
    """Element offsets of A, B and C for flat batch `index`."""
    offsets = [i64(0), i64(0), i64(0)]
    rest = index
    for d in reversed(range(len(bp.batch))):
        i = b.srem(rest, i64(bp.batch[d]))
        rest = b.sdiv(rest, i64(bp.batch[d]))
        for o, strides in enumerate((bp.a_batch, bp.b_batch, bp.c_batch)):
            offsets[o] = b.add(offsets[o], b.mul(i, i64(strides[d])))
    return tuple(offsets)


def emit_tiled_function(module: ir.Module, name: str, params: list[ir.Type], bp: BatchedPlan,
                        a: tuple[int, int], bm: tuple[int, int], c: int,
                        scratch: Optional[int], epilogue_fn: Optional[ir.Function] = None) -> ir.Function:
    """`i32 name(params...)`: the batched product over the unit's buffer arguments (A and B as
    (buffer, element offset), C a buffer, `scratch` the packing buffer's), its items on every
    core when large. With `epilogue_fn` (`i32 (buffers..., tile, bounds)`, emit.EpilogueEmitter's
    loop nest) each tile goes to it instead of to C; the first non-zero status it returns (a
    failed bounds check) is the function's. Equal products of a unit are compiled once
    (`shared_product`): without an epilogue always; with one, when `share_plans` found another
    product of the unit with its plan (an LSTM's two gate products), through a pointer."""
    through_pointer = (bp, scratch is not None) in getattr(module, "irjit_epilogue_plans", ())
    if epilogue_fn is not None and not through_pointer:
        return _emit_product(module, name, params, bp, a, bm, c, scratch, epilogue_fn)
    fn = ir.Function(module, ir.FunctionType(I32, params), name=name)
    fn.linkage = "internal"
    # a call and its arguments: inlined into the (unoptimized) entry rather than a function
    # of its own for the pipeline (~1-3 ms each of lstm_cell's gate unit)
    fn.attributes.add("alwaysinline")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    shared = shared_product(module, bp, scratch is not None, through_pointer)
    args = [element(b, fn.args[a[0]], i64(a[1])), element(b, fn.args[bm[0]], i64(bm[1])), fn.args[c]]
    if scratch is not None:
        args.append(fn.args[scratch])
    if through_pointer and epilogue_fn is None:
        args += [ir.Constant(EPILOGUE_TYPE.as_pointer(), None), ir.Constant(ir.PointerType(), None)]
    elif through_pointer:
        # read from a global that LLVM cannot prove constant: a constant function pointer makes
        # IPSCCP specialize the shared function for it, a second copy of the tile code
        target = ir.GlobalVariable(module, EPILOGUE_TYPE.as_pointer(), name + "_epilogue_pointer")
        target.initializer = _epilogue_thunk(module, name, epilogue_fn, len(params))
        args += [b.load(target), _pointer_array(b, fn.args)]
    args = [x if x.type == t else b.bitcast(x, t) for x, t in zip(args, shared.function_type.args)]
    b.ret(b.call(shared, args))
    return fn


def share_plans(module: ir.Module, products: list) -> None:
    """Note on `module` the plans (with or without scratch) of a unit's tiled `products` (kernel.
    Product) that a product with an epilogue shares with one without: emit_tiled_function then
    emits one function for them, the epilogue through a pointer (lstm_cell's gate unit: ~20 ms
    less of optimizing and code generation, tools/bench_compile.py)."""
    from .matmul import matmul_layout
    uses: dict[tuple, set] = {}
    for p in products:
        if getattr(p, "algorithm", None) != "tiled":
            continue
        bp = batched_plan(matmul_layout(p.a.sizes, p.a.strides, p.b.sizes, p.b.strides), p.dtype.name)
        uses.setdefault((bp, p.scratch is not None), set()).add(p.epilogue is not None)
    module.irjit_epilogue_plans = frozenset(k for k, v in uses.items() if len(v) == 2)


def shared_product(module: ir.Module, bp: BatchedPlan, scratch: bool, epilogue: bool = False) -> ir.Function:
    """`i32 (A, B, C[, scratch])`: the module's one function for the batched product `bp`. A
    unit's backward often repeats a product (an RNN's steps, a weight used twice); each copy
    cost ~25 ms of optimizing and code generation (tools/bench_compile.py). It is `noinline`:
    its code exists once (a call per product, ~ns, against its >= MIN_TILED_FLOPS of work), and
    a product used once is not optimized twice, alone and again inlined (~4 ms a product).
    With `epilogue`, `i32 (A, B, C[, scratch], epilogue, args)`, which hands each tile to
    `epilogue(args, tile, bounds)` (EPILOGUE_TYPE) or, when that is null, stores it (one branch a
    tile)."""
    ptr = simd.ELEMENT_TYPES[bp.plan.dtype].as_pointer()
    digest = hashlib.sha256(repr((bp, scratch)).encode()).hexdigest()[:16]
    name = f"{module.name}_gemm_{digest}" + ("_epilogue" if epilogue else "")
    existing = module.globals.get(name)
    if existing is not None:
        return existing
    params = [ptr] * (4 if scratch else 3)
    if epilogue:
        params += [EPILOGUE_TYPE.as_pointer(), ir.PointerType()]
    fn = _emit_product(module, name, params, bp, (0, 0), (1, 0), 2, 3 if scratch else None,
                       epilogue_ptr=(4 if scratch else 3) if epilogue else None)
    fn.attributes.add("noinline")
    return fn


def _pointer_array(b: ir.IRBuilder, values) -> ir.Value:
    """A stack array of the pointers `values` (as i64s)."""
    array = b.alloca(ir.IntType(64), size=max(1, len(values)))  # (called in the entry block)
    for k, value in enumerate(values):
        b.store(b.ptrtoint(value, ir.IntType(64)), b.gep(array, [i64(k)], source_etype=ir.IntType(64)))
    return b.bitcast(array, ir.PointerType())


def _epilogue_thunk(module: ir.Module, name: str, epilogue_fn: ir.Function, n: int) -> ir.Function:
    """`i32 (args, tile, bounds)` (EPILOGUE_TYPE): `epilogue_fn(*args[:n], tile, bounds)`,
    args being `_pointer_array`'s."""
    fn = ir.Function(module, EPILOGUE_TYPE, name=name + "_epilogue_call")
    fn.linkage = "internal"
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    array, tile, bounds = fn.args
    types = epilogue_fn.function_type.args
    word = lambda k: b.load(b.gep(array, [i64(k)], source_etype=ir.IntType(64)), typ=ir.IntType(64))  # noqa: E731
    args = [b.inttoptr(word(k), types[k]) for k in range(n)]
    args += [x if x.type == t else b.bitcast(x, t) for x, t in zip((tile, bounds), types[n:])]
    b.ret(b.call(epilogue_fn, args))
    return fn


def _emit_product(module: ir.Module, name: str, params: list[ir.Type], bp: BatchedPlan,
                  a: tuple[int, int], bm: tuple[int, int], c: int,
                  scratch: Optional[int], epilogue_fn: Optional[ir.Function] = None,
                  epilogue_ptr: Optional[int] = None) -> ir.Function:
    """`emit_tiled_function`'s product, emitted in place; with `epilogue_ptr`, the parameter
    that holds an epilogue (EPILOGUE_TYPE, or null: tiles are stored) and the next its args.
    Its functions are `optsize`: the tiles are vector code already, which that leaves as it is
    (the workloads' products within 0.3% of O3's speed, one core), while LLVM no longer
    vectorizes and interleaves the packing loops (a copy of one operand, 1/rows of the work)
    into several versions: ~5-10 ms less of optimizing and code generation a product. An
    epilogue (a function of its own) keeps O3's vectorized loops."""
    p = bp.plan
    fn = ir.Function(module, ir.FunctionType(I32, params), name=name)
    fn.linkage = "internal"
    fn.attributes.add("optsize")
    b = ir.IRBuilder(fn.append_basic_block("entry"))

    def operands(builder, args):
        return (element(builder, args[a[0]], i64(a[1])), element(builder, args[bm[0]], i64(bm[1])),
                args[c], args[scratch] if scratch is not None else None)

    a_ptr, b_ptr, c_ptr, s_ptr = operands(b, fn.args)
    if p.pack or p.pack_s:  # every batch's copies, before any item reads them
        with for_range(b, 0, bp.count, name="pack.batch") as index:
            oa, ob, _ = _batch_offsets(b, bp, index)
            own = element(b, s_ptr, b.mul(index, i64(p.scratch_elems)))
            a_i, b_i = element(b, a_ptr, oa), element(b, b_ptr, ob)
            if p.pack:
                emit_pack(b, p, a_i if p.transposed else b_i, own)
            if p.pack_s:
                emit_pack_s(b, p, b_i if p.transposed else a_i, element(b, own, i64(p.packed_v_elems)))
    items = bp.count * p.items

    def run(builder, args, start, stop) -> ir.Value:
        """The items [start, stop); returns the status."""
        a_ptr, b_ptr, c_ptr, s_ptr = operands(builder, args)
        status = entry_alloca(builder, I32)
        builder.store(ir.Constant(I32, 0), status)
        tile_epilogue = None
        if epilogue_fn is not None:
            def tile_epilogue(tb, tile, bounds):
                got = tb.call(epilogue_fn, [*args, tile, bounds])
                tb.store(tb.or_(tb.load(status), got), status)
        elif epilogue_ptr is not None:
            target, context = args[epilogue_ptr], args[epilogue_ptr + 1]

            def tile_epilogue(tb, tile, bounds):
                got = tb.call(target, [context, tb.bitcast(tile, ir.PointerType()),
                                       tb.bitcast(bounds, ir.PointerType())])
                tb.store(tb.or_(tb.load(status), got), status)
            tile_epilogue.given = lambda tb: tb.icmp_unsigned(
                "!=", tb.ptrtoint(target, ir.IntType(64)), ir.Constant(ir.IntType(64), 0))
        with for_range(builder, start, stop, name="bitem") as flat:
            index = builder.sdiv(flat, i64(p.items))
            item = builder.srem(flat, i64(p.items))
            oa, ob, oc = _batch_offsets(builder, bp, index)
            packed = element(builder, s_ptr, builder.mul(index, i64(p.scratch_elems))) \
                if p.scratch_elems else None
            emit_items(builder, p, element(builder, a_ptr, oa), element(builder, b_ptr, ob),
                       element(builder, c_ptr, oc), packed, item, builder.add(item, i64(1)),
                       epilogue=tile_epilogue)
        return builder.load(status)

    threads = parallel.thread_count()
    if threads < 2 or items < 2 or p.flops * bp.count < THREAD_FLOPS:
        b.ret(run(b, fn.args, i64(0), i64(items)))
        return fn
    range_fn = ir.Function(module, ir.FunctionType(I32, params + [ir.IntType(64).as_pointer()]),
                           name=name + "_items")
    range_fn.linkage = "internal"
    range_fn.attributes.add("optsize")  # (see _emit_product; inlined into the pool's chunk, it would lose it)
    range_fn.attributes.add("noinline")
    rb = ir.IRBuilder(range_fn.append_basic_block("entry"))
    *args, bounds = range_fn.args
    rb.ret(run(rb, args, rb.load(bounds), rb.load(element(rb, bounds, i64(1)))))
    chunk = max(1, -(-items // (threads * 4)))
    driver = parallel.emit_parallel_range(module, name + "_parallel", range_fn, len(params), items,
                                          chunk, threads)
    b.ret(b.call(driver, fn.args))
    return fn


def batched_plan(layout, dtype: str) -> Optional[BatchedPlan]:
    """The tiled form of `matmul.matmul_layout`'s batched product (C contiguous), or None."""
    nb = len(layout.batch)
    plan = tiled_plan(dtype, layout.m, layout.n, layout.k, layout.a_strides[nb:],
                      layout.b_strides[nb:], layout.c_strides[nb:])
    if plan is None:
        return None
    return BatchedPlan(plan, tuple(layout.batch), tuple(layout.a_strides[:nb]),
                       tuple(layout.b_strides[:nb]), tuple(layout.c_strides[:nb]))


def gemm_algorithm(layout, dtype: str, dynamic: bool = False) -> str:
    """"tiled" or "blas" for a product of `matmul.matmul_layout` (tools/bench_products.py, one
    core, float32: the tiled kernel runs 1.0-1.2x the BLAS's speed on products from 65x192x64 to
    512x512x512, 1.5-2.2x where the BLAS packs a wide operand (16x4096x64 read transposed,
    64x1024x256 as a linear layer); the BLAS stays faster below MIN_TILED_FLOPS and when T's
    rows are narrower than a vector (a 10-class output layer: 0.6x))."""
    if dynamic or dtype not in simd.ELEMENT_TYPES:
        return "blas"
    bp = batched_plan(layout, dtype)
    if bp is None or bp.plan.flops < MIN_TILED_FLOPS or bp.plan.cols < bp.plan.lanes:
        return "blas"
    return "tiled"


MIN_TILED_FLOPS = 1 << 17
