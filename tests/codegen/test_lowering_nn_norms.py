"""Normalizations and (values, indices) reductions decompose into natively lowered ops at
specialization, and conv variants lower through conv2d's products, giving the interpreter's
results: batch norm in eval and in training (saved statistics and running-statistic updates
included), its backward, layer norm and its backward, group norm, conv1d (a batch of one too),
conv_transpose2d and `_convolution`, max/min over a dim."""

from __future__ import annotations

import numpy as np
import pytest

from irjit.compiler import parse_ir
from irjit.ops.tensor import Tensor
from irjit.runtime import no_grad
from irjit.runtime.interpreter import Interpreter
from irjit.runtime.native import NativeRunner

from .test_lowering_nn import _rand, assert_all_native, run_both

BATCH_NORM = """graph(%x : Tensor, %w : Tensor, %b : Tensor, %rm : Tensor, %rv : Tensor):
  %t : bool = prim::Constant[value={train}]()
  %m : float = prim::Constant[value=0.1]()
  %e : float = prim::Constant[value=1e-05]()
  %y : Tensor = aten::batch_norm(%x, %w, %b, %rm, %rv, %t, %m, %e, %t)
  return (%y)"""


def _bn_inputs(shape, dtype, seed=0):
    c = shape[1]
    return [_rand(shape, dtype, seed), _rand((c,), dtype, seed + 1), _rand((c,), dtype, seed + 2),
            _rand((c,), dtype, seed + 3), np.abs(_rand((c,), dtype, seed + 4)) + 0.5]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(4, 3, 5, 6), (6, 3)])
def test_batch_norm_in_eval_mode(dtype, shape):
    assert_all_native(run_both(BATCH_NORM.format(train=0), _bn_inputs(shape, dtype), rtol=1e-4))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(4, 3, 5, 6), (6, 3)])
def test_batch_norm_in_training_updates_the_running_statistics_like_the_interpreter(dtype, shape):
    """Each run gets its own copies: the running statistics are updated in place."""
    text = BATCH_NORM.format(train=1)
    expected_inputs = [Tensor(a) for a in _bn_inputs(shape, dtype)]
    expected = Interpreter(parse_ir(text)).run(expected_inputs)
    runner = NativeRunner(parse_ir(text))
    with no_grad():
        runner.run([Tensor(a) for a in _bn_inputs(shape, dtype)])  # the profiling run
        got_inputs = [Tensor(a) for a in _bn_inputs(shape, dtype)]
        got = runner.run(got_inputs)
    np.testing.assert_allclose(got[0].data, expected[0].data, rtol=1e-4, atol=1e-4)
    for k in (3, 4):  # running_mean, running_var
        np.testing.assert_allclose(got_inputs[k].data, expected_inputs[k].data, rtol=1e-5, atol=1e-6)
        assert not np.allclose(got_inputs[k].data, _bn_inputs(shape, dtype)[k])
    # the two in-place copies into the running statistics stay interpreted
    assert runner.stats.nodes_interpreted == 2 and runner.stats.bailouts == 0


NATIVE_BATCH_NORM = """graph(%x : Tensor, %w : Tensor, %b : Tensor):
  %none : NoneType = prim::Constant()
  %t : bool = prim::Constant[value=1]()
  %m : float = prim::Constant[value=0.]()
  %e : float = prim::Constant[value=1e-05]()
  %y : Tensor, %mean : Tensor, %invstd : Tensor = aten::native_batch_norm(%x, %w, %b, %none, %none, %t, %m, %e)
  return (%y, %mean, %invstd)"""

BATCH_NORM_BACKWARD = """graph(%g : Tensor, %x : Tensor, %w : Tensor, %rm : Tensor, %rv : Tensor, %sm : Tensor, %si : Tensor):
  %train : bool = prim::Constant[value={train}]()
  %t : bool = prim::Constant[value=1]()
  %f : bool = prim::Constant[value=0]()
  %e : float = prim::Constant[value=1e-05]()
  %mask : bool[] = prim::ListConstruct(%t, {mask})
  %a : Tensor, %b : Tensor, %c : Tensor = aten::native_batch_norm_backward(%g, %x, %w, %rm, %rv, %sm, %si, %train, %e, %mask)
  return ({outs})"""


def test_native_batch_norm_returns_the_saved_statistics():
    assert_all_native(run_both(NATIVE_BATCH_NORM, _bn_inputs((4, 3, 5, 6), np.float64)[:3]))


@pytest.mark.parametrize("train", [0, 1])
@pytest.mark.parametrize("mask, outs", [("%t, %t", "%a, %b, %c"), ("%f, %f", "%a")])
def test_native_batch_norm_backward(train, mask, outs):
    text = BATCH_NORM_BACKWARD.format(train=train, mask=mask, outs=outs)
    x, w, _, rm, rv = _bn_inputs((4, 3, 5, 6), np.float64)
    args = [_rand(x.shape, np.float64, 9), x, w, rm, rv, _rand((3,), np.float64, 10),
            np.abs(_rand((3,), np.float64, 11)) + 0.5]
    assert_all_native(run_both(text, args, rtol=1e-8))


