"""Straight plans: a specialized graph of native groups and constants runs as unit calls with
the interpreter's results; intermediates come from an arena reused across calls, which never
hands out an array a caller still holds, and a unit that refuses a layout is interpreted."""

from __future__ import annotations

import numpy as np
import pytest

import irjit
from irjit.compiler import parse_ir
from irjit.ops.tensor import Tensor
from irjit.runtime import no_grad
from irjit.runtime.autograd import backward
from irjit.runtime import native
from irjit.runtime.interpreter import Interpreter
from irjit.runtime.module import Module
from irjit.runtime.native import NativeRunner
from irjit.runtime.native_plan import StraightPlan

from .native_coverage import measured

# two groups (a product then its tanh, twice): the first one's output is an intermediate
TWO_GROUPS = """graph(%x : Tensor, %w : Tensor, %v : Tensor):
  %a : Tensor = aten::mm(%x, %w)
  %b : Tensor = aten::tanh(%a)
  %c : Tensor = aten::mm(%b, %v)
  %d : Tensor = aten::tanh(%c)
  return (%d)"""
MM_SHAPES = ((3, 4), (4, 5), (5, 2))

# one group: the plan is one unit call
CHAIN = """graph(%x : Tensor, %a : Tensor):
  %one : int = prim::Constant[value=1]()
  %m : Tensor = aten::mul(%x, %a)
  %s : Tensor = aten::add(%m, %a, %one)
  %r : Tensor = aten::tanh(%s)
  return (%r)"""


# a native condition choosing a native branch or an interpreted one (a loop)
BRANCHES = """graph(%x : Tensor, %n : int):
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %c : bool = aten::gt(%n, %zero)
  %r : Tensor = prim::If(%c)
    block0():
      %a : Tensor = aten::mul(%x, %x)
      %b : Tensor = aten::tanh(%a)
      -> (%b)
    block1():
      %t : bool = prim::Constant[value=1]()
      %y : Tensor = prim::Loop(%n, %t, %x)
        block0(%i : int, %acc : Tensor):
          %s : Tensor = aten::add(%acc, %x, %one)
          -> (%t, %s)
      -> (%y)
  return (%r)"""


def _inputs(seed: int, shapes=((3, 4), (3, 4), (4, 4), (4,))) -> list[Tensor]:
    rng = np.random.default_rng(seed)
    return [Tensor(rng.standard_normal(s).astype(np.float32)) for s in shapes]


def _plan(runner: NativeRunner):
    return runner._plans[next(iter(runner._plans))]


def _interpreted(text: str, xs: list) -> list:
    return Interpreter(parse_ir(text)).run(xs)


def _close(got, want) -> None:
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.data, w.data, rtol=1e-5, atol=1e-6)


def test_a_graph_of_groups_runs_as_a_straight_plan_with_the_interpreters_results():
    runner = NativeRunner(parse_ir(TWO_GROUPS))
    with no_grad():
        for seed in range(3):
            xs = _inputs(seed, MM_SHAPES)
            _close(runner.run(xs), _interpreted(TWO_GROUPS, xs))
    plan = _plan(runner)
    assert isinstance(plan, StraightPlan) and runner.stats.units == 2
    assert runner.stats.bailouts == 0


def test_a_branch_runs_its_native_steps_or_the_interpreter_as_the_condition_says():
    runner = NativeRunner(parse_ir(BRANCHES))
    x = _inputs(0, ((3, 4),))[0]
    with no_grad():
        for n in (2, 3, -1, 0, 5):
            _close(runner.run([x, n]), _interpreted(BRANCHES, [x, n]))
    assert isinstance(_plan(runner), StraightPlan) and len(runner._plans) == 1
    assert runner.stats.units == 2 and runner.stats.bailouts == 0


def test_outputs_the_caller_keeps_are_not_overwritten_by_later_calls():
    runner = NativeRunner(parse_ir(TWO_GROUPS))
    kept = []
    with no_grad():
        for seed in range(4):
            kept.append(runner.run(_inputs(seed, MM_SHAPES)))
    plan = _plan(runner)
    assert len(plan._arenas) == 1 and plan._steps[0].arena_positions  # the intermediate's array
    for seed, outs in enumerate(kept):
        _close(outs, _interpreted(TWO_GROUPS, _inputs(seed, MM_SHAPES)))
    for i, earlier in enumerate(kept):  # no call's output shares memory with a later one's
        for later in kept[i + 1:]:
            assert not any(np.shares_memory(a.data, b.data) for a in earlier for b in later)


def test_one_group_is_one_native_call_per_run(monkeypatch):
    runner = NativeRunner(parse_ir(CHAIN))
    xs = _inputs(0, ((5, 6), (5, 6)))
    with no_grad():
        runner.run(xs)
        runner.run(xs)
        unit = _plan(runner)._steps[0].unit
        calls = []
        entry = unit._fn
        monkeypatch.setattr(unit, "_fn", lambda *args: calls.append(args) or entry(*args))
        got = runner.run(xs)
    assert len(calls) == 1 and calls[0][0] is xs[0].data  # the caller's arrays, as objects
    _close(got, _interpreted(CHAIN, xs))


