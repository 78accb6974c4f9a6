"""irjit.jit.trace beyond the model pairs (test_model_pairs.py): what a TracedModule is and
does (repr, submodules, methods, native execution, save/load), user scopes, 2017 scope names,
sizes, check_trace and errors."""

import warnings

import numpy as np
import pytest

import irjit
import irjit.jit
from irjit import nn
from irjit.runtime.executor.counters import COUNTERS

from .model_support import Case


def _kinds(graph):
    return [n.kind for n in graph.nodes()]


def test_a_traced_module_is_a_script_module_printed_as_pytorchs():
    traced = Case("Net").traced()
    assert isinstance(traced, irjit.jit.ScriptModule) and isinstance(traced, irjit.jit.TracedModule)
    assert repr(traced) == ("Net(\n  original_name=Net\n"
                            "  (seq): Sequential(\n    original_name=Sequential\n"
                            "    (0): Linear(original_name=Linear)\n"
                            "    (1): ReLU(original_name=ReLU)\n  )\n"
                            "  (out): Linear(original_name=Linear)\n)")
    assert [k for k in _kinds(traced.graph) if k != "prim::GetAttr"] == ["prim::CallMethod"] * 2
    assert "aten::linear" in _kinds(traced.seq.inlined_graph)
    assert traced.seq.forward.graph is not traced.forward.graph


def test_a_submodule_called_twice_gets_forward_and_forward1():
    traced = Case("SharedLinear").traced()
    calls = [n.attr("name") for n in traced.graph.nodes() if n.kind == "prim::CallMethod"]
    assert calls == ["forward", "forward1"]
    assert traced.lin.forward1.code.startswith("def forward1(self,\n    input: Tensor)")


def test_a_submodule_the_trace_never_called_has_no_forward():
    class Unused(nn.Module):
        def __init__(self):
            super().__init__()
            self.used, self.spare = nn.Linear(2, 2), nn.Linear(2, 2)

        def forward(self, x):
            return self.used(x)

    traced = irjit.jit.trace(Unused(), irjit.randn(1, 2))
    with pytest.raises(RuntimeError, match="never called"):
        traced.spare.code
    assert "prim::GetAttr" in _kinds(traced.graph) and len(traced.graph.inputs) == 2


def test_traced_modules_run_natively_through_the_profiling_executor():
    case = Case("Mlp")
    traced = case.traced()
    (x,) = case.inputs()
    before = COUNTERS.native_nodes
    for _ in range(3):
        out = traced(x)
    np.testing.assert_allclose(out.numpy(), case.arrays["output.0"], rtol=1e-5, atol=1e-6)
    assert COUNTERS.native_nodes > before
    assert "prim::DifferentiableGraph" in str(traced.graph_for(x))  # the parameters need grad
    assert irjit.jit.last_executed_optimized_graph() is not None


def test_sizes_are_traced_and_the_graph_generalises_to_other_batch_sizes():
    def flatten(x):
        return x.view(x.size(0), -1) * x.shape[1]

    traced = irjit.jit.trace(flatten, irjit.randn(2, 3, 4))
    assert _kinds(traced.graph) == ["prim::Constant", "aten::size", "prim::NumToTensor", "aten::Int",
                                    "prim::Constant", "prim::ListConstruct", "aten::view",
                                    "prim::Constant", "aten::size", "prim::NumToTensor", "aten::mul"]
    assert "int(_0)" in traced.code and "ops.prim.NumToTensor(torch.size(x, 0))" in traced.code
    x = irjit.randn(5, 3, 4)  # another batch size: the sizes are read at run time
    np.testing.assert_allclose(traced(x).numpy(), flatten(x).numpy(), rtol=1e-6)


def test_python_numbers_are_wrapped_number_constants():
    traced = irjit.jit.trace(lambda x: x * 2 + 1.5, irjit.randn(2))
    consts = [str(n.output.type) for n in traced.graph.nodes() if n.kind == "prim::Constant"]
    assert consts == ["Long(requires_grad=0, device=cpu)", "Double(requires_grad=0, device=cpu)", "int"]
    assert traced.code.count("CONSTANTS.c") == 2