LAYER_NORM = """graph(%x : Tensor, %w : Tensor, %b : Tensor, %g : Tensor):
  %s : int[] = prim::Constant[value={shape}]()
  %e : float = prim::Constant[value=1e-05]()
  %t : bool = prim::Constant[value=1]()
  %y : Tensor = aten::layer_norm(%x, %s, %w, %b, %e, %t)
  %a : Tensor, %mean : Tensor, %rstd : Tensor = aten::native_layer_norm(%x, %s, %w, %b, %e)
  %mask : bool[] = prim::ListConstruct(%t, %t, %t)
  %gi : Tensor, %gw : Tensor, %gb : Tensor = aten::native_layer_norm_backward(%g, %x, %s, %mean, %rstd, %w, %b, %mask)
  return (%y, %a, %mean, %rstd, %gi, %gw, %gb)"""


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape, normalized", [((2, 4, 5, 6), [5, 6]), ((3, 7), [7])])
def test_layer_norm_and_its_backward(dtype, shape, normalized):
    text = LAYER_NORM.format(shape=normalized)
    w = _rand(normalized, dtype, 1)
    args = [_rand(shape, dtype), w, _rand(normalized, dtype, 2), _rand(shape, dtype, 3)]
    assert_all_native(run_both(text, args, rtol=1e-4))


def test_layer_norm_of_a_non_contiguous_input():
    text = LAYER_NORM.format(shape=[5])
    x = _rand((3, 10))[:, ::2]
    args = [x, _rand((5,), seed=1), _rand((5,), seed=2), _rand((3, 5), seed=3)]
    assert_all_native(run_both(text, args, rtol=1e-4))


@pytest.mark.parametrize("affine", [True, False])
def test_group_norm(affine):
    text = f"""graph(%x : Tensor, %w : Tensor, %b : Tensor):
  %none : NoneType = prim::Constant()
  %e : float = prim::Constant[value=1e-05]()
  %t : bool = prim::Constant[value=1]()
  %g : int = prim::Constant[value=2]()
  %y : Tensor = aten::group_norm(%x, %g, {"%w, %b" if affine else "%none, %none"}, %e, %t)
  return (%y)"""
    runner = run_both(text, [_rand((2, 4, 5, 6)), _rand((4,), seed=1), _rand((4,), seed=2)], rtol=1e-4)
    assert_all_native(runner)  # without affine, the reshape back is a view output of a unit


# ---- convolutions

