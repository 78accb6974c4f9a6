"""compiler/python_printer on PyTorch's own graphs: each fixture graph printed by irjit gives
the `.code` PyTorch 2.13 printed for it, modulo names (independently of irjit's front end)."""

from __future__ import annotations

import ast

import pytest

import irjit
from irjit.compiler.ir import TENSOR
from irjit.compiler.python_printer import FunctionHeader, constant_repr, print_function
from irjit.jit.annotations import annotation_type
from irjit.ops.registry import NO_DEFAULT

from .script_support import FIXTURES, canonical_code

NAMES = sorted(p.name[:-len(".graph.ir")] for p in FIXTURES.glob("*.graph.ir"))


def _fail(node, message):
    return AssertionError(message)


def _header(code: str) -> FunctionHeader:
    fn = ast.parse(code).body[0]
    args = fn.args.args
    defaults = [NO_DEFAULT] * (len(args) - len(fn.args.defaults)) + \
        [ast.literal_eval(d) for d in fn.args.defaults]
    params = [(a.arg, annotation_type(a.annotation, _fail), d)
              for a, d in zip(args, defaults) if a.arg != "self"]
    self_type = TENSOR if args and args[0].arg == "self" else None
    return FunctionHeader(fn.name, params, annotation_type(fn.returns, _fail), self_type)


@pytest.mark.parametrize("name", NAMES)
def test_pytorchs_graph_prints_as_pytorchs_code(name):
    code = (FIXTURES / f"{name}.code").read_text()
    graph = irjit.parse_ir((FIXTURES / f"{name}.graph.ir").read_text())
    qualified = {"helper": "__torch__.script_cases.helper"}
    got = print_function(graph, _header(code), qualified)
    assert canonical_code(got) == canonical_code(code), f"{got}\n---- PyTorch:\n{code}"


@pytest.mark.parametrize("value,text", [(1.0, "1."), (0.1, "0.10000000000000001"),
                                        (2.5e20, "2.5e+20"), (-3, "-3"), (True, "True"),
                                        (None, "None"), ('a"b', '"a\\"b"'), ([1, 2], "[1, 2]")])
def test_constants_print_as_ivalue_repr(value, text):
    assert constant_repr(value) == text
