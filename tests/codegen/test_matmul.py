"""`torch.matmul` as batched GEMMs (`matmul`): 1-D operands, broadcast batch dims and
transposed operands against numpy's matmul, which broadcasts the same way."""

from __future__ import annotations

import numpy as np
import pytest

from irjit.compiler.codegen import blas, matmul
from tests.codegen.blas_jit import compile_function

CANARY = 8  # elements after the scratch the product must leave alone


def strides(x: np.ndarray) -> list[int]:
    return [s // x.itemsize for s in x.strides]


# small ones run in the loop kernel, the others (m*n*k > blas.SMALL_GEMM_VOLUME) in BLAS
MATMUL_CASES = [((2, 3, 4, 5), (5, 6)), ((5,), (2, 5, 3)), ((4, 5), (5,)), ((5,), (5,)),
                ((3, 1, 4, 5), (2, 5, 6)), ((2, 3, 4), (2, 4, 5)), ((1, 4, 5), (3, 5, 2)),
                ((0, 4, 5), (5, 2)), ((2, 3, 8, 9), (9, 7)), ((19,), (2, 19, 17)),
                ((33, 15), (15,)), ((3, 1, 12, 9), (2, 9, 13)), ((200,), (200,))]


@pytest.mark.parametrize("a_shape,b_shape", MATMUL_CASES, ids=str)
@pytest.mark.parametrize("transpose_b", [False, True])
def test_matmul_broadcasts_as_torch_matmul(a_shape, b_shape, transpose_b):
    rng = np.random.default_rng(5)
    a = rng.standard_normal(a_shape)
    b = rng.standard_normal(b_shape)
    if transpose_b and b.ndim >= 2:
        b = np.ascontiguousarray(np.swapaxes(b, -1, -2)).swapaxes(-1, -2)
    expected = np.matmul(a, b)
    layouts = []

    def build(bld, args):
        pa, pb, pc, scratch = args
        layouts.append(matmul.emit_matmul(bld, "float64", pa, a.shape, strides(a), pb, b.shape,
                                        strides(b), pc, scratch))
    fn = compile_function(build, ["f64*"] * 4)
    (layout,) = layouts
    assert layout.out_shape == expected.shape
    out = np.empty(layout.out_shape)
    nb = len(layout.batch)
    size = blas.gemm_scratch_elems(layout.m, layout.n, layout.k, layout.a_strides[nb:],
                                   layout.b_strides[nb:])
    scratch = np.full(size + CANARY, 12345.0)
    fn(a, b, out, scratch)
    assert (scratch[size:] == 12345).all(), "the product wrote past its scratch"
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)


def test_matmul_layout_rejects_mismatched_shapes():
    with pytest.raises(ValueError, match="size mismatch"):
        matmul.matmul_layout((3, 4), (4, 1), (5, 2), (2, 1))
    with pytest.raises(ValueError, match="do not broadcast"):
        matmul.matmul_layout((2, 3, 4), (12, 4, 1), (3, 4, 2), (8, 2, 1))
