"""Kernel emission (emit.py): reductions over a matrix's rows (a bias gradient's sum over the
batch) run with the kept, contiguous axis innermost, a row of accumulators per reduction;
nested ones (a variance after its mean) in order; results equal numpy's, bit-identical on
several threads and with bounds checks; reductions along the contiguous axis keep the usual
order."""

from __future__ import annotations

import numpy as np
import pytest

from irjit.compiler.codegen import emit, threads
from irjit.compiler.codegen.unit import NativeUnit

from . import typed_graph

SUM0 = """graph(%x : Tensor):
  %dims : int[] = prim::Constant[value={dims}]()
  %false : bool = prim::Constant[value=0]()
  %none : NoneType = prim::Constant()
  %s : Tensor = aten::sum(%x, %dims, %false, %none)
  %m : Tensor = aten::amax(%x, %dims, %false)
  return (%s, %m)"""

VAR0 = """graph(%x : Tensor):
  %dims : int[] = prim::Constant[value=[0]]()
  %true : bool = prim::Constant[value=1]()
  %none : NoneType = prim::Constant()
  %one : int = prim::Constant[value=1]()
  %mean : Tensor = aten::mean(%x, %dims, %true, %none)
  %d : Tensor = aten::sub(%x, %mean, %one)
  %sq : Tensor = aten::mul(%d, %d)
  %v : Tensor = aten::sum(%sq, %dims, %true, %none)
  return (%v)"""


def _unit(text, types, name, checks=False):
    unit = NativeUnit(typed_graph(text, types), name, bounds_checks=checks)
    return unit


@pytest.mark.parametrize("shape,dims", [((64, 1024), [0]), ((4, 5, 300), [0, 1]), ((3, 7, 40), [1])])
@pytest.mark.parametrize("checks", [False, True])
def test_sums_over_rows_run_along_the_row(shape, dims, checks):
    types = f"Float({', '.join(map(str, shape))})"
    unit = _unit(SUM0.replace("{dims}", str(dims)), types, f"rows_{len(shape)}_{dims[-1]}_{int(checks)}", checks)
    assert emit.row_reduction(unit.kernel)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    x.reshape(-1)[17] = np.nan
    status, (s, m) = unit.call([x])
    assert status == 0
    np.testing.assert_allclose(s, x.sum(tuple(dims)), rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(m, x.max(tuple(dims)))  # NaN propagates as amax's does


def test_a_variance_reads_its_mean_row():
    unit = _unit(VAR0, "Double(50, 300)", "rows_var")
    assert emit.row_reduction(unit.kernel) and len(emit.reductions_in_order(unit.kernel)) == 2
    x = np.random.default_rng(1).standard_normal((50, 300))
    status, (v,) = unit.call([x])
    assert status == 0
    np.testing.assert_allclose(v, ((x - x.mean(0, keepdims=True)) ** 2).sum(0, keepdims=True), rtol=1e-12)


def test_sums_along_the_contiguous_axis_keep_the_usual_order():
    unit = _unit(SUM0.replace("{dims}", "[1]"), "Float(64, 1024)", "rows_contiguous")
    assert not emit.row_reduction(unit.kernel)


def test_threads_give_the_one_thread_result(monkeypatch):
    text, types = SUM0.replace("{dims}", "[0]"), "Float(300, 4096)"
    x = np.random.default_rng(2).standard_normal((300, 4096)).astype(np.float32)
    monkeypatch.setattr(threads, "thread_count", lambda: 1)
    single = _unit(text, types, "rows_single").call([x])[1]
    monkeypatch.setattr(threads, "thread_count", lambda: 2)
    monkeypatch.setattr(threads, "WORK_THRESHOLD", 0)
    unit = _unit(text, types, "rows_threaded")
    assert threads.planned_threads(unit.kernel)[0] == 2
    multi = unit.call([x])[1]
    assert all(a.tobytes() == b.tobytes() for a, b in zip(single, multi))


SOFTMAX = """graph(%x : Tensor):
  %dim : int = prim::Constant[value={dim}]()
  %none : NoneType = prim::Constant()
  %y : Tensor = aten::{op}(%x, %dim, %none)
  return (%y)"""

# exp over two reduced axes at once: a stack row of 6 * 40 values
EXP_OVER_SUM = """graph(%x : Tensor):
  %dims : int[] = prim::Constant[value=[1, 2]]()
  %true : bool = prim::Constant[value=1]()
  %none : NoneType = prim::Constant()
  %e : Tensor = aten::exp(%x)
  %s : Tensor = aten::sum(%e, %dims, %true, %none)
  %y : Tensor = aten::div(%e, %s)
  return (%y)"""


def _softmax_reference(x, axis):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


@pytest.mark.parametrize("shape,dim", [((64, 1000), 1), ((8, 3, 64), 2), ((5, 300, 4), 1)])
@pytest.mark.parametrize("checks", [False, True])
def test_softmax_computes_its_exponentials_once(shape, dim, checks):
    types = f"Float({', '.join(map(str, shape))})"
    unit = _unit(SOFTMAX.format(dim=dim, op="softmax"), types, f"softmax_{len(shape)}_{dim}_{int(checks)}", checks)
    (stashed,) = emit.stashed_values(unit.kernel)
    assert stashed.name == "math.exp"
    x = np.random.default_rng(3).standard_normal(shape).astype(np.float32) * 4
    status, (y,) = unit.call([x])
    assert status == 0
    np.testing.assert_allclose(y, _softmax_reference(x.astype(np.float64), dim), rtol=2e-6, atol=1e-9)


def test_exponentials_over_two_reduced_axes_are_kept_in_one_row():
    unit = _unit(EXP_OVER_SUM, "Double(7, 6, 40)", "exp_over_sum")
    assert [e.name for e in emit.stashed_values(unit.kernel)] == ["math.exp"]
    x = np.random.default_rng(4).standard_normal((7, 6, 40))
    status, (y,) = unit.call([x])
    assert status == 0
    e = np.exp(x)
    np.testing.assert_allclose(y, e / e.sum((1, 2), keepdims=True), rtol=1e-14)


def test_log_softmax_keeps_nothing():
    """Its exponentials are only summed: nothing after the reduction reads them."""
    unit = _unit(SOFTMAX.format(dim=1, op="log_softmax"), "Float(16, 100)", "log_softmax")
    assert emit.stashed_values(unit.kernel) == []


def test_softmax_on_threads_gives_the_one_thread_result(monkeypatch):
    text, types = SOFTMAX.format(dim=1, op="softmax"), "Float(512, 300)"
    x = np.random.default_rng(5).standard_normal((512, 300)).astype(np.float32)
    monkeypatch.setattr(threads, "thread_count", lambda: 1)
    single = _unit(text, types, "softmax_single").call([x])[1][0]
    monkeypatch.setattr(threads, "thread_count", lambda: 2)
    monkeypatch.setattr(threads, "WORK_THRESHOLD", 0)
    unit = _unit(text, types, "softmax_threaded")
    assert threads.planned_threads(threads.collapse_axes(unit.kernel))[0] == 2
    assert unit.call([x])[1][0].tobytes() == single.tobytes()
