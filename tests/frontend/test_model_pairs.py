"""The 25 models of tools/fixturegen/model_cases.py, written once for both frameworks, against
what PyTorch 2.13 makes of them (tests/fixtures/models, by model_pairs.py): traced graphs
(`.graph` with its prim::CallMethods and `.inlined_graph`) print as PyTorch's modulo value
names, with the same scopes and user source lines; traced and scripted `.code` match PyTorch's
modulo names; scripted graphs have PyTorch's node kinds in order; and eager, traced and
scripted runs give PyTorch's outputs and gradients."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import irjit
import irjit.jit

from .model_support import NAMES, Case, canonical_graph
from .script_support import canonical_code, node_kinds

# scripted models whose inlined graph keeps a prim::CallMethod where PyTorch inlines torch.nn's
# compiled TorchScript forward (irjit has no graph for the recurrent cells; the runtime's
# built-in forward runs them)
NOT_INLINED = {"LstmStep", "LstmFromZero", "GruStep"}


def test_at_least_twenty_models_are_compared():
    assert len(NAMES) >= 20


@pytest.mark.parametrize("name", NAMES)
def test_traced_graphs_print_as_pytorchs(name):
    case = Case(name)
    traced = case.traced()
    assert canonical_graph(str(traced.graph)) == canonical_graph(case.text("trace.graph.ir"))
    inlined = traced.inlined_graph
    assert canonical_graph(str(inlined)) == canonical_graph(case.text("trace.inlined.ir"))
    assert [n.kind for n in inlined.nodes()] == case.meta["trace_inlined_kinds"]
    assert [irjit.jit.scope_name(n) for n in inlined.nodes()] == case.meta["trace_inlined_scopes"]


@pytest.mark.parametrize("name", NAMES)
def test_traced_nodes_name_the_users_source_lines(name):
    """Ops the model's own code ran carry `# model_cases.py:<line>:0`, as PyTorch's do."""
    case = Case(name)
    theirs = irjit.parse_ir(case.text("trace.inlined.ir"))
    mine = case.traced().inlined_graph
    for a, b in zip(mine.nodes(), theirs.nodes()):
        if b.source is not None and b.source.filename.endswith("model_cases.py"):
            assert a.source is not None and a.source.filename.endswith("model_cases.py") \
                and a.source.line == b.source.line, f"{a} at {a.source}, PyTorch: {b.source}"


@pytest.mark.parametrize("name", NAMES)
def test_traced_code_matches_pytorchs_modulo_names(name):
    case = Case(name)
    traced = case.traced()
    assert canonical_code(traced.code) == canonical_code(case.text("trace.code")), traced.code
    for path, want in case.meta["trace_submodule_code"].items():
        sub = traced
        for attr in path.split("."):
            sub = getattr(sub, attr)
        assert canonical_code(sub.code) == canonical_code(want), f"{path}:\n{sub.code}"


@pytest.mark.parametrize("name", NAMES)
def test_tracer_warnings_are_pytorchs(name):
    case = Case(name)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        irjit.jit.trace(case.model(), case.inputs())
    got = sorted({type(w.message).__name__ for w in caught if "Tracer" in type(w.message).__name__})
    assert got == case.meta["trace_warnings"]


@pytest.mark.parametrize("name", NAMES)
def test_scripted_graph_has_pytorchs_node_kinds_and_code(name):
    case = Case(name)
    scripted = irjit.jit.script(case.model())
    want = irjit.parse_ir(case.text("script.graph.ir"))
    assert node_kinds(scripted.graph) == node_kinds(want), f"{scripted.graph}\n---- PyTorch:\n{want}"
    assert canonical_code(scripted.code) == canonical_code(case.text("script.code")), scripted.code


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.xfail(
    strict=True, reason="torch.nn forward irjit does not compile")) if n in NOT_INLINED else n
    for n in NAMES])
def test_scripted_inlined_graph_has_pytorchs_node_kinds(name):
    case = Case(name)
    want = irjit.parse_ir(case.text("script.inlined.ir"))
    got = irjit.jit.script(case.model()).inlined_graph
    assert node_kinds(got) == node_kinds(want), f"{got}\n---- PyTorch:\n{want}"


def _flat(out) -> list:
    return list(out) if isinstance(out, (tuple, list)) else [out]


@pytest.mark.parametrize("mode", ["eager", "traced", "scripted"])
@pytest.mark.parametrize("name", NAMES)
def test_outputs_and_gradients_equal_pytorchs(name, mode):
    """The sum of all floating-point outputs' sums, differentiated w.r.t. the floating-point
    inputs and the parameters, over two calls (the profiling executor's first run profiles,
    the second runs the optimized plan)."""
    case = Case(name)
    model = case.model()
    run = {"eager": lambda: model, "traced": lambda: case.traced(model),
           "scripted": lambda: irjit.jit.script(model)}[mode]()
    a = case.arrays
    for _ in range(2 if mode != "eager" else 1):
        model.zero_grad()
        inputs = case.inputs(requires_grad=True)
        outs = _flat(run(*inputs))
        for i, o in enumerate(outs):
            np.testing.assert_allclose(o.numpy(), a[f"output.{i}"], rtol=1e-4, atol=1e-5,
                                       err_msg=f"output {i}")
        loss = None
        for o in outs:
            if o.dtype.kind == "f":
                loss = o.sum() if loss is None else loss + o.sum()
        loss.backward()
        for i, t in enumerate(inputs):
            if f"grad.input.{i}" in a:
                np.testing.assert_allclose(t.grad.numpy(), a[f"grad.input.{i}"], rtol=1e-4,
                                           atol=1e-5, err_msg=f"input {i}")
        for pname, p in model.named_parameters():
            if f"grad.state.{pname}" not in a:  # unused (ScaledResidual's linear.weight)
                assert p.grad is None, pname
                continue
            np.testing.assert_allclose(p.grad.numpy(), a[f"grad.state.{pname}"], rtol=1e-4,
                                       atol=1e-5, err_msg=pname)
