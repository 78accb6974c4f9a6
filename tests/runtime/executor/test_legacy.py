"""The legacy executor: ArgumentSpec plan cache, counters, DifferentiableGraph forward/backward,
introspection and thread safety."""

import threading

import numpy as np
import pytest

import irjit
from irjit.runtime.autograd import backward, no_grad
from irjit.runtime.executor.counters import COUNTERS, last_executed_optimized_graph
from irjit.runtime.executor.legacy import LegacyGraphExecutor
from irjit.compiler.settings import ExecutorSettings
from irjit.ops.tensor import Tensor

POINTWISE = """graph(%x : Tensor, %y : Tensor):
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::mul(%x, %y)
  %b : Tensor = aten::add(%a, %x, %one)
  %c : Tensor = aten::mul(%b, %y)
  return (%c)
"""


def _inputs(requires_grad=True, shape=(3, 4), dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    return [Tensor(rng.standard_normal(shape).astype(dtype), requires_grad) for _ in range(2)]


def _reference(x, y):
    fn = irjit.load(irjit.parse_ir(POINTWISE))
    outs = fn.run(x.data, y.data)
    return outs[0].data, fn.backward()


def test_plan_cache_hits_and_misses_follow_the_argument_spec():
    ex = LegacyGraphExecutor(irjit.parse_ir(POINTWISE))
    x, y = _inputs()
    ex.run(x, y)
    ex.run(*_inputs(seed=1))           # same spec: hit
    ex.run(*_inputs(shape=(5, 4)))     # shapes are not part of the spec: hit
    assert (ex.hits, ex.misses) == (2, 1)
    ex.run(*_inputs(requires_grad=False))  # requires_grad is: miss
    ex.run(*_inputs(dtype=np.float32))     # dtype is: miss
    with no_grad():
        ex.run(*_inputs())                 # grad mode is: miss
    assert ex.misses == 4 and len(ex.plans) == 4


def test_requires_grad_inputs_get_a_differentiable_graph_with_correct_gradients():
    ex = LegacyGraphExecutor(irjit.parse_ir(POINTWISE))
    x, y = _inputs()
    (out,) = ex.run(x, y)
    g = ex.graph_for(x, y)
    assert any(n.kind == "prim::DifferentiableGraph" for n in g.walk())
    assert str(g).startswith("graph(%x : Double(*, *, requires_grad=1, device=cpu),")
    want_out, want_grads = _reference(x, y)
    np.testing.assert_allclose(out.data, want_out)
    backward([out])
    np.testing.assert_allclose(x.grad, want_grads["arg0"])
    np.testing.assert_allclose(y.grad, want_grads["arg1"])


def test_no_differentiable_graph_without_requires_grad():
    ex = LegacyGraphExecutor(irjit.parse_ir(POINTWISE))
    x, y = _inputs(requires_grad=False)
    ex.run(x, y)
    assert not any(n.kind == "prim::DifferentiableGraph" for n in ex.graph_for(x, y).walk())


def test_node_threshold_keeps_small_graphs_out_of_autodiff():
    settings = ExecutorSettings(autodiff_node_threshold=10)
    ex = LegacyGraphExecutor(irjit.parse_ir(POINTWISE), settings=settings)
    x, y = _inputs()
    ex.run(x, y)
    assert not any(n.kind == "prim::DifferentiableGraph" for n in ex.graph_for(x, y).walk())


def test_counters_and_last_executed_graph():
    COUNTERS.reset()
    ex = LegacyGraphExecutor(irjit.parse_ir(POINTWISE))
    x, y = _inputs()
    ex.run(x, y)
    ex.run(x, y)
    c = COUNTERS.as_dict()
    assert c["executors_constructed"] >= 1 and c["invocations"] >= 2
    assert c["cache_misses"] >= 1 and c["cache_hits"] >= 1
    assert last_executed_optimized_graph() is ex.graph_for(x, y)


def test_debug_state_lists_plans_in_pytorch_format():
    ex = LegacyGraphExecutor(irjit.parse_ir(POINTWISE))
    ex.run(*_inputs())
    state = ex.debug_state()
    assert "1 plan(s)" in state and "with prim::DifferentiableGraph_0 = graph(" in state
    # every plan printed in the state re-parses
    body = state.split("\n", 2)[2]
    irjit.parse_ir(body)


def test_two_threads_share_one_executor_and_compile_once():
    ex = LegacyGraphExecutor(irjit.parse_ir(POINTWISE))
    results, errors = {}, []

    def work(k):
        try:
            x, y = _inputs(seed=k)
            for _ in range(20):
                (out,) = ex.run(x, y)
            want, _ = _reference(x, y)
            results[k] = np.allclose(out.data, want)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and results == {0: True, 1: True}
    assert ex.misses == 1 and len(ex.plans) == 1


def test_second_identical_call_with_module_params_hits_the_plan_cache():
    """Params arrive as arrays and become Tensors on their first GetAttr: the spec must not
    change between the first and second call (it did: two misses)."""
    path = "tests/fixtures/run/conv_relu_script"
    fn = irjit.load(f"{path}/graph.ir", params=f"{path}/params.npz", executor="legacy")
    x = np.load(f"{path}/inputs.npz")["arg0"]
    fn.run(x, requires_grad=False)
    fn.run(x, requires_grad=False)
    assert (fn.executor.hits, fn.executor.misses) == (1, 1)
