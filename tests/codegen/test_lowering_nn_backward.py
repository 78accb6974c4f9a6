"""The backwards of average, adaptive average and adaptive max pooling and of index_select run
natively with the interpreter's results (float32 and float64, stride, padding, ceil_mode,
count_include_pad, divisor_override, windows that overlap or leave gaps, 3-D inputs, repeated
indices), with and without bounds checks;
an index out of range bails out; max pooling whose stride list is printed as
`annotate(List[int], [])` lowers too."""

from __future__ import annotations

import numpy as np
import pytest

from irjit.ops.errors import IRRuntimeError
from irjit.ops.tensor import Tensor
from irjit.runtime import no_grad

from .test_lowering_nn import _rand, assert_all_native, run_both
from .test_lowering_nn_conv_backward import checks  # noqa: F401  (the bounds-checks fixture)

AVG_BACKWARD = """graph(%g : Tensor, %x : Tensor):
  %k : int[] = prim::Constant[value={k}]()
  %s : int[] = prim::Constant[value={s}]()
  %p : int[] = prim::Constant[value={p}]()
  %c : bool = prim::Constant[value={ceil}]()
  %i : bool = prim::Constant[value={include}]()
  %o : int? = prim::Constant[{divisor}]()
  %y : Tensor = aten::avg_pool2d_backward(%g, %x, %k, %s, %p, %c, %i, %o)
  return (%y)"""


def _pool_out(n, k, s, p, ceil):
    num = n + 2 * p - k
    o = (-(-num // s) if ceil else num // s) + 1
    return o - 1 if ceil and (o - 1) * s >= n + p else o


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("k, s, p, ceil, include, divisor", [
    ([2, 2], [2, 2], [0, 0], 0, 1, ""),
    ([3, 3], [2, 2], [1, 1], 1, 0, ""),
    ([3, 2], [1, 2], [1, 0], 0, 1, ""),
    ([2, 3], [3, 2], [0, 1], 1, 1, "value=5"),
])
def test_avg_pool2d_backward(checks, dtype, k, s, p, ceil, include, divisor):  # noqa: F811
    x = _rand((2, 3, 7, 8), dtype)
    out = [_pool_out(n, k[i], s[i], p[i], ceil) for i, n in enumerate(x.shape[2:])]
    g = _rand((2, 3, *out), dtype, 1)
    text = AVG_BACKWARD.format(k=k, s=s, p=p, ceil=ceil, include=include, divisor=divisor)
    assert_all_native(run_both(text, [g, x]))


ADAPTIVE_AVG_BACKWARD = """graph(%g : Tensor, %x : Tensor):
  %y : Tensor = aten::_adaptive_avg_pool2d_backward(%g, %x)
  return (%y)"""

ADAPTIVE_MAX_BACKWARD = """graph(%g : Tensor, %x : Tensor):
  %o : int[] = prim::Constant[value={out}]()
  %v : Tensor, %i : Tensor = aten::adaptive_max_pool2d(%x, %o)
  %y : Tensor = aten::adaptive_max_pool2d_backward(%g, %x, %i)
  return (%y, %v)"""

OUTPUT_SIZES = [[1, 1], [2, 3], [3, 3], [5, 4], [7, 8]]  # overlapping windows, gaps, identity


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("out", OUTPUT_SIZES)
def test_adaptive_avg_pool2d_backward(checks, dtype, out):  # noqa: F811
    x = _rand((2, 3, 7, 8), dtype)
    assert_all_native(run_both(ADAPTIVE_AVG_BACKWARD, [_rand((2, 3, *out), dtype, 1), x]))


@pytest.mark.parametrize("out", OUTPUT_SIZES[:-1])  # one-element windows: the forward stays interpreted
def test_adaptive_max_pool2d_backward(checks, out):  # noqa: F811
    x = _rand((3, 7, 8))  # unbatched
    assert_all_native(run_both(ADAPTIVE_MAX_BACKWARD.format(out=out), [_rand((3, *out), seed=1), x]))


def test_max_pool2d_with_the_stride_list_printed_as_annotated_empty_list():
    """`stride=annotate(List[int], [])` (TorchScript's default: the kernel size) lowers like []."""
    text = """graph(%x : Tensor):
  %k : int[] = prim::Constant[value=[2, 2]]()
  %s : int[] = prim::Constant[value=annotate(List[int], [])]()
  %p : int[] = prim::Constant[value=[0, 0]]()
  %d : int[] = prim::Constant[value=[1, 1]]()
  %c : bool = prim::Constant[value=0]()
  %y : Tensor = aten::max_pool2d(%x, %k, %s, %p, %d, %c)
  return (%y)"""
    assert_all_native(run_both(text, [_rand((2, 3, 6, 7))]))


INDEX_SELECT_BACKWARD = """graph(%g : Tensor, %i : Tensor):
  %sizes : int[] = prim::Constant[value={sizes}]()
  %d : int = prim::Constant[value={dim}]()
  %y : Tensor = aten::index_select_backward(%g, %sizes, %d, %i)
  return (%y)"""


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_index_select_backward_sums_the_gradients_of_repeated_indices(checks, dtype, dim):  # noqa: F811
    sizes = [4, 5, 3]
    index = np.array([1, 2, 1, 0, 1])
    g_shape = list(sizes)
    g_shape[dim] = len(index)
    text = INDEX_SELECT_BACKWARD.format(sizes=sizes, dim=dim)
    assert_all_native(run_both(text, [_rand(g_shape, dtype), index]))


def test_index_select_backward_of_an_index_out_of_range_bails_out():
    text = INDEX_SELECT_BACKWARD.format(sizes=[4, 3], dim=0)
    runner = run_both(text, [_rand((2, 3)), np.array([0, 3])])
    with no_grad(), pytest.raises(IRRuntimeError, match="index 4 is out of bounds"):
        runner.run([Tensor(_rand((2, 3))), Tensor(np.array([0, 4]))])
    assert runner.stats.bailouts == 1
