"""Rematerialization (compiler/autodiff/rematerialize.py): temporaries that pointwise ops and
views compute from f's inputs are recomputed in df when at most one input of f is new to df;
products, reductions, random ops and temporaries that need two new inputs stay saved; the
gradients are those of the saved Gradient, and the node's own Gradient is left as it is."""

from __future__ import annotations

import numpy as np
import pytest

from irjit.compiler import parse_ir
from irjit.compiler.autodiff import differentiate
from irjit.compiler.autodiff.rematerialize import rematerializable, rematerialize
from irjit.compiler.passes import get_pass
from irjit.ops.tensor import Tensor
from irjit.runtime.executor.runnable_gradient import runnable_gradient
from irjit.runtime.run_gradient import run_backward, run_forward

CHAIN = """graph(%x : Tensor(requires_grad=1), %a : Tensor(requires_grad=1),
      %b : Tensor(requires_grad=1)):
  %one : int = prim::Constant[value=1]()
  %m : Tensor(requires_grad=1) = aten::mul(%x, %a)
  %s : Tensor(requires_grad=1) = aten::add(%m, %b, %one)
  %t : Tensor(requires_grad=1) = aten::tanh(%s)
  %g : Tensor(requires_grad=1) = aten::sigmoid(%x)
  %p : Tensor(requires_grad=1) = aten::mul(%t, %g)
  %q : Tensor(requires_grad=1) = aten::mul(%x, %x)
  %y : Tensor(requires_grad=1) = aten::add(%p, %q, %one)
  return (%y)"""

# tanh(x @ w) needs the product: saved; tanh(u * v) needs u and v, which df reads anyway (the
# product's gradient): recomputed.
KEEPS = """graph(%x : Tensor(requires_grad=1), %w : Tensor(requires_grad=1),
      %u : Tensor(requires_grad=1), %v : Tensor(requires_grad=1)):
  %mm : Tensor(requires_grad=1) = aten::matmul(%x, %w)
  %r : Tensor(requires_grad=1) = aten::tanh(%mm)
  %e : Tensor(requires_grad=1) = aten::mul(%u, %v)
  %s : Tensor(requires_grad=1) = aten::tanh(%e)
  %y : Tensor(requires_grad=1) = aten::mul(%r, %s)
  return (%y)"""


def _gradient(text: str):
    grad = differentiate(parse_ir(text))
    get_pass("lower_grad_of").run(grad.df)
    return grad


