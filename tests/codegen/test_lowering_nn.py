"""Pooling and lookups at run-time indices run natively with the interpreter's results (float32
and float64, padding, stride, dilation, ceil_mode, non-contiguous inputs), and an index out of
range bails out so that the interpreter raises PyTorch's error."""

from __future__ import annotations

import numpy as np
import pytest

from irjit.compiler import parse_ir
from irjit.ops.errors import IRRuntimeError
from irjit.ops.tensor import Tensor
from irjit.runtime import no_grad
from irjit.runtime.interpreter import Interpreter
from irjit.runtime.native import NativeRunner


def run_both(text: str, inputs: list, rtol: float = 1e-5) -> NativeRunner:
    """Run `text` interpreted and natively (after its profiling call), compare, and return the
    runner, whose stats say what ran natively."""
    xs = [Tensor(x) for x in inputs]
    expected = Interpreter(parse_ir(text)).run(xs)
    runner = NativeRunner(parse_ir(text))
    with no_grad():
        for _ in range(2):
            got = runner.run(xs)
    for e, g in zip(expected, got):
        assert g.data.shape == e.data.shape and g.data.dtype == e.data.dtype
        np.testing.assert_allclose(g.data, e.data, rtol=rtol, atol=rtol)
    return runner


def assert_all_native(runner: NativeRunner) -> None:
    assert runner.stats.bailouts == 0
    assert runner.stats.nodes_interpreted == 0 and runner.stats.nodes_native > 0


