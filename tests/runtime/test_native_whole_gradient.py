"""irjit.compile under grad (runtime/native_whole_gradient.py): a graph whose loops have a few
constant trips is unrolled and differentiated as a whole (one tape node, `f` and `df` each one
native plan); loops that cannot be unrolled completely (run-time trips, break conditions,
bodies past the budget) and graphs autodiff cannot take (in-place writes) keep the per-group
plan. Every case gives the interpreter's outputs and gradients."""

from __future__ import annotations

import numpy as np

import irjit
from irjit.compiler import parse_ir
from irjit.compiler.codegen import cache
from irjit.compiler.codegen.partition import GROUP
from irjit.ops.tensor import Tensor
from irjit.runtime.native import NativeRunner
from irjit.runtime.native_plan import StraightPlan
from irjit.runtime.native_whole_gradient import MAX_UNROLLED_NODES, GradientPlan

RNN = """graph(%x : Tensor, %h0 : Tensor, %W : Tensor, %U : Tensor):
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %n : int = prim::Constant[value={trips}]()
  %true : bool = prim::Constant[value=1]()
  %h : Tensor = prim::Loop(%n, %true, %h0)
    block0(%i : int, %hi : Tensor):
      %xi : Tensor = aten::select(%x, %zero, %i)
      %a : Tensor = aten::matmul(%xi, %W)
      %b : Tensor = aten::matmul(%hi, %U)
      %s : Tensor = aten::add(%a, %b, %one)
      %t : Tensor = aten::tanh(%s)
      -> (%true, %t)
  return (%h)"""
RNN_TYPES = "Float(4, 3, 5), Float(3, 5), Float(5, 5), Float(5, 5)"
RNN_SHAPES = ((4, 3, 5), (3, 5), (5, 5), (5, 5))


