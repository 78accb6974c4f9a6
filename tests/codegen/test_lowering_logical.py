"""`all` and `any` of tensors run natively with the interpreter's results: every overload, bool,
float (NaN counts as true), int32 and int64 inputs, a non-contiguous input; an empty
reduction stays interpreted."""

from __future__ import annotations

import numpy as np
import pytest

from .lowering_check import assert_native_matches

HEADER = """graph(%x : Tensor):
  %t : bool = prim::Constant[value=1]()
  %f : bool = prim::Constant[value=0]()
  %i1 : int = prim::Constant[value=1]()
  %none : NoneType = prim::Constant()
  %d01 : int[] = prim::Constant[value=[0, 1]]()
  %d0 : int[] = prim::Constant[value=[0]]()
  {body}
  return (%y)"""

CASES = {
    "all": "%y : Tensor = aten::all(%x)",
    "any": "%y : Tensor = aten::any(%x)",
    "all.dim": "%y : Tensor = aten::all(%x, %i1, %f)",
    "any.dim keepdim": "%y : Tensor = aten::any(%x, %i1, %t)",
    "all.dims": "%y : Tensor = aten::all(%x, %d0, %t)",
    "any.dims": "%y : Tensor = aten::any(%x, %d01, %f)",
    "any.dims None": "%y : Tensor = aten::any(%x, %none, %f)",
}


def _inputs(dtype) -> np.ndarray:
    x = np.array([[1, 0, 2, 3], [4, 5, 6, 7], [0, 0, 0, 0]]).astype(dtype)
    if dtype == np.float32:
        x[2, 1] = np.nan
    return x


@pytest.mark.parametrize("dtype", [np.bool_, np.float32, np.int32, np.int64])
@pytest.mark.parametrize("case", list(CASES))
def test_logical_reduction(case, dtype):
    assert_native_matches(HEADER.format(body=CASES[case]), [_inputs(dtype)])


def test_of_a_transposed_input():
    text = HEADER.format(body="%tx : Tensor = aten::t(%x)\n  %y : Tensor = aten::all(%tx, %i1, %f)")
    assert_native_matches(text, [_inputs(np.float32)])


def test_all_of_nothing_stays_interpreted():
    runner = assert_native_matches(HEADER.format(body=CASES["all"]), [np.zeros((0, 3), np.float32)],
                                   all_native=False)
    assert runner.stats.nodes_interpreted == 1
