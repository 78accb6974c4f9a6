"""The examples of the documents irjit follows (shared/seeds), run as shown there:

- the trace-vs-script tutorial (003): MyModel traced (`print`, `.graph`, `.code` as the tutorial
  shows them) and scripted; DecisionGate traced (branch erased, a TracerWarning, its `.code`
  returning None) and scripted (`prim::If`, the tutorial's `.code` byte for byte); save/load of
  the scripted model;
- the tracing-scopes pull request (001): the nested `Net` with `Sequential(Linear, ReLU)` traced
  with module scopes (and their 2017 `Net/Sequential[layer1]/Linear[0]` names), and a user
  scope `Foo` around a function's ops;
- the forum question (000): the conv2d+relu module scripted and traced, `graph_for` after two
  runs: with the default autodiff thresholds neither gets a DifferentiableGraph, with both
  thresholds at 1 both get one holding the relu (conv has no autodiff formula)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import irjit
import irjit.jit
from irjit.compiler import settings

from .model_support import load_models

CASES = load_models()
nn, torch = CASES.nn, CASES.torch

GATE_CODE = """def forward(self,
    x: Tensor) -> Tensor:
  if bool(torch.gt(torch.sum(x), 0)):
    _0 = x
  else:
    _0 = torch.neg(x)
  return _0
"""

MODEL_CODE = """def forward(self,
    x: Tensor,
    h: Tensor) -> Tuple[Tensor, Tensor]:
  dg = self.dg
  linear = self.linear
  _0 = torch.add((dg).forward((linear).forward(x, ), ), h)
  new_h = torch.tanh(_0)
  return (new_h, new_h)
"""

TRACED_CODE = """def forward(self,
    x: Tensor,
    h: Tensor) -> Tuple[Tensor, Tensor]:
  linear = self.linear
  _0 = torch.tanh(torch.add((linear).forward(x, ), h))
  return (_0, _0)
