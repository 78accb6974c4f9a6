"""`aten::convolution_backward` runs natively with the interpreter's gradients: float32 and
float64, stride, padding, dilation, groups (depthwise too), 1x1, transposed convolutions with
output padding, 1-D and unbatched convolutions, every output_mask subset, with and without bounds
checks; operands it cannot read in place (non-contiguous) stay interpreted with the same results."""

from __future__ import annotations

import numpy as np
import pytest

from .test_lowering_nn import _rand, assert_all_native, run_both

BACKWARD = """graph(%g : Tensor, %x : Tensor, %w : Tensor):
  %bias_sizes : int[]? = prim::Constant[{bias}]()
  %s : int[] = prim::Constant[value={s}]()
  %p : int[] = prim::Constant[value={p}]()
  %d : int[] = prim::Constant[value={d}]()
  %t : bool = prim::Constant[value={transposed}]()
  %op : int[] = prim::Constant[value={op}]()
  %groups : int = prim::Constant[value={groups}]()
  %mask : bool[] = prim::Constant[value={mask}]()
  %gi : Tensor, %gw : Tensor, %gb : Tensor = aten::convolution_backward(%g, %x, %w, %bias_sizes, %s, %p, %d, %t, %op, %groups, %mask)
  return ({outputs})"""

ALL = (True, True, True)


@pytest.fixture(params=[False, True], ids=["plain", "bounds-checked"])
def checks(request, monkeypatch):
    monkeypatch.setenv("IRJIT_NATIVE_CHECKS", "1" if request.param else "0")


def _out_size(n, k, s, p, d):
    return (n + 2 * p - d * (k - 1) - 1) // s + 1


def _graph(s, p, d, groups, mask, transposed=False, op=None, out_channels=None) -> str:
    rank = len(s)
    outputs = ", ".join(name for name, m in zip(("%gi", "%gw", "%gb"), mask) if m)
    bias = f"value=[{out_channels}]" if mask[2] else ""
    return BACKWARD.format(s=list(s), p=list(p), d=list(d), op=list(op or [0] * rank), groups=groups,
                           transposed=int(transposed), bias=bias, outputs=outputs,
                           mask="[" + ", ".join(str(m) for m in mask) + "]")


def _conv_case(x_shape, w_shape, s, p, d, groups, dtype):
    """(grad_output, input, weight) of a convolution of these shapes and geometry."""
    out = [_out_size(n, k, *g) for n, k, g in zip(x_shape[-len(s):], w_shape[2:], zip(s, p, d))]
    g_shape = tuple(x_shape[:-len(s) - 1]) + (w_shape[0],) + tuple(out)
    return [_rand(g_shape, dtype, 2), _rand(x_shape, dtype), _rand(w_shape, dtype, 1)]


GEOMETRIES_2D = {  # input, weight, stride, padding, dilation, groups
    "basic": ((2, 3, 8, 7), (4, 3, 3, 3), (1, 1), (0, 0), (1, 1), 1),
    "strided_padded": ((2, 4, 9, 8), (6, 2, 3, 2), (2, 1), (1, 2), (1, 1), 2),
    "dilated": ((1, 2, 10, 9), (3, 2, 3, 3), (1, 2), (2, 1), (2, 3), 1),
    "depthwise": ((2, 5, 8, 8), (5, 1, 3, 3), (1, 1), (1, 1), (1, 1), 5),
    "depthwise_multiplier": ((2, 3, 7, 6), (6, 1, 3, 3), (2, 2), (1, 1), (1, 1), 3),
    "pointwise": ((2, 6, 5, 4), (4, 3, 1, 1), (1, 1), (0, 0), (1, 1), 2),
    "pointwise_strided": ((2, 3, 5, 6), (4, 3, 1, 1), (2, 2), (0, 0), (1, 1), 1),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(GEOMETRIES_2D))
def test_conv2d_backward(checks, name, dtype):
    x_shape, w_shape, s, p, d, groups = GEOMETRIES_2D[name]
    args = _conv_case(x_shape, w_shape, s, p, d, groups, dtype)
    text = _graph(s, p, d, groups, ALL, out_channels=w_shape[0])
    assert_all_native(run_both(text, args, rtol=1e-4))


@pytest.mark.parametrize("mask", [(True, False, False), (False, True, False), (False, False, True),
                                  (True, True, False), (False, True, True), (True, False, True)])
def test_output_mask_subsets(mask):
    x_shape, w_shape, s, p, d, groups = GEOMETRIES_2D["strided_padded"]
    args = _conv_case(x_shape, w_shape, s, p, d, groups, np.float64)
    runner = run_both(_graph(s, p, d, groups, mask, out_channels=w_shape[0]), args)
    assert_all_native(runner)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("s, p, op, d, groups", [(1, 0, 0, 1, 1), (2, 1, 1, 1, 1), (2, 1, 0, 1, 2),
                                                 (1, 1, 0, 2, 1)])
def test_transposed_convolution_backward(checks, dtype, s, p, op, d, groups):
    """conv_transpose2d's gradients: its input (x) is the convolution's output."""
    x = _rand((2, 4, 5, 4), dtype)
    w = _rand((4, 3, 3, 3), dtype, 1)
    out = [(n - 1) * s - 2 * p + d * 2 + op + 1 for n in x.shape[2:]]
    g = _rand((2, 3 * groups, *out), dtype, 2)
    text = _graph([s, s], [p, p], [d, d], groups, ALL, transposed=True, op=[op, op],
                  out_channels=3 * groups)
    assert_all_native(run_both(text, [g, x, w], rtol=1e-4))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("s, p, d, groups", [(1, 0, 1, 1), (2, 1, 1, 1), (1, 2, 2, 2)])
def test_conv1d_backward(checks, dtype, s, p, d, groups):
    args = _conv_case((2, 4, 11), (6, 4 // groups, 3), [s], [p], [d], groups, dtype)
    assert_all_native(run_both(_graph([s], [p], [d], groups, ALL, out_channels=6), args, rtol=1e-4))


@pytest.mark.parametrize("rank", [1, 2])
def test_unbatched_convolution_backward(rank):
    spatial, kernel = (9, 8)[:rank], (3, 2)[:rank]
    args = _conv_case((3,) + spatial, (4, 3) + kernel, [1] * rank, [1] * rank, [1] * rank, 1, np.float64)
    text = _graph([1] * rank, [1] * rank, [1] * rank, 1, ALL, out_channels=4)
    assert_all_native(run_both(text, args))


def test_a_non_contiguous_input_stays_interpreted_with_the_same_gradients():
    x_shape, w_shape, s, p, d, groups = GEOMETRIES_2D["basic"]
    g, x, w = _conv_case(x_shape, w_shape, s, p, d, groups, np.float32)
    x = np.ascontiguousarray(x.transpose(0, 1, 3, 2)).transpose(0, 1, 3, 2)  # same values
    runner = run_both(_graph(s, p, d, groups, ALL, out_channels=w_shape[0]), [g, x, w], rtol=1e-4)
    assert runner.stats.bailouts == 0 and runner.stats.nodes_interpreted == 1
