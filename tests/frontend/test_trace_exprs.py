"""How irjit's tracer records operators, Python numbers, indexing, sizes, defaults and the
functional API: each one-line function of tools/fixturegen/trace_exprs.py traced on PyTorch's
input prints as PyTorch 2.13's traced graph (modulo value names and source comments) and has
its `.code` modulo names (fixture: tests/fixtures/trace/exprs.json)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

import irjit
import irjit.jit
import irjit.nn.functional as F
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