def _arrays(shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [(0.5 * rng.standard_normal(s)).astype(np.float32) for s in shapes]


def _check_against_interpreter(text, types, arrays, flags, calls=3):
    """irjit.compile's outputs and gradients equal the interpreter's, call after call, with
    calls without gradients between; returns the compiled Function."""
    ref = irjit.load(text)
    want = ref.run(*arrays, requires_grad=flags)
    want_grads = ref.backward()
    fn = irjit.compile(text, types)
    for _ in range(calls):
        got = fn.run(*arrays, requires_grad=flags)
        grads = fn.backward()
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
        assert sorted(grads) == sorted(want_grads)
        for k in want_grads:
            np.testing.assert_allclose(grads[k], want_grads[k], rtol=1e-4, atol=1e-5)
        for g, w in zip(fn.run(*arrays, requires_grad=False), want):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    return fn


def _plans(fn):
    return {key[-1] if key[-1] is False else key[-2:]: plan
            for key, plan in fn.interpreter._plans.items()}


def test_a_constant_loop_under_grad_is_one_differentiable_graph_and_keeps_its_loop_without():
    fn = _check_against_interpreter(RNN.format(trips=4), RNN_TYPES, _arrays(RNN_SHAPES), True)
    plans = _plans(fn)
    assert set(plans) == {False, (True, (True, True, True, True))}
    assert isinstance(plans[False], StraightPlan)  # (calls without gradients: the loop)
    assert any(n.kind == "prim::Loop" for n in plans[False].graph.walk())
    op = plans[(True, (True, True, True, True))].op
    assert isinstance(plans[(True, (True, True, True, True))], GradientPlan)
    for runner in (op.f, op.df):  # each one straight plan of native groups, no loop
        (plan,) = runner._plans.values()
        assert isinstance(plan, StraightPlan)
        assert not any(n.blocks for n in plan.graph.nodes())
        assert runner.stats.nodes_interpreted == 0
    # x's gradient: one stack of the steps' gradients, no select_backward sums
    kinds = {m.kind for n in plan.graph.nodes() if n.kind == GROUP for m in n.attr("Subgraph").nodes()}
    assert "aten::stack" in kinds and "aten::select_backward" not in kinds


def test_the_trips_share_their_units_whatever_their_count(monkeypatch):
    """The unrolled trips' groups differ only in x[i]'s index, which each group takes as an
    argument: as many units for 8 trips as for 4 (rnn_loop's 16 made 34 units before)."""
    made = []
    make = cache.tensor_unit
    monkeypatch.setattr(cache, "tensor_unit", lambda *a, **k: made.append(1) or make(*a, **k))
    counts = {}
    for trips in (4, 8):
        cache.clear()
        del made[:]
        shapes = ((trips, 3, 5),) + RNN_SHAPES[1:]
        fn = _check_against_interpreter(RNN.format(trips=trips), RNN_TYPES.replace(
            "Float(4, 3, 5)", f"Float({trips}, 3, 5)"), _arrays(shapes), True, calls=2)
        (plan,) = [p for p in fn.interpreter._plans.values() if isinstance(p, GradientPlan)]
        groups = [n for runner in (plan.op.f, plan.op.df) for p in runner._plans.values()
                  for n in p.graph.nodes() if n.kind == GROUP]
        counts[trips] = len(groups), len(made)
    assert counts[8][0] > counts[4][0] > counts[4][1]  # more groups than units
    assert counts[8][1] == counts[4][1] <= 7


def test_one_tape_node_records_the_call():
    runner = NativeRunner(parse_ir(RNN.format(trips=4)), unroll=True)
    args = [Tensor(a, True) for a in _arrays(RNN_SHAPES)]
    for _ in range(3):  # (profiling, then the plan)
        (h,) = runner.run(args)
    node, _ = h.grad_fn
    assert node.label == "prim::DifferentiableGraph"
    assert node.edges == args


def test_each_requires_grad_pattern_gets_its_own_gradient():
    arrays = _arrays(RNN_SHAPES, seed=1)
    text = RNN.format(trips=3)
    for flags in ([False, False, True, False], [True, False, False, True], [False, True, True, True]):
        fn = _check_against_interpreter(text, RNN_TYPES, arrays, flags, calls=2)
        assert (True, tuple(flags)) in _plans(fn)


def test_loops_it_cannot_unroll_completely_keep_the_per_group_plan():
    arrays = _arrays(RNN_SHAPES)
    run_time = RNN.format(trips=4).replace(
        "%n : int = prim::Constant[value=4]()", "%n : int = aten::size(%x, %zero)")
    big = MAX_UNROLLED_NODES // 6 + 1  # (5 nodes and the return a trip: past the budget)
    assert big < 64
    bigger = RNN.format(trips=big)
    big_arrays = _arrays(((big, 3, 5),) + RNN_SHAPES[1:])
    big_types = RNN_TYPES.replace("Float(4, 3, 5)", f"Float({big}, 3, 5)")
    # a break condition: stop once the state's sum is negative
    breaking = RNN.format(trips=4).replace(
        "      -> (%true, %t)",
        "      %z : Tensor = aten::sum(%t, %zero_dtype)\n"
        "      %f : float = aten::FloatImplicit(%z)\n"
        "      %go : bool = aten::gt(%f, %zero_f)\n"
        "      -> (%go, %t)").replace(
        "  %true : bool = prim::Constant[value=1]()",
        "  %true : bool = prim::Constant[value=1]()\n"
        "  %zero_dtype : NoneType = prim::Constant()\n"
        "  %zero_f : float = prim::Constant[value=0.]()")
    for text, types, args in ((run_time, RNN_TYPES, arrays), (bigger, big_types, big_arrays),
                              (breaking, RNN_TYPES, arrays)):
        fn = _check_against_interpreter(text, types, args, True, calls=2)
        assert not any(isinstance(p, GradientPlan) for p in fn.interpreter._plans.values())


def test_a_loop_writing_in_place_is_unrolled_but_not_differentiated_as_a_whole():
    text = """graph(%x : Tensor, %w : Tensor):
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %n : int = prim::Constant[value=3]()
  %true : bool = prim::Constant[value=1]()
  %acc : Tensor = aten::mul(%w, %w)
  %h : Tensor = prim::Loop(%n, %true, %w)
    block0(%i : int, %hi : Tensor):
      %xi : Tensor = aten::select(%x, %zero, %i)
      %m : Tensor = aten::mul(%hi, %xi)
      %u : Tensor = aten::add_(%acc, %m, %one)
      %t : Tensor = aten::tanh(%m)
      -> (%true, %t)
  %r : Tensor = aten::add(%h, %acc, %one)
  return (%r)"""
    fn = _check_against_interpreter(text, "Float(3, 4), Float(4)", _arrays(((3, 4), (4,))), True)
    assert not any(isinstance(p, GradientPlan) for p in fn.interpreter._plans.values())


def _executor_matches_interpreter(fn, text: str, args: list, flags: list):
    """`fn`'s (a profiling executor's Function) outputs of its last of four training calls of
    `args` with `flags`, after checking them and their gradients against the interpreter's."""
    ref = irjit.load(text)
    want = ref.run(*args, requires_grad=flags)
    want_grads = ref.backward()
    tensors = [Tensor(a) for a in args]
    for _ in range(4):
        got = fn.run(*tensors, requires_grad=flags)
        grads = fn.backward()
    np.testing.assert_allclose(got[0].data, want[0].data, rtol=1e-5, atol=1e-6)
    assert sorted(grads) == sorted(want_grads)
    for k in grads:
        np.testing.assert_allclose(grads[k], want_grads[k], rtol=1e-4, atol=1e-5, err_msg=k)
    return got


def test_the_profiling_executors_guarded_differentiable_graphs_are_inlined_and_differentiated_whole():
    """The profiling executor's optimized graph (a DifferentiableGraph per trip behind its
    `prim::RequiresGradCheck` and fallback branch) is, for a call under grad, the graph it
    differentiated (`inline_guarded`: no guard, branch nor subgraph left, no value typed as
    not requiring grad) and takes the whole-graph plan: one tape node per call, the
    interpreter's outputs and gradients, for every requires-grad pattern."""
    from irjit.runtime.native_whole_gradient import inline_guarded
    from irjit.ops.types import TensorType
    text = RNN.replace("{trips}", "4")
    args = _arrays(RNN_SHAPES, seed=4)
    for flags in ([True, True, True, True], [False, True, True, False]):
        fn = irjit.load(text, executor="profiling", backend="native")
        got = _executor_matches_interpreter(fn, text, args, flags)
        runner = fn.executor.optimized_plan.runner
        (plan,) = [p for p in runner._plans.values() if isinstance(p, GradientPlan)]
        assert got[0].grad_fn[0].entry.op is plan.op
    g = fn.executor.optimized_plan.graph.copy()
    kinds = {n.kind for n in g.walk()}
    assert {"prim::RequiresGradCheck", "prim::DifferentiableGraph", "prim::If"} <= kinds
    inline_guarded(g)
    kinds = {n.kind for n in g.walk()}
    assert not kinds & {"prim::RequiresGradCheck", "prim::DifferentiableGraph", "prim::If",
                        "prim::CallFunction"}
    assert all(v.type.requires_grad is None for n in g.walk() for v in n.outputs
               if isinstance(v.type, TensorType))


def test_a_differentiable_graph_that_cannot_be_inlined_keeps_its_guard(monkeypatch):
    """A DifferentiableGraph `inline_guarded` cannot inline (here: every one, as if autograd
    could not run its ops) would run without its guard: the graph is not unrolled, and the
    executor's per-trip DifferentiableGraphs (behind their guards) run as before, with the
    interpreter's gradients whatever the inputs' requires-grad flags."""
    from irjit.compiler.passes import inline_autodiff_subgraphs as inliner
    from irjit.runtime.native_whole_gradient import unrolled
    monkeypatch.setattr(inliner, "_can_run_with_autograd", lambda n: False)
    text = RNN.replace("{trips}", "4")
    args = _arrays(RNN_SHAPES, seed=5)
    fn = irjit.load(text, executor="profiling", backend="native")
    for flags in ([True, True, True, True], [False, True, False, True]):
        _executor_matches_interpreter(fn, text, args, flags)
    runner = fn.executor.optimized_plan.runner
    assert not any(isinstance(p, GradientPlan) for p in runner._plans.values())
    assert unrolled(fn.executor.optimized_plan.graph.copy()) is None
