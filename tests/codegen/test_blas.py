"""GEMM emitted by `blas`: every BLAS path available here (numpy's OpenBLAS through CBLAS and
through its Fortran interface, scipy's cython_blas, the loop kernel) against numpy's matmul, on
transposed, strided, reversed, broadcast, degenerate and zero-size operands."""

from __future__ import annotations

import numpy as np
import pytest

from irjit.compiler.codegen import blas, blas_library
from irjit.compiler.codegen.blas import Matrix
from tests.codegen.blas_jit import compile_function

LIBRARIES = {
    "loops": lambda: None,
    "cblas": lambda: blas_library.numpy_openblas("cblas"),
    "fortran": lambda: blas_library.numpy_openblas("fortran"),
    "scipy": blas_library.scipy_blas,
}
PTR = {"float32": "f32*", "float64": "f64*", "int64": "i64*"}
SCALAR = {"float32": "f32", "float64": "f64", "int64": "i64"}
_COMPILED = {}


def runtime_gemm(dtype: str, library_name: str, with_scratch: bool, small_volume: int = 0):
    """A JIT `gemm(A, B, C, scratch, m, n, k, strides..., alpha, beta)` with run-time sizes."""
    key = (dtype, library_name, with_scratch, small_volume)
    if key not in _COMPILED:
        library = LIBRARIES[library_name]()
        if library is None and library_name != "loops":
            pytest.skip(f"no {library_name} BLAS here")

        def build(b, args):
            a, bm, c, scratch, m, n, k, ars, acs, brs, bcs, crs, ccs, alpha, beta = args
            blas.emit_gemm(b, dtype, m, n, k, Matrix(a, ars, acs), Matrix(bm, brs, bcs),
                           Matrix(c, crs, ccs), alpha, beta, scratch if with_scratch else None,
                           library=library, small_volume=small_volume)
        _COMPILED[key] = compile_function(build, [PTR[dtype]] * 4 + ["i64"] * 9 + [SCALAR[dtype]] * 2)
    return _COMPILED[key]