def _inputs(shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [Tensor(rng.standard_normal(s).astype(np.float64)) for s in shapes]


def _gradients(grad, inputs, seed_grad):
    return run_backward(grad, inputs, run_forward(grad, inputs), [seed_grad])


def test_the_chain_saves_nothing_but_its_output():
    grad = _gradient(CHAIN)
    assert len(grad.f.outputs) - grad.f_real_outputs >= 2  # tanh and sigmoid are saved
    run = runnable_gradient(grad)
    saved = [j for j in run.df_input_captured_outputs if run.f.outputs[j].node.kind != "prim::Constant"
             and "Tensor" in str(run.f.outputs[j].type)]
    assert all(j < run.f_real_outputs for j in saved)
    kinds = [n.kind for n in run.df.nodes()]
    assert "aten::tanh" in kinds and "aten::sigmoid" in kinds
    assert sorted(run.df_input_captured_inputs) == [0, 1, 2]  # b is read now: the one new input


def test_rematerialized_gradients_equal_the_saved_ones():
    grad = _gradient(CHAIN)
    f_text, df_text = str(grad.f), str(grad.df)
    inputs = _inputs([(7,), (7,), (7,)])
    seed = np.random.default_rng(1).standard_normal(7)
    want = _gradients(grad, inputs, seed)
    got = _gradients(runnable_gradient(grad), inputs, seed)
    assert sorted(got) == sorted(want) == [0, 1, 2]
    for i in want:
        np.testing.assert_allclose(got[i], want[i], rtol=1e-12, atol=1e-12)
    assert (str(grad.f), str(grad.df)) == (f_text, df_text)  # the node's Gradient is PyTorch's


def test_products_stay_saved_and_pointwise_temporaries_are_recomputed():
    grad = _gradient(KEEPS)
    chosen = {grad.f.outputs[grad.df_input_captured_outputs[p]].node.kind for p in rematerializable(grad)}
    assert "aten::matmul" not in chosen
    run = runnable_gradient(grad)
    saved = [run.f.outputs[j].node for j in run.df_input_captured_outputs]
    assert [n.inputs[0].node.kind for n in saved if n.kind == "aten::tanh"] == ["aten::matmul"]
    assert [n.kind for n in run.df.nodes()].count("aten::tanh") == 1
    inputs = _inputs([(3, 4), (4, 5), (3, 5), (3, 5)])
    seed = np.random.default_rng(2).standard_normal((3, 5))
    want, got = _gradients(grad, inputs, seed), _gradients(run, inputs, seed)
    for i in want:
        np.testing.assert_allclose(got[i], want[i], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("text", [
    # a random op is never recomputed
    """graph(%x : Tensor(requires_grad=1)):
  %p : float = prim::Constant[value=0.5]()
  %t : bool = prim::Constant[value=1]()
  %d : Tensor(requires_grad=1) = aten::dropout(%x, %p, %t)
  %y : Tensor(requires_grad=1) = aten::tanh(%d)
  return (%y)""",
    # a reduction is not pointwise
    """graph(%x : Float(3, 4, strides=[4, 1], requires_grad=1, device=cpu)):
  %n : NoneType = prim::Constant()
  %s : Tensor(requires_grad=1) = aten::sum(%x, %n)
  %e : Tensor(requires_grad=1) = aten::exp(%s)
  %y : Tensor(requires_grad=1) = aten::mul(%e, %x)
  return (%y)""",
])
def test_random_ops_and_reductions_are_not_recomputed(text):
    grad = _gradient(text)
    for p in rematerializable(grad):
        v = grad.f.outputs[grad.df_input_captured_outputs[p]]
        assert v.node.kind not in ("aten::dropout", "aten::sum", "aten::exp")


def test_a_temporary_needing_two_new_inputs_stays_saved():
    grad = _gradient("""graph(%x : Tensor(requires_grad=1), %u : Tensor, %v : Tensor):
  %one : int = prim::Constant[value=1]()
  %e : Tensor = aten::add(%u, %v, %one)
  %s : Tensor = aten::tanh(%e)
  %y : Tensor(requires_grad=1) = aten::mul(%x, %s)
  return (%y)""")
    assert not rematerializable(grad)
    assert not rematerialize(grad)


def _native_chain_gradients(n: int):
    import irjit
    from irjit.tools.bench_workloads import load_workload
    fn = irjit.load(load_workload("elementwise_chain").ir_path, executor="profiling", backend="native")
    rng = np.random.default_rng(3)
    args = [rng.standard_normal(n).astype(np.float32) for _ in range(3)]
    for _ in range(3):  # profile, then optimized runs
        out = fn.run(*args)
        grads = fn.backward()
    return out, grads


def test_native_fwd_bwd_with_rematerialization_equals_the_saved_gradient(monkeypatch):
    from irjit.runtime.executor import runnable_gradient as module
    out, grads = _native_chain_gradients(1000)
    monkeypatch.setattr(module, "rematerializable", lambda grad: [])
    monkeypatch.setattr(module, "rematerialize", lambda grad: False)
    saved_out, saved = _native_chain_gradients(1000)
    np.testing.assert_allclose(out[0].data, saved_out[0].data, rtol=1e-6, atol=1e-6)
    assert sorted(grads) == sorted(saved)
    for k in grads:
        np.testing.assert_allclose(grads[k], saved[k], rtol=1e-5, atol=1e-5)