CONV1D = """graph(%x : Tensor, %w : Tensor, %b : Tensor):
  %s : int[] = prim::Constant[value=[{s}]]()
  %p : int[] = prim::Constant[value=[{p}]]()
  %d : int[] = prim::Constant[value=[{d}]]()
  %g : int = prim::Constant[value={groups}]()
  %y : Tensor = aten::conv1d(%x, %w, %b, %s, %p, %d, %g)
  %z : Tensor = aten::tanh(%y)
  return (%z)"""


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("s, p, d, groups", [(1, 0, 1, 1), (2, 1, 1, 1), (1, 2, 2, 2)])
def test_conv1d(dtype, s, p, d, groups):
    text = CONV1D.format(s=s, p=p, d=d, groups=groups)
    args = [_rand((2, 4, 11), dtype), _rand((6, 4 // groups, 3), dtype, 1), _rand((6,), dtype, 2)]
    assert_all_native(run_both(text, args, rtol=1e-4))


def test_conv1d_of_a_batch_of_one_is_the_groups_output():
    """The product's (1, O, 1, L) result reshaped to (1, O, L) is the output buffer itself."""
    text = CONV1D.format(s=1, p=1, d=1, groups=1).replace(
        "  %z : Tensor = aten::tanh(%y)\n  return (%z)", "  return (%y)")
    args = [_rand((1, 4, 9)), _rand((6, 4, 3), seed=1), _rand((6,), seed=2)]
    assert_all_native(run_both(text, args, rtol=1e-4))


@pytest.mark.parametrize("rank", [3, 4])
def test_traced_convolution(rank):
    ones = ", ".join(["1"] * (rank - 2))
    zeros = ", ".join(["0"] * (rank - 2))
    text = f"""graph(%x : Tensor, %w : Tensor, %b : Tensor):
  %s : int[] = prim::Constant[value=[{ones}]]()
  %p : int[] = prim::Constant[value=[{ones}]]()
  %d : int[] = prim::Constant[value=[{ones}]]()
  %op : int[] = prim::Constant[value=[{zeros}]]()
  %f : bool = prim::Constant[value=0]()
  %t : bool = prim::Constant[value=1]()
  %g : int = prim::Constant[value=1]()
  %y : Tensor = aten::_convolution(%x, %w, %b, %s, %p, %d, %f, %op, %g, %f, %f, %t, %t)
  return (%y)"""
    spatial = (7,) * (rank - 2)
    args = [_rand((2, 3) + spatial), _rand((4, 3) + (3,) * (rank - 2), seed=1), _rand((4,), seed=2)]
    assert_all_native(run_both(text, args, rtol=1e-4))


def test_traced_transposed_convolution():
    text = """graph(%x : Tensor, %w : Tensor):
  %none : NoneType = prim::Constant()
  %s : int[] = prim::Constant[value=[2, 2]]()
  %p : int[] = prim::Constant[value=[1, 1]]()
  %op : int[] = prim::Constant[value=[1, 1]]()
  %d : int[] = prim::Constant[value=[1, 1]]()
  %t : bool = prim::Constant[value=1]()
  %f : bool = prim::Constant[value=0]()
  %g : int = prim::Constant[value=1]()
  %y : Tensor = aten::_convolution(%x, %w, %none, %s, %p, %d, %t, %op, %g, %f, %f, %t, %t)
  return (%y)"""
    assert_all_native(run_both(text, [_rand((1, 2, 4, 4)), _rand((2, 3, 3, 3), seed=1)], rtol=1e-4))


CONV_TRANSPOSE = """graph(%x : Tensor, %w : Tensor, %b : Tensor):
  %s : int[] = prim::Constant[value=[{s}, {s}]]()
  %p : int[] = prim::Constant[value=[{p}, {p}]]()
  %op : int[] = prim::Constant[value=[{op}, {op}]]()
  %d : int[] = prim::Constant[value=[{d}, {d}]]()
  %g : int = prim::Constant[value={groups}]()
  %y : Tensor = aten::conv_transpose2d(%x, %w, %b, %s, %p, %op, %g, %d)
  %z : Tensor = aten::sigmoid(%y)
  return (%z)"""


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("s, p, op, d, groups", [(1, 0, 0, 1, 1), (2, 1, 1, 1, 1), (2, 1, 0, 1, 2),
                                                  (1, 1, 0, 2, 1), (1, 0, 0, 1, 4)])
def test_conv_transpose2d(dtype, s, p, op, d, groups):
    text = CONV_TRANSPOSE.format(s=s, p=p, op=op, d=d, groups=groups)
    args = [_rand((2, 4, 5, 5), dtype), _rand((4, 8 // groups, 3, 3), dtype, 1), _rand((8,), dtype, 2)]
    assert_all_native(run_both(text, args, rtol=1e-4))


# ---- (values, indices) reductions

def test_max_and_min_over_a_dim_with_nan_and_ties():
    text = """graph(%x : Tensor):
  %d : int = prim::Constant[value=1]()
  %k : bool = prim::Constant[value=1]()
  %f : bool = prim::Constant[value=0]()
  %a : Tensor, %b : Tensor = aten::max(%x, %d, %f)
  %c : Tensor, %e : Tensor = aten::min(%x, %d, %k)
  return (%a, %b, %c, %e)"""
    x = np.array([[1.0, 3.0, 3.0, -2.0], [np.nan, 0.0, np.nan, 5.0], [2.0, 2.0, 2.0, 2.0]], np.float32)
    runner = run_both(text, [x])
    assert_all_native(runner)


def test_a_bool_input_is_folded_per_value_so_the_backward_of_batch_norm_decomposes():
    """Backward graphs receive batch norm's `training` as an input: each value gets its own plan."""
    text = """graph(%g : Tensor, %x : Tensor, %w : Tensor, %sm : Tensor, %si : Tensor, %train : bool):
  %t : bool = prim::Constant[value=1]()
  %e : float = prim::Constant[value=1e-05]()
  %mask : bool[] = prim::ListConstruct(%t, %t, %t)
  %a : Tensor, %b : Tensor, %c : Tensor = aten::native_batch_norm_backward(%g, %x, %w, %sm, %si, %sm, %si, %train, %e, %mask)
  return (%a, %b, %c)"""
    x, w, _, mean, var = _bn_inputs((4, 3, 5, 6), np.float64)
    arrays = [_rand(x.shape, np.float64, 9), x, w, mean, var]
    runner = NativeRunner(parse_ir(text))
    for train in (True, False):
        args = [Tensor(a) for a in arrays] + [train]
        expected = Interpreter(parse_ir(text)).run(args)
        with no_grad():
            for _ in range(2):
                got = runner.run(args)
        for e, g in zip(expected, got):
            np.testing.assert_allclose(g.data, e.data, rtol=1e-8, atol=1e-8)
    assert runner.stats.units == 2 and runner.stats.nodes_interpreted == 0 and runner.stats.bailouts == 0