def test_decision_gate_warns_and_erases_the_branch():
    case = Case("GatedCell")
    with pytest.warns(irjit.jit.TracerWarning, match="Python boolean"):
        traced = irjit.jit.trace(case.model(), case.inputs())
    assert traced.dg.code == "def forward(self,\n    argument_1: Tensor) -> NoneType:\n  return None\n"
    assert "prim::If" not in _kinds(traced.inlined_graph)


def test_user_scope_names_nodes_inside_the_module_scope():
    def f(x):
        with irjit.jit.scope("Foo"):
            y = irjit.tanh(x)
        return y + 1.0

    graph = irjit.jit.trace(f, irjit.randn(2, 3)).graph
    scopes = {n.kind: irjit.jit.scope_name(n) for n in graph.nodes()}
    assert scopes["aten::tanh"] == "Foo" and scopes["aten::add"] == ""


def test_legacy_scope_names_are_class_and_attribute():
    traced = Case("Net").traced()
    names = [traced.legacy_scope_name(n) for n in traced.inlined_graph.nodes()
             if n.kind.startswith("aten::")]
    assert names == ["Net/Sequential[seq]/Linear[0]", "Net/Sequential[seq]/ReLU[1]", "Net/Linear[out]"]


def test_check_trace_reports_a_trace_that_depends_on_python_state():
    calls = []

    def f(x):
        calls.append(1)
        return x * 2.0 if len(calls) == 1 else x.exp()

    with pytest.raises(irjit.jit.TracingCheckError, match="differs across invocations"):
        irjit.jit.trace(f, irjit.randn(2, 2))


def test_check_trace_warns_about_nondeterministic_nodes():
    with pytest.warns(irjit.jit.TracerWarning) as caught:
        irjit.jit.trace(nn.Dropout(0.5), irjit.randn(4, 4))
    messages = [str(w.message) for w in caught]
    assert messages[0].startswith("Trace had nondeterministic nodes")
    assert messages[1].startswith("Output nr 1. of the traced function does not match")


def test_non_tensor_output_is_an_error():
    with pytest.raises(irjit.jit.TracingError, match="must return tensors"):
        irjit.jit.trace(lambda x: 3, irjit.randn(2))


def test_python_numbers_from_traced_tensors_warn():
    def f(x):
        return x * float(x.sum())

    with pytest.warns(irjit.jit.TracerWarning, match="Python float"):
        graph = irjit.jit.trace(f, irjit.randn(2, 2), check_trace=False).graph
    assert _kinds(graph)[-2:] == ["prim::Constant", "aten::mul"]


def test_tuple_inputs_are_unpacked_in_the_graph():
    cell = nn.LSTMCell(3, 4)
    x, hc = irjit.randn(2, 3), (irjit.randn(2, 4), irjit.randn(2, 4))
    traced = irjit.jit.trace(cell, (x, hc))
    assert str(traced.graph.inputs[2].type).startswith("(Float(2, 4")
    assert _kinds(traced.graph)[:5] == ["prim::GetAttr"] * 4 + ["prim::TupleUnpack"]
    for got, want in zip(traced(x, hc), cell(x, hc)):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


def test_a_tensor_that_requires_grad_cannot_become_a_constant():
    w = irjit.randn(2, requires_grad=True)
    with pytest.raises(irjit.jit.TracingError, match="requires grad as a constant"):
        irjit.jit.trace(lambda x: x * w, irjit.randn(2))


def test_traced_functions_are_script_functions():
    def pointwise(x, y):
        return irjit.sin(x) * y + x.exp() / (y * y + 1.0)

    x, y = irjit.randn(3, 4), irjit.randn(3, 4)
    traced = irjit.jit.trace(pointwise, (x, y))
    assert isinstance(traced, irjit.jit.ScriptFunction)
    assert traced.code.startswith("def pointwise(x: Tensor,\n    y: Tensor) -> Tensor:")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(traced(x, y).numpy(), pointwise(x, y).numpy(), rtol=1e-6)
