"""Merging a kernel's adjacent axes (collapse.py): axes every access walks as one merge (a
batch norm's H and W), outer and inner axes never merge with each other, kernels that refer to
axes by number (pooling positions) stay as they are, and merged kernels compute the same."""

from __future__ import annotations

import numpy as np

from irjit.compiler.codegen.collapse import collapse_axes
from irjit.compiler.codegen.unit import NativeUnit

from . import typed_graph
from .lowering_check import assert_native_matches

BN = """graph(%x : Tensor, %m : Tensor, %w : Tensor):
  %one : int = prim::Constant[value=1]()
  %s : int[] = prim::Constant[value=[6, 1, 1]]()
  %mm : Tensor = aten::reshape(%m, %s)
  %ww : Tensor = aten::reshape(%w, %s)
  %d : Tensor = aten::sub(%x, %mm, %one)
  %y : Tensor = aten::mul(%d, %ww)
  %r : Tensor = aten::relu(%y)
  return (%r)"""

ROW_SUMS = """graph(%x : Tensor):
  %dims : int[] = prim::Constant[value=[2, 3]]()
  %false : bool = prim::Constant[value=0]()
  %none : NoneType = prim::Constant()
  %e : Tensor = aten::exp(%x)
  %s : Tensor = aten::sum(%e, %dims, %false, %none)
  return (%s)"""

POOL = """graph(%x : Tensor):
  %k : int[] = prim::Constant[value=[2, 2]]()
  %p : int[] = prim::Constant[value=[0, 0]]()
  %d : int[] = prim::Constant[value=[1, 1]]()
  %f : bool = prim::Constant[value=0]()
  %y : Tensor = aten::max_pool2d(%x, %k, %k, %p, %d, %f)
  return (%y)"""


def _kernel(text: str, types: str):
    return NativeUnit(typed_graph(text, types), "collapse_" + str(abs(hash((text, types))))).kernel


def test_planes_merge_with_per_channel_values():
    kernel = _kernel(BN, "Float(4, 6, 5, 7), Float(6), Float(6)")
    assert kernel.outer == (4, 6, 5, 7)
    assert collapse_axes(kernel).outer == (4, 6, 35)
    rng = np.random.default_rng(0)
    assert_native_matches(BN, [rng.standard_normal((4, 6, 5, 7)).astype(np.float32),
                               rng.standard_normal(6).astype(np.float32), rng.standard_normal(6).astype(np.float32)])


def test_outer_and_inner_axes_merge_only_among_themselves():
    kernel = _kernel(ROW_SUMS, "Float(3, 4, 5, 6)")
    merged = collapse_axes(kernel)
    assert (kernel.outer, kernel.inner) == ((3, 4), (5, 6))
    assert (merged.outer, merged.inner) == ((12,), (30,))
    assert_native_matches(ROW_SUMS, [np.random.default_rng(1).standard_normal((3, 4, 5, 6)).astype(np.float32)])


def test_kernels_that_number_axes_stay():
    kernel = _kernel(POOL, "Float(2, 3, 8, 8)")
    assert collapse_axes(kernel) is kernel
