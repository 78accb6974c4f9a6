"""How irjit's tracer records operators, Python numbers, indexing, sizes, defaults, the
functional API and every irjit.nn layer: each one-line function and layer of
tools/fixturegen/trace_exprs.py, traced on PyTorch's input, prints as PyTorch 2.13's traced graph
(modulo value names and source comments) and has its `.code` modulo names (fixture:
tests/fixtures/trace/exprs.json)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import irjit
import irjit.jit
import irjit.nn.functional as F
from irjit import nn
from irjit.tools.fixturegen import trace_exprs
from irjit.tools.fixturegen.trace_exprs import function

from .model_support import canonical_graph
from .script_support import canonical_code

FIXTURE = json.loads((Path(__file__).parents[1] / "fixtures" / "trace" / "exprs.json").read_text())
X = FIXTURE["x"]


@pytest.mark.parametrize("expr", list(FIXTURE["cases"]))
def test_traced_expression_is_recorded_as_pytorch_records_it(expr):
    want = FIXTURE["cases"][expr]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", irjit.jit.TracerWarning)
        traced = irjit.jit.trace(function(expr, irjit, F), irjit.tensor(X), check_trace=False)
    assert canonical_graph(str(traced.graph)) == canonical_graph(want["graph"]), \
        f"{traced.graph}\n---- PyTorch:\n{want['graph']}"
    assert canonical_code(traced.code) == canonical_code(want["code"]), \
        f"{traced.code}\n---- PyTorch:\n{want['code']}"


LAYERS = FIXTURE["layers"]


@pytest.mark.parametrize("ctor,spec,train", trace_exprs.LAYERS,
                         ids=[f"{c} train={t} input={list(s)}" for c, s, t in trace_exprs.LAYERS])
def test_every_nn_layer_traces_as_pytorchs(ctor, spec, train):
    """Each irjit.nn layer alone (train and eval where they differ) traces to PyTorch's inlined
    graph and code, and the traced layer computes what the layer computes."""
    want = LAYERS[f"{ctor} train={train} input={list(spec)}"]
    layer = eval(ctor, {"nn": nn})  # noqa: S307
    layer.train(train)
    x = trace_exprs.layer_input(spec, irjit)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", irjit.jit.TracerWarning)
        traced = irjit.jit.trace(layer, x, check_trace=False)
    assert canonical_graph(str(traced.inlined_graph)) == canonical_graph(want["inlined"]), \
        f"{traced.inlined_graph}\n---- PyTorch:\n{want['inlined']}"
    assert canonical_code(traced.code) == canonical_code(want["code"]), traced.code
    if "Dropout" not in ctor or not train:
        got, expected = traced(x), layer(x)
        for g, e in zip(got if isinstance(got, tuple) else (got,),
                        expected if isinstance(expected, tuple) else (expected,)):
            np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-5, atol=1e-6)
