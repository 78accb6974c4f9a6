"""The remaining reductions run natively with the interpreter's results: var/std (each
overload), vector norms of each order, logsumexp, prod, argmax/argmin (first extreme, NaN
first), max/min over everything and cumsum, on float32/float64 and non-contiguous inputs."""

from __future__ import annotations

import numpy as np
import pytest

from .test_lowering_nn import _rand, assert_all_native, run_both

CASES = {
    "var": "%y : Tensor = aten::var(%x, %t)",
    "var.dim": "%y : Tensor = aten::var(%x, %d1, %f, %t)",
    "var.correction": "%y : Tensor = aten::var(%x, %d01, %c2, %t)",
    "std.dim": "%y : Tensor = aten::std(%x, %d1, %t, %f)",
    "norm.Scalar": "%y : Tensor = aten::norm(%x, %i2)",
    "norm.dim p=1": "%y : Tensor = aten::norm(%x, %i1, %d1, %t)",
    "norm.dim p=3": "%y : Tensor = aten::norm(%x, %p3, %d01, %f)",
    "linalg_vector_norm inf": "%y : Tensor = aten::linalg_vector_norm(%x, %inf, %d1, %f, %none)",
    "linalg_vector_norm -inf": "%y : Tensor = aten::linalg_vector_norm(%x, %ninf, %none, %t, %none)",
    "linalg_vector_norm 0": "%y : Tensor = aten::linalg_vector_norm(%x, %i0, %d1, %f, %none)",
    "logsumexp": "%y : Tensor = aten::logsumexp(%x, %d1, %f)",
    "logsumexp keepdim": "%y : Tensor = aten::logsumexp(%x, %d01, %t)",
    "prod": "%y : Tensor = aten::prod(%x, %none)",
    "prod.dim_int": "%y : Tensor = aten::prod(%x, %i1, %t, %none)",
    "argmax": "%y : Tensor = aten::argmax(%x, %none, %f)",
    "argmax dim": "%y : Tensor = aten::argmax(%x, %i1, %t)",
    "argmin dim": "%y : Tensor = aten::argmin(%x, %i0, %f)",
    "max": "%y : Tensor = aten::max(%x)",
    "min": "%y : Tensor = aten::min(%x)",
}

HEADER = """graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %t : bool = prim::Constant[value=1]()
  %f : bool = prim::Constant[value=0]()
  %i0 : int = prim::Constant[value=0]()
  %i1 : int = prim::Constant[value=1]()
  %i2 : int = prim::Constant[value=2]()
  %c2 : int = prim::Constant[value=2]()
  %p3 : float = prim::Constant[value=3.]()
  %inf : float = prim::Constant[value=inf]()
  %ninf : float = prim::Constant[value=-inf]()
  %d1 : int[] = prim::Constant[value=[1]]()
  %d01 : int[] = prim::Constant[value=[0, 1]]()
  {body}
  return (%y)"""


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", list(CASES))
def test_reduction(case, dtype):
    x = _rand((4, 6), dtype)
    x[1, 3] = 0.0
    assert_all_native(run_both(HEADER.format(body=CASES[case]), [x], rtol=1e-4))


@pytest.mark.parametrize("case", ["var.dim", "norm.dim p=3", "logsumexp", "argmax dim", "prod.dim_int"])
def test_reduction_of_a_non_contiguous_input(case):
    x = _rand((6, 10))[::2, 1::2]
    assert not x.flags.c_contiguous
    assert_all_native(run_both(HEADER.format(body=CASES[case]), [x], rtol=1e-4))


@pytest.mark.parametrize("case", ["argmax", "argmax dim", "argmin dim", "max", "logsumexp"])
def test_nan_and_ties(case):
    x = np.array([[1.0, 3.0, 3.0, -2.0], [np.nan, 0.0, np.nan, 5.0], [2.0, 2.0, 2.0, 2.0]], np.float32)
    assert_all_native(run_both(HEADER.format(body=CASES[case]), [x]))


@pytest.mark.parametrize("case", ["prod", "argmax dim", "max", "prod.dim_int"])
def test_integer_inputs(case):
    x = np.random.default_rng(0).integers(-3, 4, (4, 6))
    assert_all_native(run_both(HEADER.format(body=CASES[case]), [x]))


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("dtype", ["%none", "%f64"])
@pytest.mark.parametrize("x", [_rand((4, 6)), _rand((4, 12))[:, ::2],
                               np.random.default_rng(0).integers(-5, 5, (4, 6))],
                         ids=["float32", "non-contiguous", "int64"])
def test_cumsum(dim, dtype, x):
    text = f"""graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %f64 : int = prim::Constant[value=7]()
  %d : int = prim::Constant[value={dim}]()
  %y : Tensor = aten::cumsum(%x, %d, {dtype})
  return (%y)"""
    assert_all_native(run_both(text, [x]))