def _rand(shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


POOL = """graph(%x : Tensor):
  %k : int[] = prim::Constant[value={k}]()
  %s : int[] = prim::Constant[value={s}]()
  %p : int[] = prim::Constant[value={p}]()
  %d : int[] = prim::Constant[value={d}]()
  %c : bool = prim::Constant[value={ceil}]()
  %y : Tensor = aten::max_pool2d(%x, %k, %s, %p, %d, %c)
  return (%y)"""

AVG = """graph(%x : Tensor):
  %k : int[] = prim::Constant[value={k}]()
  %s : int[] = prim::Constant[value={s}]()
  %p : int[] = prim::Constant[value={p}]()
  %c : bool = prim::Constant[value={ceil}]()
  %i : bool = prim::Constant[value={include}]()
  %o : int? = prim::Constant[{divisor}]()
  %y : Tensor = aten::avg_pool2d(%x, %k, %s, %p, %c, %i, %o)
  return (%y)"""

GEOMETRIES = [  # kernel, stride, padding, dilation, ceil_mode
    ([2, 2], [2, 2], [0, 0], [1, 1], 0),
    ([3, 3], [2, 2], [1, 1], [1, 1], 1),
    ([3, 2], [1, 2], [1, 0], [2, 1], 0),
    ([2, 3], [3, 2], [0, 1], [1, 1], 1),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("k, s, p, d, ceil", GEOMETRIES)
def test_max_pool2d(dtype, k, s, p, d, ceil):
    text = POOL.format(k=k, s=s, p=p, d=d, ceil=ceil)
    assert_all_native(run_both(text, [_rand((2, 3, 9, 8), dtype)]))


def test_max_pool2d_of_integers_and_of_negative_infinity():
    text = POOL.format(k=[3, 3], s=[2, 2], p=[1, 1], d=[1, 1], ceil=1)
    ints = np.random.default_rng(1).integers(-50, 50, (1, 2, 7, 7))
    assert_all_native(run_both(text, [ints]))
    x = _rand((1, 2, 7, 7))
    x[0, 0, :3, :3] = -np.inf
    x[0, 1, 4, 4] = np.nan
    assert_all_native(run_both(text, [x]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("k, s, p, ceil, include, divisor", [
    ([3, 3], [2, 2], [1, 1], 1, 1, ""),
    ([3, 3], [2, 2], [1, 1], 1, 0, ""),
    ([2, 3], [1, 2], [0, 1], 0, 0, ""),
    ([2, 2], [2, 2], [1, 1], 0, 1, "value=3"),
])
def test_avg_pool2d(dtype, k, s, p, ceil, include, divisor):
    text = AVG.format(k=k, s=s, p=p, ceil=ceil, include=include, divisor=divisor)
    assert_all_native(run_both(text, [_rand((2, 3, 7, 8), dtype)]))


def test_pooling_reads_a_non_contiguous_input_in_place():
    text = """graph(%x : Tensor):
  %k : int[] = prim::Constant[value=[2, 2]]()
  %p : int[] = prim::Constant[value=[1, 1]]()
  %d : int[] = prim::Constant[value=[1, 1]]()
  %f : bool = prim::Constant[value=0]()
  %a : int = prim::Constant[value=2]()
  %b : int = prim::Constant[value=3]()
  %t : Tensor = aten::transpose(%x, %a, %b)
  %y : Tensor = aten::max_pool2d(%t, %k, %k, %p, %d, %f)
  return (%y)"""
    x = _rand((2, 3, 10, 7))[:, :, ::2, :]
    assert not x.flags.c_contiguous
    assert_all_native(run_both(text, [x]))


@pytest.mark.parametrize("out", [[1, 1], [2, 3], [3, 5]])
def test_adaptive_avg_pool2d(out):
    text = f"""graph(%x : Tensor):
  %o : int[] = prim::Constant[value={out}]()
  %y : Tensor = aten::adaptive_avg_pool2d(%x, %o)
  return (%y)"""
    assert_all_native(run_both(text, [_rand((2, 3, 7, 5))]))


@pytest.mark.parametrize("shape, out", [((2, 3, 32, 32), [1, 1]), ((3, 20, 18), [1, 1]),
                                        ((2, 3, 24, 36), [2, 3]), ((2, 2, 18, 27), [1, 3])])
def test_adaptive_avg_pool2d_of_large_even_windows_is_a_mean(shape, out):
    """Windows too large to unroll that tile the input (a global average pool among them)."""
    text = f"""graph(%x : Tensor):
  %o : int[] = prim::Constant[value={out}]()
  %r : Tensor = aten::relu(%x)
  %y : Tensor = aten::adaptive_avg_pool2d(%r, %o)
  %z : Tensor = aten::adaptive_avg_pool2d(%x, %o)
  return (%y, %z)"""
    assert_all_native(run_both(text, [_rand(shape)]))


def test_pool1d():
    text = """graph(%x : Tensor):
  %k : int[] = prim::Constant[value=[3]]()
  %s : int[] = prim::Constant[value=[2]]()
  %p : int[] = prim::Constant[value=[1]]()
  %d : int[] = prim::Constant[value=[1]]()
  %t : bool = prim::Constant[value=1]()
  %f : bool = prim::Constant[value=0]()
  %a : Tensor = aten::avg_pool1d(%x, %k, %s, %p, %t, %f)
  %m : Tensor = aten::max_pool1d(%x, %k, %s, %p, %d, %t)
  return (%a, %m)"""
    assert_all_native(run_both(text, [_rand((2, 3, 10))]))


@pytest.mark.parametrize("k, s, p, d, ceil", GEOMETRIES)
def test_max_pool2d_backward_scatters_by_indices(k, s, p, d, ceil):
    text = POOL.format(k=k, s=s, p=p, d=d, ceil=ceil).replace(
        "%y : Tensor = aten::max_pool2d(%x, %k, %s, %p, %d, %c)\n  return (%y)",
        "%y : Tensor, %i : Tensor = aten::max_pool2d_with_indices(%x, %k, %s, %p, %d, %c)\n"
        "  %g : Tensor = aten::max_pool2d_with_indices_backward(%y, %x, %k, %s, %p, %d, %c, %i)\n"
        "  return (%g)")
    runner = run_both(text, [_rand((2, 3, 9, 8), np.float64)])
    assert_all_native(runner)


# ---- lookups at run-time indices

EMBEDDING = """graph(%w : Tensor, %i : Tensor):
  %p : int = prim::Constant[value=-1]()
  %f : bool = prim::Constant[value=0]()
  %y : Tensor = aten::embedding(%w, %i, %p, %f, %f)
  %z : Tensor = aten::mul(%y, %y)
  return (%z)"""

INDEX_SELECT = """graph(%x : Tensor, %i : Tensor):
  %d : int = prim::Constant[value=1]()
  %y : Tensor = aten::index_select(%x, %d, %i)
  return (%y)"""

GATHER = """graph(%x : Tensor, %i : Tensor):
  %d : int = prim::Constant[value=0]()
  %f : bool = prim::Constant[value=0]()
  %y : Tensor = aten::gather(%x, %d, %i, %f)
  return (%y)"""


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_embedding(dtype):
    idx = np.array([[0, 4, 2], [4, 4, 1]])
    assert_all_native(run_both(EMBEDDING, [_rand((5, 3), dtype), idx]))


def test_index_select_of_a_non_contiguous_input():
    x = _rand((4, 12))[:, ::2]
    assert_all_native(run_both(INDEX_SELECT, [x, np.array([5, 0, 0, 3])]))


def test_gather():
    idx = np.array([[0, 3, 1], [2, 2, 0]])
    assert_all_native(run_both(GATHER, [_rand((4, 5)), idx]))


@pytest.mark.parametrize("text, x, good, bad, error", [
    (EMBEDDING, (5, 3), [[0, 4, 2]], [[0, 5, 2]], "index out of range in self"),
    (EMBEDDING, (5, 3), [[0, 4, 2]], [[0, -1, 2]], "index out of range in self"),
    (INDEX_SELECT, (4, 6), [5, 0], [6, 0], "index out of range in self"),
    (INDEX_SELECT, (4, 6), [5, 0], [-1, 0], "index out of range in self"),
    (GATHER, (4, 5), [[0, 3]], [[0, 4]], "index 4 is out of bounds for dimension 0 with size 4"),
    (GATHER, (4, 5), [[0, 3]], [[-2, 3]], "index -2 is out of bounds for dimension 0 with size 4"),
])
@pytest.mark.parametrize("checks", ["0", "1"])
def test_an_index_out_of_range_bails_out_to_the_interpreters_error(monkeypatch, text, x, good, bad,
                                                                   error, checks):
    monkeypatch.setenv("IRJIT_NATIVE_CHECKS", checks)
    runner = run_both(text, [_rand(x), np.array(good)])
    assert_all_native(runner)
    with no_grad(), pytest.raises(IRRuntimeError, match=error):
        runner.run([Tensor(_rand(x)), Tensor(np.array(bad))])
    assert runner.stats.bailouts == 1


@pytest.mark.parametrize("padding_idx", [-1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_embedding_backward_sums_the_gradients_of_each_row(padding_idx, dtype):
    text = f"""graph(%g : Tensor, %i : Tensor):
  %n : int = prim::Constant[value=6]()
  %p : int = prim::Constant[value={padding_idx}]()
  %f : bool = prim::Constant[value=0]()
  %y : Tensor = aten::embedding_dense_backward(%g, %i, %n, %p, %f)
  return (%y)"""
    idx = np.array([[0, 2, 2], [5, 2, 0]])
    assert_all_native(run_both(text, [_rand((2, 3, 4), dtype), idx]))


SCATTER_ADD = """graph(%x : Tensor, %i : Tensor, %s : Tensor):
  %d : int = prim::Constant[value={dim}]()
  %f : bool = prim::Constant[value=0]()
  %y : Tensor = aten::scatter_add(%x, %d, %i, %s)
  %g : Tensor = aten::gather_backward(%s, %x, %d, %i, %f)
  return (%y, %g)"""


@pytest.mark.parametrize("dim", [0, 1])
def test_scatter_add_and_gather_backward(dim):
    idx = np.array([[0, 3, 1], [3, 3, 0]]) if dim == 0 else np.array([[0, 4, 4], [1, 1, 0]])
    args = [_rand((4, 5)), idx, _rand((3, 4), seed=1)]
    assert_all_native(run_both(SCATTER_ADD.format(dim=dim), args))


def test_scatter_add_index_out_of_range_bails_out():
    runner = run_both(SCATTER_ADD.format(dim=0), [_rand((4, 5)), np.array([[0, 3]]), _rand((2, 3))])
    with no_grad(), pytest.raises(IRRuntimeError, match="index 4 is out of bounds"):
        runner.run([Tensor(_rand((4, 5))), Tensor(np.array([[0, 4]])), Tensor(_rand((2, 3)))])
    assert runner.stats.bailouts == 1


@pytest.mark.parametrize("k, s, p, d, ceil", GEOMETRIES)
def test_max_pool2d_with_indices(k, s, p, d, ceil):
    text = POOL.format(k=k, s=s, p=p, d=d, ceil=ceil).replace(
        "%y : Tensor = aten::max_pool2d(%x, %k, %s, %p, %d, %c)\n  return (%y)",
        "%y : Tensor, %i : Tensor = aten::max_pool2d_with_indices(%x, %k, %s, %p, %d, %c)\n"
        "  return (%y, %i)")
    x = _rand((2, 3, 9, 8))
    x[0, 0, 2:4, 2:4] = 1.5  # ties: the first occurrence
    x[1, 2, 5, 5] = np.nan
    assert_all_native(run_both(text, [x]))


@pytest.mark.parametrize("out", [[1, 1], [2, 3], [3, 5]])
def test_adaptive_max_pool2d(out):
    text = f"""graph(%x : Tensor):
  %o : int[] = prim::Constant[value={out}]()
  %y : Tensor, %i : Tensor = aten::adaptive_max_pool2d(%x, %o)
  return (%y, %i)"""
    x = _rand((2, 3, 7, 5))
    x[0, 1, :3, :3] = 2.0
    assert_all_native(run_both(text, [x]))
