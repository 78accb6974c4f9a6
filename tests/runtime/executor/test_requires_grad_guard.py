"""A plan is specialized for whether the call needs gradients, as PyTorch's guards and
ArgumentSpec check requires_grad: calls that need gradients after calls that did not (and
the other way round) run a plan with DifferentiableGraphs, results and gradients equal to
the interpreter's, under both executors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import irjit

GRAPH = Path(__file__).resolve().parents[2] / "fixtures" / "bench" / "tiny_linear_tanh.ir"


def _inputs():
    rng = np.random.default_rng(0)
    return [rng.standard_normal(s).astype(np.float32) for s in [(3, 4), (3, 4), (4, 4), (4,)]]


def _has_differentiable_graph(graph) -> bool:
    return any(n.kind == "prim::DifferentiableGraph" for n in graph.walk())


def _check_call(fn, ref, args, grad: bool):
    out = fn.run(*args, requires_grad=grad)
    want = ref.run(*args, requires_grad=grad)
    np.testing.assert_allclose(out[0][0].data, want[0][0].data, rtol=1e-5, atol=1e-6)
    if grad:
        got, expected = fn.backward(), ref.backward()
        assert sorted(got) == sorted(expected)
        for k in expected:
            np.testing.assert_allclose(got[k], expected[k], rtol=1e-5, atol=1e-6, err_msg=k)


@pytest.mark.parametrize("executor", ["profiling", "legacy"])
def test_calls_that_need_gradients_after_calls_that_did_not_run_differentiable_graphs(executor):
    fn = irjit.load(GRAPH, executor=executor)
    ref = irjit.load(GRAPH, executor="interp")
    args = _inputs()
    for _ in range(3):
        _check_call(fn, ref, args, grad=False)
        assert not _has_differentiable_graph(fn.executor.last_graph)
    for _ in range(3):
        _check_call(fn, ref, args, grad=True)
    assert _has_differentiable_graph(fn.executor.last_graph)
    if executor == "profiling":  # the no-grad plan's guard failed over to a grad plan
        assert fn.executor.bailouts >= 1 and not fn.executor.plan_needs_gradient


@pytest.mark.parametrize("executor", ["profiling", "legacy"])
def test_calls_without_gradients_after_calls_that_needed_them_leave_the_differentiable_graph(executor):
    fn = irjit.load(GRAPH, executor=executor)
    ref = irjit.load(GRAPH, executor="interp")
    args = _inputs()
    for _ in range(3):
        _check_call(fn, ref, args, grad=True)
    assert _has_differentiable_graph(fn.executor.last_graph)
    for _ in range(3):
        _check_call(fn, ref, args, grad=False)
    if executor == "profiling":  # the DifferentiableGraph's RequiresGradCheck fails over
        assert fn.executor.bailouts >= 3
        fallbacks = list(fn.executor._fallback_executors.values())
        assert fallbacks and not any(_has_differentiable_graph(f.last_graph) for f in fallbacks)
    else:
        assert not _has_differentiable_graph(fn.executor.last_graph)


def test_a_plan_specialized_for_gradients_has_no_requires_grad_guard_of_its_own():
    """Only a plan built without gradients checks the call (a grad plan's DifferentiableGraphs
    carry their own RequiresGradCheck)."""
    fn = irjit.load(GRAPH, executor="profiling")
    args = _inputs()
    for _ in range(3):
        fn.run(*args)
        fn.backward()
    assert fn.executor.plan_needs_gradient and fn.executor.bailouts == 0


UNPROFILED = """graph(%x : Tensor, %idx : Tensor):
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::index_select(%x, %zero, %idx)
  %c : Tensor = aten::index_select(%x, %one, %idx)
  %t : (Tensor, Tensor) = prim::TupleConstruct(%a, %c)
  return (%t)"""


def test_a_plan_profiled_on_calls_that_needed_gradients_is_kept_for_them():
    """Whether the profiled calls needed gradients is remembered even where no profile record
    says so (no DifferentiableGraph forms here): later grad calls keep the plan instead of
    bailing out to a new fallback executor on every call."""
    from irjit.runtime.executor.counters import COUNTERS
    fn = irjit.load(irjit.parse_ir(UNPROFILED), executor="profiling")
    ref = irjit.load(irjit.parse_ir(UNPROFILED))
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    idx = np.array([2, 0], dtype=np.int64)
    before = COUNTERS.as_dict()
    for _ in range(5):
        (a, c), = fn.run(x, idx)
        (wa, wc), = ref.run(x, idx)
        np.testing.assert_array_equal(a.data, wa.data)
        np.testing.assert_array_equal(c.data, wc.data)
        got, want = fn.backward(), ref.backward()
        np.testing.assert_array_equal(got["arg0"], want["arg0"])
    after = COUNTERS.as_dict()
    assert after["executors_constructed"] == before["executors_constructed"]  # no fallbacks
    assert after.get("bailouts", 0) == before.get("bailouts", 0)


def test_a_differentiable_graph_with_an_input_never_profiled_is_inlined():
    """PyTorch's guardDifferentiableGraph inlines a DifferentiableGraph an input of which no
    profile saw (embedding's indices and weight here: embedding is not a profiled op); kept,
    its RequiresGradCheck would take the indices to require grad and fail on every call."""
    case = Path(__file__).resolve().parents[2] / "fixtures" / "generated" / "run" / "embedding_script"
    with np.load(case / "params.npz") as p:
        params = dict(p)
    with np.load(case / "inputs.npz") as i:
        idx = i["arg0"]
    fn = irjit.load(case / "graph.ir", params=params, executor="profiling")
    ref = irjit.load(case / "graph.ir", params=params, executor="interp")
    for _ in range(4):
        out, want = fn.run(idx), ref.run(idx)
        np.testing.assert_allclose(out[0].data, want[0].data, rtol=1e-6)
        got, expected = fn.backward(), ref.backward()
        for k in expected:
            np.testing.assert_allclose(got[k], expected[k], rtol=1e-5, atol=1e-6, err_msg=k)
    assert fn.executor.bailouts == 0
    assert "aten::embedding" in [n.kind for n in fn.executor.last_graph.nodes()]
