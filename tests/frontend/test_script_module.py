"""Scripted modules (model_cases.py's classes on irjit.nn): self attributes, submodule and
method calls, outputs and parameter gradients."""

from __future__ import annotations

import numpy as np
import pytest

import irjit
import irjit.jit
from irjit.ops.tensor import Tensor
from irjit.runtime.autograd import backward

from .model_support import load_models

M = load_models()


def _linear(m, x):
    return x @ m.weight.data.T + m.bias.data


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    return [Tensor(rng.standard_normal((3, 4)).astype(np.float32), requires_grad=True)
            for _ in range(2)]


def test_mycell_returns_the_tuple_and_parameter_gradients():
    cell = M.MyCell()
    scripted = irjit.jit.script(cell)
    for seed in range(3):
        x, h = _inputs(seed)
        a, b = scripted(x, h)
        want = np.tanh(_linear(cell.linear, x.data) + h.data)
        np.testing.assert_allclose(a.data, want, rtol=1e-5)
        np.testing.assert_allclose(b.data, want, rtol=1e-5)
    cell.linear.bias.grad = None
    backward([a])
    np.testing.assert_allclose(cell.linear.bias.grad, (1 - want ** 2).sum(0), rtol=1e-4)
    np.testing.assert_allclose(h.grad, 1 - want ** 2, rtol=1e-4)


def test_submodule_with_control_flow_is_a_call_method_and_runs():
    cell = M.GatedCell()
    scripted = irjit.jit.script(cell)
    kinds = [n.kind for n in scripted.graph.walk()]
    assert kinds.count("prim::CallMethod") == 2 and "prim::If" not in kinds
    assert "prim::If" in [n.kind for n in scripted.inlined_graph.walk()]
    assert "if bool(torch.gt(torch.sum(x), 0)):" in scripted.dg.code
    for seed in range(3):
        x, h = _inputs(seed)
        y = _linear(cell.linear, x.data)
        want = np.tanh((y if y.sum() > 0 else -y) + h.data)
        np.testing.assert_allclose(scripted(x, h)[0].data, want, rtol=1e-5)


def test_methods_and_int_attributes():
    m = M.ScaledResidual()
    scripted = irjit.jit.script(m)
    x, _ = _inputs()
    want = x.data
    for _ in range(m.repeats):
        want = want + m.linear.bias.data * np.maximum(want, 0)
    np.testing.assert_allclose(scripted(x).data, want, rtol=1e-5)
    assert "(self).helper(x0, )" in scripted.code


def test_repr_and_original_name():
    scripted = irjit.jit.script(M.GatedCell())
    assert scripted.original_name == "GatedCell"
    assert repr(scripted) == ("RecursiveScriptModule(\n  original_name=GatedCell\n"
                              "  (dg): RecursiveScriptModule(original_name=DecisionGate)\n"
                              "  (linear): RecursiveScriptModule(original_name=Linear)\n)")


def test_conv_relu_module_runs_through_the_profiling_executor():
    """The forum question's module: scripted, called twice, `graph_for` shows the optimized
    graph of the inlined conv2d + relu, and outputs and gradients equal the interpreter's."""
    m = M.ConvRelu()
    scripted = irjit.jit.script(m)
    rng = np.random.default_rng(0)
    x = Tensor(rng.standard_normal((1, 3, 8, 8)).astype(np.float32), requires_grad=True)
    scripted(x)
    out = scripted(x)
    kinds = [n.kind for n in scripted.graph_for(x).walk()]
    assert "aten::conv2d" in kinds and "aten::relu" in kinds and "prim::CallMethod" not in kinds
    reference = irjit.load(scripted.inlined_graph, params={"conv.weight": m.conv.weight.data})
    want = reference.run(x.data)[0]
    np.testing.assert_allclose(out.data, want.data, rtol=1e-5, atol=1e-6)
    backward([out])
    np.testing.assert_allclose(x.grad, reference.backward()["arg0"], rtol=1e-4, atol=1e-5)


def test_scripted_batch_norm_in_training_updates_its_buffers_as_eager():
    """BatchNorm2d scripts to torch.nn's compiled forward (input check, num_batches_tracked,
    batch size check, aten::batch_norm reading `training`): in training mode the scripted
    module's outputs and running statistics follow the eager module's."""
    irjit.manual_seed(0)
    eager_bn, scripted_bn = irjit.nn.BatchNorm2d(3), irjit.nn.BatchNorm2d(3)
    scripted = irjit.jit.script(scripted_bn)
    assert "aten::batch_norm" in [n.kind for n in scripted.inlined_graph.walk()]
    for step in range(3):
        x = irjit.randn(2, 3, 4, 4)
        np.testing.assert_allclose(scripted(x).numpy(), eager_bn(x).numpy(), rtol=1e-5, atol=1e-6)
    for name in ("running_mean", "running_var", "num_batches_tracked"):
        np.testing.assert_allclose(getattr(scripted_bn, name).numpy(), getattr(eager_bn, name).numpy(),
                                   rtol=1e-6, err_msg=name)
    with pytest.raises(Exception, match="expected 4D input"):
        scripted(irjit.randn(2, 3))