def strides(x: np.ndarray) -> list[int]:
    return [s // x.itemsize for s in x.strides]


def operand(rng, shape, layout: str, dtype: str) -> np.ndarray:
    """A (rows, cols) array laid out "c" (row-major), "t" (a transposed view), "s" (strided) or
    "r" (reversed: negative strides)."""
    rows, cols = shape
    make = lambda r, c: (rng.standard_normal((r, c)) * 4).astype(dtype)
    if layout == "c":
        return make(rows, cols)
    if layout == "t":
        return make(cols, rows).T
    if layout == "r":
        return make(rows, cols)[::-1, ::-1]
    return make(2 * rows + 1, 3 * cols)[1::2, ::3]


CANARY = 8  # elements after the scratch the product must leave alone


def run(fn, dtype, a, b, c, alpha=1, beta=0):
    """Run `fn` with a scratch buffer of exactly the size gemm_scratch_elems asks for."""
    m, k = a.shape
    n = b.shape[1]
    size = blas.gemm_scratch_elems(m, n, k, strides(a), strides(b))
    assert size <= blas.gemm_scratch_elems(m, n, k)
    scratch = np.full(size + CANARY, 12345, dtype)
    fn(a, b, c, scratch, m, n, k, *strides(a), *strides(b), *strides(c), alpha, beta)
    assert (scratch[size:] == 12345).all(), "the product wrote past its scratch"


SHAPES = [(3, 4, 5), (17, 33, 29), (1, 7, 3), (6, 1, 4), (5, 6, 1), (1, 1, 1), (0, 3, 4), (3, 0, 4),
          (3, 4, 0)]


@pytest.mark.parametrize("library", list(LIBRARIES))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_gemm_matches_numpy_on_every_layout(library, dtype, shape):
    fn = runtime_gemm(dtype, library, with_scratch=True)
    rng = np.random.default_rng(0)
    m, n, k = shape
    tol = dict(rtol=1e-4, atol=1e-3) if dtype == "float32" else dict(rtol=1e-10, atol=1e-10)
    for la in "ctsr":
        for lb in "ctsr":
            for lc in "cts":
                a, b = operand(rng, (m, k), la, dtype), operand(rng, (k, n), lb, dtype)
                c = operand(rng, (m, n), lc, dtype)
                c[...] = np.nan  # beta == 0: C is written, never read
                run(fn, dtype, a, b, c)
                np.testing.assert_allclose(c, a @ b, **tol, err_msg=f"layouts A={la} B={lb} C={lc}")


@pytest.mark.parametrize("library", list(LIBRARIES))
def test_alpha_and_beta_scale_the_product_and_c(library):
    fn = runtime_gemm("float64", library, with_scratch=True)
    rng = np.random.default_rng(1)
    a, b = operand(rng, (9, 7), "t", "float64"), operand(rng, (7, 11), "c", "float64")
    c = operand(rng, (9, 11), "c", "float64")
    expected = 2.5 * (a @ b) - 0.5 * c
    run(fn, "float64", a, b, c, alpha=2.5, beta=-0.5)
    np.testing.assert_allclose(c, expected, rtol=1e-12)


def test_strided_operands_without_scratch_use_the_loop_kernel():
    fn = runtime_gemm("float32", "cblas", with_scratch=False)
    rng = np.random.default_rng(2)
    a, b = operand(rng, (20, 30), "s", "float32"), operand(rng, (30, 10), "s", "float32")
    c = np.empty((20, 10), np.float32)
    fn(a, b, c, None, 20, 10, 30, *strides(a), *strides(b), *strides(c), 1.0, 0.0)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("library", list(LIBRARIES))
def test_broadcast_operands_with_zero_strides(library):
    fn = runtime_gemm("float32", library, with_scratch=True)
    rng = np.random.default_rng(6)
    rows = np.broadcast_to(np.arange(6, dtype=np.float32), (4, 6))  # row stride 0
    scalar_row = np.broadcast_to(np.float32(1.5), (1, 6))  # a vector with stride 0
    for a, b in [(rows, operand(rng, (6, 5), "c", "float32")),
                 (scalar_row, operand(rng, (6, 5), "t", "float32")),
                 (operand(rng, (5, 6), "c", "float32"), scalar_row.T)]:
        c = np.empty((a.shape[0], b.shape[1]), np.float32)
        run(fn, "float32", a, b, c)
        np.testing.assert_allclose(c, a @ b, rtol=1e-5)


def test_int64_products_are_exact():
    def build(b, args):
        a, bm, c = args
        blas.emit_gemm(b, "int64", 5, 4, 3, Matrix(a, 1, 5), Matrix(bm, 4, 1), Matrix(c, 4, 1))
    unrolled = compile_function(build, ["i64*"] * 3)
    rng = np.random.default_rng(3)
    a = rng.integers(-2**40, 2**40, (3, 5)).T
    b = rng.integers(-1000, 1000, (3, 4))
    c = np.empty((5, 4), np.int64)
    unrolled(np.ascontiguousarray(a.T), b, c)
    np.testing.assert_array_equal(c, a @ b)

    looped = runtime_gemm("int64", "loops", with_scratch=False)
    for m, n, k in [(17, 33, 29), (40, 2, 300)]:
        a = rng.integers(-2**20, 2**20, (k, m)).T  # transposed
        b = rng.integers(-2**20, 2**20, (2 * k, 3 * n))[::2, ::3]  # strided
        c = np.full((m, n), 7, np.int64)
        looped(a, b, c, None, m, n, k, *strides(a), *strides(b), *strides(c), 3, -2)
        np.testing.assert_array_equal(c, 3 * (a @ b) - 14)


def _constant_gemm_ir(m: int, n: int, k: int) -> str:
    def build(b, args):
        a, bm, c = args
        blas.emit_gemm(b, "float32", m, n, k, Matrix(a, k, 1), Matrix(bm, n, 1), Matrix(c, n, 1))
    return compile_function(build, ["f32*"] * 3).llvm_ir


def test_numpy_bundled_openblas_is_found():
    if np.show_config(mode="dicts")["Build Dependencies"]["blas"]["name"] != "scipy-openblas":
        pytest.skip("this numpy is not built with scipy-openblas")
    for abi in ("cblas", "fortran"):
        library = blas_library.numpy_openblas(abi)
        assert library is not None, f"numpy's bundled OpenBLAS ({abi}) was not found"
        assert "openblas" in library.origin and library.int_bits == 64
        assert set(library.addresses) == set(blas_library.ROUTINES)
    assert blas_library.default_library() == blas_library.numpy_openblas("cblas")


def test_tiny_constant_products_are_inlined_and_large_ones_call_blas():
    library = blas_library.default_library()
    if library is None:
        pytest.skip("no BLAS here")
    assert blas.SMALL_GEMM_VOLUME >= 3 * 4 * 4
    assert library.symbol("sgemm") not in _constant_gemm_ir(3, 4, 4)
    assert library.symbol("sgemm") in _constant_gemm_ir(64, 64, 64)


def test_matrix_vector_products_call_gemv():
    library = blas_library.default_library()
    if library is None:
        pytest.skip("no BLAS here")
    assert library.symbol("sgemv") in _constant_gemm_ir(1, 64, 64)
    assert library.symbol("sgemv") in _constant_gemm_ir(64, 1, 64)
    assert library.symbol("sgemv") not in _constant_gemm_ir(64, 2, 64)


def test_runtime_threshold_switches_between_kernel_and_blas():
    for small_volume in (0, 10**6):
        fn = runtime_gemm("float32", "cblas", with_scratch=True, small_volume=small_volume)
        rng = np.random.default_rng(4)
        a, b = operand(rng, (40, 50), "t", "float32"), operand(rng, (50, 30), "c", "float32")
        c = np.empty((40, 30), np.float32)
        run(fn, "float32", a, b, c)
        np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def known_gemm(dtype: str, library_name: str, a, b, c, with_scratch: bool = True):
    """A JIT `gemm(A, B, C, scratch, alpha, beta)` for the sizes and strides of a, b and c, known
    when the code is generated."""
    library = LIBRARIES[library_name]()
    if library is None and library_name != "loops":
        pytest.skip(f"no {library_name} BLAS here")
    (m, k), n = a.shape, b.shape[1]

    modules = []

    def build(bld, args):
        pa, pb, pc, scratch, alpha, beta = args
        blas.emit_gemm(bld, dtype, m, n, k, Matrix(pa, *strides(a)), Matrix(pb, *strides(b)),
                       Matrix(pc, *strides(c)), alpha, beta, scratch if with_scratch else None,
                       library=library)
        modules.append(bld.module)
    fn = compile_function(build, [PTR[dtype]] * 4 + [SCALAR[dtype]] * 2)
    fn.emitted_ir = str(modules[0])  # before optimizing
    return fn


def known_and_runtime(library: str, shape, layouts_a: str, layouts_b: str, seed: int):
    """Per layout of A, B and C: (A, B, C from the known-size product, C from the run-time
    dispatch's, its emitted IR, the layouts), both run with alpha 1.5 and beta 0.5 on one C."""
    rng = np.random.default_rng(seed)
    m, n, k = shape
    runtime = runtime_gemm("float32", library, with_scratch=True)
    for la in layouts_a:
        for lb in layouts_b:
            for lc in "ct":
                a, b = operand(rng, (m, k), la, "float32"), operand(rng, (k, n), lb, "float32")
                c_known, c_runtime = operand(rng, (m, n), lc, "float32"), operand(rng, (m, n), lc, "float32")
                c_runtime[...] = c_known
                fn = known_gemm("float32", library, a, b, c_known)
                size = blas.gemm_scratch_elems(m, n, k, strides(a), strides(b))
                fn(a, b, c_known, np.full(size + CANARY, 12345, np.float32), 1.5, 0.5)
                run(runtime, "float32", a, b, c_runtime, alpha=1.5, beta=0.5)
                yield a, b, c_known, c_runtime, fn.emitted_ir, f"layouts A={la} B={lb} C={lc}"


@pytest.mark.parametrize("library", ["cblas", "fortran"])
@pytest.mark.parametrize("shape", [(17, 33, 29), (1, 40, 50), (40, 1, 50), (6, 30, 1)],
                         ids=lambda s: "x".join(map(str, s)))
def test_known_sizes_call_blas_as_the_run_time_dispatch_does(library, shape):
    """With sizes and strides known, the call the run-time dispatch would make is emitted
    directly (no dispatch, no loop kernel): bit-identical results on every layout."""
    for _, _, c_known, c_runtime, emitted, layouts in known_and_runtime(library, shape, "ctsr", "ctsr", 5):
        assert "irjit_gemm_kernel" not in emitted
        np.testing.assert_array_equal(c_known, c_runtime, err_msg=layouts)


def test_known_strided_operands_without_scratch_use_the_loop_kernel():
    rng = np.random.default_rng(7)
    a, b = operand(rng, (20, 30), "s", "float32"), operand(rng, (30, 10), "s", "float32")
    c = np.empty((20, 10), np.float32)
    fn = known_gemm("float32", "cblas", a, b, c, with_scratch=False)
    assert "irjit_gemm_kernel" in fn.emitted_ir  # the dispatch's choice
    fn(a, b, c, None, 1.0, 0.0)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def test_row_blocks_cover_the_rows_within_the_blas_one_thread_volume():
    assert blas.row_blocks(128, 10, 1024) == [(0, 25), (25, 25), (50, 25), (75, 25), (100, 25), (125, 3)]
    assert blas.row_blocks(16, 10, 1024) == [(0, 16)]  # (the BLAS runs it on one thread anyway)
    assert blas.row_blocks(512, 512, 512) == [(0, 512)]  # (large enough for threads)
    assert blas.row_blocks(40, 10, 30000) == [(0, 40)]  # (a row alone is over the volume)
    for rows, cols, k in [(100, 10, 1024), (77, 13, 700), (3000, 3, 100)]:
        blocks = blas.row_blocks(rows, cols, k)
        assert [s for s, _ in blocks] == list(np.cumsum([0] + [n for _, n in blocks])[:-1])
        assert sum(n for _, n in blocks) == rows
        assert all(n * cols * k <= blas.BLAS_ONE_THREAD_MNK for _, n in blocks) or len(blocks) == 1


@pytest.mark.parametrize("library", ["cblas", "fortran"])
def test_a_product_in_row_blocks_gives_the_single_calls_result(library):
    """A product below irjit's threading size that the BLAS would thread (a 10-class output
    layer) is cut into calls the BLAS runs on the calling thread: every layout (operands read
    transposed, copied to scratch, C column-major), alpha and beta, against the single call of
    the run-time dispatch."""
    m, n, k = 100, 10, 1024
    sgemm = f'call void @"{LIBRARIES[library]().symbol("sgemm")}"'
    for a, b, c_known, c_runtime, emitted, layouts in known_and_runtime(library, (m, n, k), "cts", "cts", 8):
        rows, cols = (m, n) if c_known.flags.c_contiguous else (n, m)
        assert emitted.count(sgemm) == len(blas.row_blocks(rows, cols, k)) > 1
        # (the calls may sum in another order than the one call: float32 rounding of sums of
        # 1024 terms, bounded by their magnitudes)
        scale = 1.5 * (np.abs(a) @ np.abs(b)) + 0.5 * np.abs(c_runtime)
        assert (np.abs(c_known - c_runtime) <= 1e-5 * scale).all(), layouts
