"""The register-tiled GEMM (gemm_tiled.py) against numpy's matmul: row- and column-major and
strided operands (so each orientation, packed and in place), sizes that leave partial tiles
and partial vectors, batches with broadcast operands, float32 and float64, accumulation into C
(beta); every array between NaN guards, so a read outside an operand poisons the result and a
write outside the output shows in the guards; several threads give the one-thread result bit
for bit. And the rule that picks the tiled kernel or the BLAS."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest
from llvmlite import ir

from irjit.compiler.codegen import gemm_tiled, parallel, simd
from irjit.compiler.codegen.emit import emit_product
from irjit.compiler.codegen.ir_loops import element, i64
from irjit.compiler.codegen.kernel import Buffer, Operand, Product
from irjit.compiler.codegen.library import CodeLibrary, new_module
from irjit.compiler.codegen.matmul import matmul_layout

from .guard_pages import array_before_guard, runs_without_a_fault

GUARD = 64
_count = iter(range(10**9))


def _operand(shape, layout: str, dtype, rng):
    """A random matrix of `shape` read as `layout`: "row" (C order), "col" (its transpose's
    view) or "strided" (every other column of a wider one); returns (base array, view)."""
    if layout == "row":
        base = rng.standard_normal(shape).astype(dtype)
        return base, base
    if layout == "col":
        base = rng.standard_normal(shape[::-1]).astype(dtype)
        return base, base.T
    base = rng.standard_normal(shape[:-1] + (2 * shape[-1],)).astype(dtype)
    return base, base[..., ::2]


def _guarded(base: np.ndarray, view: np.ndarray):
    """(NaN-padded flat copy of base, the same view into the copy)."""
    flat = np.full(base.size + 2 * GUARD, np.nan, base.dtype)
    inner = flat[GUARD:GUARD + base.size].reshape(base.shape)
    inner[...] = base
    offset = (view.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // base.itemsize
    moved = np.lib.stride_tricks.as_strided(inner.reshape(-1)[offset:], view.shape, view.strides)
    return flat, moved


def _strides(v: np.ndarray) -> tuple:
    return tuple(s // v.itemsize for s in v.strides)


def compile_tiled(a_shape, a_strides, b_shape, b_strides, dtype: str):
    """(the tiled product as a ctypes function of (a, b, out, scratch), its BatchedPlan)."""
    dt = np.dtype(dtype)
    layout = matmul_layout(a_shape, a_strides, b_shape, b_strides)
    product = Product(Operand(0, a_shape, a_strides), Operand(1, b_shape, b_strides), 2, dt, "tiled", 3)
    module = new_module(f"test_gemm_tiled_{next(_count)}")
    buffers = [Buffer(i, dt, (), (), i >= 2) for i in range(4)]
    emit_product(module, "product", buffers, product)
    module.get_global("product").linkage = "external"
    library = CodeLibrary(module)
    library.finalize()
    fn = ctypes.CFUNCTYPE(ctypes.c_int32, *[ctypes.c_void_p] * 4)(library.address("product"))
    fn.library = library
    return fn, gemm_tiled.batched_plan(layout, dtype), layout


def run_tiled(a: np.ndarray, b: np.ndarray, dtype: str) -> np.ndarray:
    """matmul(a, b) by the tiled product, every array NaN-guarded."""
    dt = np.dtype(dtype)
    ga, gb = _guarded(a.base if a.base is not None else a, a), _guarded(b.base if b.base is not None else b, b)
    va, vb = ga[1], gb[1]
    fn, plan, layout = compile_tiled(va.shape, _strides(va), vb.shape, _strides(vb), dtype)
    out_flat = np.full(int(np.prod(layout.out_shape)) + 2 * GUARD, np.nan, dt)
    scratch_flat = np.full(max(1, plan.scratch_elems) + 2 * GUARD, np.nan, dt)
    assert fn(va.ctypes.data, vb.ctypes.data, out_flat.ctypes.data + GUARD * dt.itemsize,
              scratch_flat.ctypes.data + GUARD * dt.itemsize) == 0
    for flat in (ga[0], gb[0], out_flat, scratch_flat):
        assert np.isnan(flat[:GUARD]).all() and np.isnan(flat[-GUARD:]).all(), "a write outside an array"
    return out_flat[GUARD:-GUARD].reshape(layout.out_shape)


SHAPES = [(1, 1, 1), (3, 5, 7), (13, 40, 9), (64, 96, 33), (40, 17, 300), (7, 64, 513), (130, 33, 20),
          (29, 70, 512)]  # (the last: rows 4 KiB apart, copied first)
LAYOUTS = [("row", "row"), ("row", "col"), ("col", "row"), ("col", "col"), ("strided", "col"),
           ("row", "strided")]


@pytest.mark.parametrize("m,n,k", SHAPES)
@pytest.mark.parametrize("la,lb", LAYOUTS)
def test_tiled_product_matches_numpy(m, n, k, la, lb, monkeypatch):
    monkeypatch.setattr(parallel, "thread_count", lambda: 1)
    dtype = "float64"
    rng = np.random.default_rng(m * 1000 + n * 10 + k)
    _, a = _operand((m, k), la, dtype, rng)
    _, b = _operand((k, n), lb, dtype, rng)
    np.testing.assert_allclose(run_tiled(a, b, dtype), a @ b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("la,lb", LAYOUTS[:4])
def test_float32_matches_numpy(la, lb, monkeypatch):
    monkeypatch.setattr(parallel, "thread_count", lambda: 1)
    rng = np.random.default_rng(5)
    _, a = _operand((37, 300), la, "float32", rng)
    _, b = _operand((300, 45), lb, "float32", rng)
    np.testing.assert_allclose(run_tiled(a, b, "float32"), a @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("a_shape,b_shape", [((3, 9, 20), (20, 11)), ((2, 1, 7, 5), (3, 5, 40)),
                                             ((20,), (4, 20, 6)), ((2, 33, 8), (8,))])
def test_batches_and_broadcast_operands(a_shape, b_shape, monkeypatch):
    monkeypatch.setattr(parallel, "thread_count", lambda: 1)
    rng = np.random.default_rng(1)
    a = rng.standard_normal(a_shape)
    b = rng.standard_normal(b_shape)
    np.testing.assert_allclose(run_tiled(a, b, "float64"), np.matmul(a, b), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("cores", [2, 3])
@pytest.mark.parametrize("la,lb", [("row", "col"), ("row", "row"), ("col", "row")])
def test_threads_give_the_one_thread_result(cores, la, lb, monkeypatch):
    rng = np.random.default_rng(2)
    _, a = _operand((70, 300), la, "float32", rng)
    _, b = _operand((300, 90), lb, "float32", rng)
    monkeypatch.setattr(parallel, "thread_count", lambda: 1)
    single = run_tiled(a, b, "float32")
    monkeypatch.setattr(parallel, "thread_count", lambda: cores)
    monkeypatch.setattr(gemm_tiled, "THREAD_FLOPS", 0)
    assert run_tiled(a, b, "float32").tobytes() == single.tobytes()


@pytest.mark.parametrize("m,n,k,a_col,b_col", [(13, 21, 7, False, False), (5, 37, 300, True, False),
                                                (29, 3, 11, False, True), (17, 18, 5, True, True)])
def test_no_read_or_write_past_an_array(m, n, k, a_col, b_col, monkeypatch):
    """Operands and output end at an unreadable page: a read or write past any faults."""
    monkeypatch.setattr(parallel, "thread_count", lambda: 1)
    rng = np.random.default_rng(4)
    a = array_before_guard(rng.standard_normal((k, m) if a_col else (m, k)).astype(np.float32))
    b = array_before_guard(rng.standard_normal((n, k) if b_col else (k, n)).astype(np.float32))
    va, vb = (a.T if a_col else a), (b.T if b_col else b)
    fn, plan, _ = compile_tiled(va.shape, _strides(va), vb.shape, _strides(vb), "float32")
    out = array_before_guard(np.zeros((m, n), np.float32))
    scratch = array_before_guard(np.zeros(max(1, plan.scratch_elems), np.float32))

    def call():
        fn(va.ctypes.data, vb.ctypes.data, out.ctypes.data, scratch.ctypes.data)
        if not np.allclose(out, va @ vb, rtol=1e-4, atol=1e-4):
            raise AssertionError("wrong product")
    assert runs_without_a_fault(call)


@pytest.mark.parametrize("beta", [1, 0.5])
def test_items_accumulate_into_c(beta):
    """emit_items with beta: C = A @ B + beta * C."""
    m, n, k = 19, 37, 300
    plan = gemm_tiled.tiled_plan("float64", m, n, k, (k, 1), (1, k), (n, 1))
    assert plan.pack or plan.transposed
    module = new_module(f"test_gemm_tiled_beta_{next(_count)}")
    ptr = ir.DoubleType().as_pointer()
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [ptr] * 4), "accumulate")
    builder = ir.IRBuilder(fn.append_basic_block())
    a, b, c, scratch = fn.args
    if plan.pack:
        gemm_tiled.emit_pack(builder, plan, a if plan.transposed else b, scratch)
    gemm_tiled.emit_items(builder, plan, a, b, c, scratch, i64(0), i64(plan.items),
                          beta if beta == 1 else ir.Constant(ir.DoubleType(), beta))
    builder.ret_void()
    library = CodeLibrary(module)
    library.finalize()
    call = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * 4)(library.address("accumulate"))
    rng = np.random.default_rng(3)
    A, Bt, C = rng.standard_normal((m, k)), rng.standard_normal((n, k)), rng.standard_normal((m, n))
    want = A @ Bt.T + beta * C
    scratch_array = np.zeros(max(1, plan.scratch_elems))
    call(A.ctypes.data, Bt.ctypes.data, C.ctypes.data, scratch_array.ctypes.data)
    np.testing.assert_allclose(C, want, rtol=1e-12, atol=1e-12)


def test_plan_orientation_reads_the_larger_operand_in_place():
    # a linear layer: x (128 x 512) @ W^T with W (1024 x 512) row-major: pack x, vectors along m
    p = gemm_tiled.tiled_plan("float32", 128, 1024, 512, (512, 1), (1, 512), (1024, 1))
    assert p.transposed and p.pack and p.scratch_elems == p.panels * 512 * p.nr >= 128 * 512
    assert p.mr == p.nr == p.lanes  # square tiles, transposed in registers
    # dY @ W with W row-major: B in place, vectors along C's rows
    p = gemm_tiled.tiled_plan("float32", 128, 512, 1024, (1024, 1), (512, 1), (512, 1))
    assert not p.transposed and not p.pack
    # dY^T @ x: A column-major... B in place still wins (stores along C's rows)
    p = gemm_tiled.tiled_plan("float32", 1024, 512, 128, (1, 1024), (512, 1), (512, 1))
    assert not p.transposed and not p.pack
    assert p.mr * (p.nr // p.lanes) <= simd.vector_registers() * 3 // 4


def test_rule_keeps_the_blas_for_small_or_narrow_products():
    layout = lambda m, n, k: matmul_layout((m, k), (k, 1), (k, n), (1, k))  # noqa: E731
    assert gemm_tiled.gemm_algorithm(layout(64, 1024, 256), "float32") == "tiled"
    assert gemm_tiled.gemm_algorithm(layout(4, 4, 4), "float32") == "blas"
    assert gemm_tiled.gemm_algorithm(layout(64, 1024, 256), "float32", dynamic=True) == "blas"
    assert gemm_tiled.gemm_algorithm(matmul_layout((64, 32), (32, 1), (32, 16), (16, 1)), "int64") == "blas"


def test_rows_4_kib_apart_are_copied_first():
    p = gemm_tiled.tiled_plan("float64", 29, 70, 512, (512, 1), (70, 1), (70, 1))
    assert p.pack_s and not p.pack and p.scratch_elems == p.row_blocks * 512 * p.mr
    assert not gemm_tiled.tiled_plan("float64", 29, 70, 500, (500, 1), (70, 1), (70, 1)).pack_s
    assert not gemm_tiled.tiled_plan("float64", 29, 33, 512, (512, 1), (33, 1), (33, 1)).pack_s  # 3 panels


@pytest.mark.parametrize("la,lb", [("row", "col"), ("strided", "col")])
def test_equal_products_of_a_unit_share_one_function(la, lb):
    """Two equal products of one module call one function (out of line: its code exists
    once), a third, different one its own; all three compute their own operands' product (a
    copied operand in each one's own scratch)."""
    rng = np.random.default_rng(5)
    shapes = [(40, 17, 300), (40, 17, 300), (13, 40, 9)]
    views = [(_operand((m, k), la, "float64", rng)[1], _operand((k, n), lb, "float64", rng)[1])
             for m, n, k in shapes]
    module = new_module(f"test_gemm_tiled_{next(_count)}")
    dt = np.dtype("float64")
    buffers = [Buffer(i, dt, (), (), i % 4 >= 2) for i in range(4 * len(shapes))]
    plans = []
    for p, (a, b) in enumerate(views):
        product = Product(Operand(4 * p, a.shape, _strides(a)), Operand(4 * p + 1, b.shape, _strides(b)),
                          4 * p + 2, dt, "tiled", 4 * p + 3)
        emit_product(module, f"product{p}", buffers, product)
        module.get_global(f"product{p}").linkage = "external"
        plans.append(gemm_tiled.batched_plan(matmul_layout(a.shape, _strides(a), b.shape, _strides(b)),
                                             "float64"))
    shared = [f for f in module.functions if "_gemm_" in f.name]
    assert len(shared) == 2
    assert all("noinline" in f.attributes for f in shared)
    library = CodeLibrary(module)
    library.finalize()
    defined = [line.split("@")[1].split("(")[0] for line in library.llvm_ir.splitlines()
               if line.startswith("define")]
    assert [defined.count(f.name) for f in shared] == [1, 1]
    assert sum("_gemm_" in name for name in defined) == 2
    for p, (a, b) in enumerate(views):
        out = np.full((a.shape[0], b.shape[1]), np.nan)
        scratch = np.full(max(1, plans[p].scratch_elems), np.nan)
        arrays = [np.zeros(1)] * (4 * len(shapes))
        arrays[4 * p:4 * p + 4] = [a, b, out, scratch]
        fn = ctypes.CFUNCTYPE(ctypes.c_int32, *[ctypes.c_void_p] * len(arrays))(library.address(f"product{p}"))
        assert fn(*[x.ctypes.data for x in arrays]) == 0
        np.testing.assert_allclose(out, a @ b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("rows,mr", [(64, 8), (32, 8), (128, 8), (100, 10), (96, 12), (29, 12), (7, 7)])
def test_row_blocks_divide_the_rows_when_a_size_from_two_thirds_of_mr_does(rows, mr):
    """A short last row block is a second copy of the tile's code: MR shrinks to the largest
    size from 2/3 of it that divides T's rows (none for 29: MR stays, with a rest block)."""
    plan = gemm_tiled.tiled_plan("float32", rows, 64, 32, (32, 1), (64, 1), (64, 1))
    assert not plan.transposed and plan.mr == mr


def test_what_keeps_a_tiled_product_cheap_to_compile():
    """Each round of a tile's register transposition but the last passes through
    `llvm.arithmetic.fence` (instruction selection otherwise combines the rounds' shuffles
    recursively: ~8 ms for a 16 x 16 tile) and the result is still the transpose; a product's
    call of its shared function is `alwaysinline` (no function of its own for the pipeline);
    a splat's constants print in LLVM's short form."""
    lanes = simd.lanes("float32")
    vty = ir.VectorType(ir.FloatType(), lanes)
    module = new_module(f"test_gemm_tiled_{next(_count)}")
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [ir.FloatType().as_pointer()] * 2), "transpose")
    b = ir.IRBuilder(fn.append_basic_block())
    rows = [simd.load_vector(b, element(b, fn.args[0], i64(r * lanes)), ir.FloatType(), lanes) for r in range(lanes)]
    for j, column in enumerate(gemm_tiled.transpose_square(b, rows)):
        simd.store_vector(b, column, element(b, fn.args[1], i64(j * lanes)))
    b.ret_void()
    rounds = lanes.bit_length() - 1
    assert str(module).count(f'call <{lanes} x float> @"llvm.arithmetic.fence.v{lanes}f32"(') == lanes * (rounds - 1)
    library = CodeLibrary(module)
    library.finalize()
    m = np.arange(lanes * lanes, dtype=np.float32).reshape(lanes, lanes)
    out = np.zeros_like(m)
    ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)(library.address("transpose"))(m.ctypes.data, out.ctypes.data)
    assert np.array_equal(out, m.T)

    splat = str(simd.splat(ir.IRBuilder(ir.Function(module, ir.FunctionType(vty, [ir.FloatType()]), "s")
                                        .append_basic_block()), ir.Constant(ir.FloatType(), 1.0), lanes))
    assert splat.endswith(f"<{lanes} x float> undef, <{lanes} x i32> zeroinitializer")

    dt = np.dtype("float32")
    module = new_module(f"test_gemm_tiled_{next(_count)}")
    product = Product(Operand(0, (40, 300), (300, 1)), Operand(1, (300, 64), (64, 1)), 2, dt, "tiled", 3)
    emit_product(module, "product0", [Buffer(i, dt, (), (), i >= 2) for i in range(4)], product)
    assert "alwaysinline" in module.get_global("product0").attributes