"""


class MyModel(nn.Module):
    def __init__(self):
        super(MyModel, self).__init__()
        self.linear = torch.nn.Linear(4, 4)

    def forward(self, x, h):
        new_h = torch.tanh(self.linear(x) + h)
        return new_h, new_h


class Model(nn.Module):
    def __init__(self, dg):
        super().__init__()
        self.dg = dg
        self.linear = nn.Linear(4, 4)

    def forward(self, x, h):
        new_h = torch.tanh(self.dg(self.linear(x)) + h)
        return new_h, new_h


def test_tutorial_traced_my_model_prints_as_the_tutorial_shows():
    net = MyModel()
    x, h = torch.rand(3, 4), torch.rand(3, 4)
    traced_net = torch.jit.trace(net, (x, h))
    assert repr(traced_net) == "MyModel(\n  original_name=MyModel\n  (linear): Linear(original_name=Linear)\n)"
    text = str(traced_net.graph)
    assert text.startswith("graph(%self.1 : __torch__.tests.frontend.test_seeds.MyModel,\n"
                           "      %x : Float(3, 4, strides=[4, 1], requires_grad=0, device=cpu),\n"
                           "      %h : Float(3, 4, strides=[4, 1], requires_grad=0, device=cpu)):\n"
                           '  %linear : __torch__.torch.nn.modules.linear.Linear = '
                           'prim::GetAttr[name="linear"](%self.1)\n')
    assert [n.kind for n in traced_net.graph.nodes()] == [
        "prim::GetAttr", "prim::CallMethod", "prim::Constant", "aten::add", "aten::tanh",
        "prim::TupleConstruct"]
    assert traced_net.code == TRACED_CODE
    new_h, again = traced_net(x, h)
    assert new_h is again or np.array_equal(new_h.numpy(), again.numpy())
    np.testing.assert_allclose(new_h.numpy(), net(x, h)[0].numpy(), rtol=1e-6)


def test_tutorial_scripted_my_model():
    scripted = torch.jit.script(MyModel())
    assert "prim::CallMethod" in [n.kind for n in scripted.graph.nodes()]
    assert scripted.code.startswith("def forward(self,\n    x: Tensor,\n    h: Tensor) -> "
                                    "Tuple[Tensor, Tensor]:\n  linear = self.linear\n")


def test_tutorial_traced_decision_gate_loses_the_branch():
    net = Model(CASES.DecisionGate())
    net.linear.weight.data[...] = 0.1  # so that x.sum() > 0 on these inputs: the first branch
    net.linear.bias.data[...] = 0.1
    x, h = torch.rand(3, 4), torch.rand(3, 4)
    with pytest.warns(irjit.jit.TracerWarning, match="Converting a tensor to a Python boolean"):
        traced_net = torch.jit.trace(net, (x, h))
    assert traced_net.dg.code == "def forward(self,\n    argument_1: Tensor) -> NoneType:\n  return None\n"
    assert "prim::If" not in [n.kind for n in traced_net.inlined_graph.walk()]
    y = -torch.ones(3, 4)  # the trace took the x.sum() > 0 branch: it returns its input
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_allclose(traced_net(y, h)[0].numpy(),
                                   torch.tanh(net.linear(y) + h).numpy(), rtol=1e-6)


def test_tutorial_scripted_code_and_save_load(tmp_path):
    scripted_gate = irjit.jit.script(CASES.DecisionGate())
    assert scripted_gate.code == GATE_CODE
    net = Model(CASES.DecisionGate())
    scripted_net = irjit.jit.script(net)
    assert scripted_net.code == MODEL_CODE
    assert "prim::If" in [n.kind for n in scripted_net.inlined_graph.walk()]
    irjit.jit.save(scripted_net, tmp_path / "model.zip")
    loaded = irjit.jit.load(tmp_path / "model.zip")
    assert repr(loaded) == ("RecursiveScriptModule(\n  original_name=Model\n"
                            "  (dg): RecursiveScriptModule(original_name=DecisionGate)\n"
                            "  (linear): RecursiveScriptModule(original_name=Linear)\n)")
    assert loaded.code == MODEL_CODE
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    h = np.zeros((3, 4), np.float32)
    for a, b in zip(scripted_net(x, h), loaded(x, h)):
        np.testing.assert_allclose(a.data, b.data)


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.layer1 = nn.Sequential(nn.Linear(2, 2), nn.ReLU())

    def forward(self, x):
        return self.layer1(x)


def test_scopes_pr_nested_net_is_traced_with_module_scopes():
    net = Net()
    t = torch.ones(2, requires_grad=True)
    traced = torch.jit.trace(net, (t,))
    nodes = [n for n in traced.inlined_graph.nodes() if n.kind.startswith("aten::")]
    assert [(n.kind, irjit.jit.scope_name(n)) for n in nodes] == [
        ("aten::linear", "__module.layer1/__module.layer1.0"),
        ("aten::relu", "__module.layer1/__module.layer1.1")]
    assert [traced.legacy_scope_name(n) for n in nodes] == [
        "Net/Sequential[layer1]/Linear[0]", "Net/Sequential[layer1]/ReLU[1]"]
    assert ", scope: __module.layer1/__module.layer1.0 #" in str(traced.inlined_graph)
    assert [n.kind for n in traced.layer1.graph.nodes() if n.kind != "prim::GetAttr"] == \
        ["prim::CallMethod", "prim::CallMethod"]


def test_scopes_pr_user_scope_foo():
    x, y = torch.tensor([0.4], requires_grad=True), torch.tensor([0.7], requires_grad=True)
    z = torch.tensor([0.7])

    def doit(x, y):
        with irjit.jit.scope("Foo"):
            out = torch.sigmoid(torch.tanh(x * (y + z)))
        return out

    traced = torch.jit.trace(doit, (x, y))
    assert [(n.kind, irjit.jit.scope_name(n)) for n in traced.graph.nodes()] == [
        ("prim::Constant", "Foo"), ("prim::Constant", "Foo"), ("aten::add", "Foo"),
        ("aten::mul", "Foo"), ("aten::tanh", "Foo"), ("aten::sigmoid", "Foo")]
    np.testing.assert_allclose(traced(x, y).numpy(), doit(x, y).numpy())


class MyModule(nn.Module):  # the forum's module
    def __init__(self, in_channels, out_channels, **kwargs):
        super(MyModule, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, bias=False, **kwargs)
        self.relu = nn.ReLU()

    def forward(self, x):
        return self.relu(self.conv(x))


def _groups(graph) -> list:
    return [n for n in graph.walk() if n.kind == "prim::DifferentiableGraph"]


@pytest.mark.parametrize("mode", ["script", "trace"])
def test_forum_conv_relu_graph_for_after_two_runs(mode):
    previous = settings.update_settings()
    try:
        for thresholds, expect_group in (((2, 5), False), ((1, 1), True)):
            irjit.set_autodiff_thresholds(*thresholds)  # read when an executor is made
            conv_relu = MyModule(3, 32, kernel_size=3, stride=1)
            x = torch.randn((1, 3, 8, 8))
            x.requires_grad = True
            m = torch.jit.script(conv_relu) if mode == "script" else torch.jit.trace(conv_relu, x)
            m.graph_for(x)
            graph = m.graph_for(x)
            groups = _groups(graph)
            assert bool(groups) == expect_group, graph
            if groups:
                body = [n.kind for n in groups[0].subgraph.nodes()]
                assert body == ["aten::relu"], graph
                conv = "aten::conv2d" if mode == "script" else "aten::_convolution"
                assert conv in [n.kind for n in graph.walk()]
            out = m(x)
            out.sum().backward()
            np.testing.assert_allclose(out.numpy(), conv_relu(x).numpy(), rtol=1e-5, atol=1e-6)
    finally:
        settings.update_settings(**{f: getattr(previous, f) for f in previous.__dataclass_fields__})