def test_a_changed_layout_bails_out_to_the_interpreter_and_the_plan_stays_correct():
    runner = NativeRunner(parse_ir(TWO_GROUPS), max_specializations=1)
    with no_grad():
        runner.run(_inputs(0, MM_SHAPES))
        runner.run(_inputs(0, MM_SHAPES))
        plan = _plan(runner)
        x, w, v = _inputs(1, MM_SHAPES)
        column_major = [Tensor(np.asfortranarray(x.data)), w, v]
        got = plan.run(column_major)  # the plan for contiguous inputs
        assert runner.stats.bailouts == 1
        _close(got, _interpreted(TWO_GROUPS, column_major))
        again = plan.run(_inputs(2, MM_SHAPES))
        _close(again, _interpreted(TWO_GROUPS, _inputs(2, MM_SHAPES)))
        _close(got, _interpreted(TWO_GROUPS, column_major))  # still intact


def test_tensors_saved_for_backward_stay_intact_across_later_calls():
    fn = irjit.load(TWO_GROUPS, executor="profiling", backend="native")
    calls = []
    for seed in range(5):
        xs = [Tensor(t.data, requires_grad=True) for t in _inputs(seed, MM_SHAPES)]
        calls.append((xs, fn.run(*xs)[0]))
    for xs, out in calls[2:]:  # after the profiled calls: native plans ran them
        backward([out])
        ref = [Tensor(t.data.copy(), requires_grad=True) for t in xs]
        backward([irjit.load(TWO_GROUPS).run(*ref)[0]])
        for got, want in zip(xs, ref):
            np.testing.assert_allclose(got.grad, want.grad, rtol=1e-5, atol=1e-6)


# a module's graph: parameters and a head count read off `%self`, the head count sizing a reshape
HEADS = """graph(%self : __torch__.M, %x : Tensor):
  %one : int = prim::Constant[value=1]()
  %minus : int = prim::Constant[value=-1]()
  %none : NoneType = prim::Constant()
  %lin : __torch__.Lin = prim::GetAttr[name="lin"](%self)
  %w : Tensor = prim::GetAttr[name="weight"](%lin)
  %b : Tensor = prim::GetAttr[name="bias"](%lin)
  %heads : int = prim::GetAttr[name="heads"](%self)
  %y : Tensor = aten::linear(%x, %w, %b)
  %sizes : int[] = prim::ListConstruct(%minus, %heads)
  %r : Tensor = aten::reshape(%y, %sizes)
  %s : Tensor = aten::softmax(%r, %one, %none)
  %t : Tensor = aten::tanh(%s)
  return (%t)"""


def _module(seed: int, heads: int, shape=(6, 4)) -> Module:
    m = Module("__torch__.M")
    w, b = _inputs(seed, (shape, shape[:1]))
    lin = m.submodule("lin", "__torch__.Lin")
    lin.set("weight", w)
    lin.set("bias", b)
    m.set("heads", heads)
    return m


def test_a_module_graph_runs_as_one_straight_program_that_reads_and_checks_its_attributes(monkeypatch):
    """The attribute reads are steps of the plan's program (its latest plan runs without the
    runner's key), the int attribute folds (the reshape by it joins a unit): nothing is
    interpreted; a parameter replaced by another of its layout is read by the next call, one
    of another layout, or another head count, makes another plan."""
    runner = NativeRunner(parse_ir(HEADS))
    x = _inputs(0, ((5, 4),))[0]
    m = _module(1, 2)
    with no_grad():
        runner.run([m, x])
        with measured(monkeypatch) as cov:
            got = runner.run([m, x])
        monkeypatch.undo()
        _close(got, _interpreted(HEADS, [m, x]))
        assert dict(cov.interpreted) == {} and cov.native["aten::reshape"] == 1
        plan = _plan(runner)
        assert isinstance(plan, StraightPlan) and runner._last is plan
        assert "aten::reshape" not in {n.kind for n in plan.graph.nodes()}
        # (the latest plan's program checks the inputs and attributes: no key is computed)
        monkeypatch.setattr(native, "_layout_key", lambda *a: pytest.fail("keyed"))
        for seed in (2, 3):  # same layouts, new values: the program reads them
            m.get("lin").set("weight", _inputs(seed, ((6, 4),))[0])
            m.get("lin").set("bias", _inputs(seed + 9, ((6,),))[0])
            _close(runner.run([m, x]), _interpreted(HEADS, [m, x]))
        monkeypatch.undo()
        for other in (_module(4, 3), _module(5, 2, (12, 4)), _module(6, 3)):
            _close(runner.run([other, x]), _interpreted(HEADS, [other, x]))
            _close(runner.run([other, x]), _interpreted(HEADS, [other, x]))
        _close(runner.run([m, x]), _interpreted(HEADS, [m, x]))
    assert len(runner._plans) == 3 and runner.stats.bailouts == 0


def test_parameters_that_require_grad_take_the_programs_body_under_grad():
    """A parameter read off the module that requires grad gets its gradient, as the
    interpreter's tape gives it, though no graph input requires grad."""
    runner = NativeRunner(parse_ir(HEADS))
    x = _inputs(0, ((5, 4),))[0]
    for seed in range(4):
        got, want = _module(seed, 2), _module(seed, 2)
        for m in (got, want):
            for name in ("weight", "bias"):
                m.get("lin").get(name).requires_grad = True
        backward([runner.run([got, x])[0]])
        backward([Interpreter(parse_ir(HEADS)).run([want, x])[0]])
        for name in ("weight", "bias"):
            np.testing.assert_allclose(got.get("lin").get(name).grad, want.get("lin").get(name).grad,
                                       rtol=1e-5, atol=1e-6)
    assert isinstance(_plan(runner), StraightPlan) and runner._last is _plan(runner)
