"""compiler/schema_match: the overload TorchScript's schema matching picks for typed values."""

from __future__ import annotations

import pytest

from irjit.compiler.ir import BOOL, FLOAT, INT, NONE, STR, TENSOR, Graph, ListType
from irjit.compiler.schema_match import MatchError, match, schema_for_inputs


def _values(*types):
    g = Graph()
    return g, [g.add_input(f"v{i}", t) for i, t in enumerate(types)]


def _pack(g):
    return lambda values, elem: g.create("prim::ListConstruct", values,
                                         output_types=[ListType(elem)]).output


@pytest.mark.parametrize("kind,types,overload,out", [
    ("aten::mul", (TENSOR, INT), "Scalar", "Tensor"),
    ("aten::mul", (TENSOR, TENSOR), "Tensor", "Tensor"),
    ("aten::mul", (INT, INT), "int", "int"),
    ("aten::add", (INT, FLOAT), "int_float", "float"),
    ("aten::sum", (TENSOR, INT), "dim_IntList", "Tensor"),    # a single int for int[1]?
    ("aten::__getitem__", (ListType(STR), INT), "t", "str"),  # type variables bind
    ("aten::__is__", (ListType(INT), NONE), "", "bool"),
])
def test_overloads_and_result_types(kind, types, overload, out):
    g, values = _values(*types)
    m = match(kind, values, {}, _pack(g))
    assert m.entry.schema.overload == overload
    assert [str(t) for t in m.output_types] == [out]


def test_varargs_pack_into_the_list_argument_and_keywords_bind_by_name():
    g, (x, a, b) = _values(TENSOR, INT, INT)
    m = match("aten::view", [x, a, b], {}, _pack(g))
    assert m.inputs[1].node.kind == "prim::ListConstruct" and len(m.inputs[1].node.inputs) == 2
    g, (x, lo) = _values(TENSOR, FLOAT)
    m = match("aten::clamp", [x], {"min": lo}, _pack(g))
    assert m.inputs == [x, lo, None]  # None: the default is used


def test_int_passes_for_float_only_in_the_loose_round():
    g, (a, b) = _values(FLOAT, INT)
    assert match("aten::mul", [a, b], {}, _pack(g)).entry.schema.overload == "float_int"


def test_no_overload_names_the_argument_types():
    g, (x, s) = _values(TENSOR, STR)
    with pytest.raises(MatchError, match=r"no overload of aten::tanh accepts \(Tensor, str\)"):
        match("aten::tanh", [x, s], {}, _pack(g))
    with pytest.raises(MatchError, match="unknown builtin op: aten::nope"):
        match("aten::nope", [x], {}, _pack(g))


def test_schema_for_graph_inputs_reads_every_input_positionally():
    g, (x, d, k, t) = _values(TENSOR, ListType(INT), BOOL, NONE)
    s = schema_for_inputs("aten::sum", [x, d, k, t])
    assert s is not None and s.overload == "dim_IntList"
