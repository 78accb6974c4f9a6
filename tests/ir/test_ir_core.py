"""Unit tests of the IR API: building graphs, use lists, node order, copies, names, scopes,
types, attributes and the verifier."""

from __future__ import annotations

import numpy as np
import pytest

from irjit import IRParseError, parse_ir
from irjit.compiler.ir import (BOOL, FLOAT, INT, NONE, STR, TENSOR, Device, DictType, FutureType,
                         Graph, IRVerificationError, ListType, OptionalType, SourceLocation,
                         TensorType, TupleType, Use)
from irjit.compiler.ir.attributes import TensorData, format_attribute, format_double, quote_string
from irjit.ops.types import ClassType, GenericType


def _uses(v):
    return [(u.user, u.offset) for u in v.uses]


def _if_graph():
    """`%a = A(%x); %o = prim::If(%c) {block0: B(%x), block1: D(%a)}; return (E(%o))`."""
    g = Graph()
    c = g.add_input("c", BOOL)
    x = g.add_input("x")
    a = g.insert("test::A", [x])
    if_node = g.insert("prim::If", [c])
    b0, b1 = if_node.add_block(), if_node.add_block()
    g.set_insert_point(b0)
    b = g.insert("test::B", [x])
    b0.register_output(b.output)
    g.set_insert_point(b1)
    d = g.insert("test::D", [a.output])
    b1.register_output(d.output)
    g.set_insert_point(g.block)
    e = g.insert("test::E", [if_node.output])
    g.register_output(e.output)
    return g, dict(c=c, x=x, a=a, if_node=if_node, b=b, d=d, e=e, b0=b0, b1=b1)


def _loop_graph():
    """A prim::Loop carrying one value, with a nested prim::If in its body."""
    g = Graph()
    n = g.add_input("n", INT)
    x = g.add_input("x")
    true = g.insert_constant(True)
    loop = g.insert("prim::Loop", [n, true, x])
    body = loop.add_block()
    body.add_input(INT, "i")
    acc = body.add_input(TENSOR, "acc")
    g.set_insert_point(body)
    step = g.insert("aten::relu", [acc])
    cond = g.insert("aten::gt", [step.output], output_types=[BOOL])
    inner = g.insert("prim::If", [cond.output])
    for k in range(2):
        blk = inner.add_block()
        g.set_insert_point(blk)
        blk.register_output(g.insert("aten::neg" if k else "aten::abs", [step.output]).output)
    g.set_insert_point(body)
    body.register_output(true)
    body.register_output(inner.output)
    g.set_insert_point(g.block)
    g.register_output(loop.output)
    return g


LOOP_TEXT = """graph(%n : int,
      %x : Tensor):
  %2 : bool = prim::Constant[value=1]()
  %3 : Tensor = prim::Loop(%n, %2, %x)
    block0(%i : int, %acc : Tensor):
      %6 : Tensor = aten::relu(%acc)
      %7 : bool = aten::gt(%6)
      %8 : Tensor = prim::If(%7)
        block0():
          %9 : Tensor = aten::abs(%6)
          -> (%9)
        block1():
          %10 : Tensor = aten::neg(%6)
          -> (%10)
      -> (%2, %8)
  return (%3)
"""


# ---- building graphs

def test_build_graph_with_if_prints_expected_text():
    """A hand-built prim::If graph prints in PyTorch's format and lints."""
    g, _ = _if_graph()
    g.lint()
    assert str(g) == (
        "graph(%c : bool,\n"
        "      %x : Tensor):\n"
        "  %2 : Tensor = test::A(%x)\n"
        "  %3 : Tensor = prim::If(%c)\n"
        "    block0():\n"
        "      %4 : Tensor = test::B(%x)\n"
        "      -> (%4)\n"
        "    block1():\n"
        "      %5 : Tensor = test::D(%2)\n"
        "      -> (%5)\n"
        "  %6 : Tensor = test::E(%3)\n"
        "  return (%6)\n")


def test_build_loop_graph_prints_expected_text_and_reparses():
    """A hand-built prim::Loop with block parameters prints as expected and round-trips."""
    g = _loop_graph()
    g.lint()
    assert str(g) == LOOP_TEXT
    assert str(parse_ir(LOOP_TEXT)) == LOOP_TEXT


def test_create_does_not_insert_and_insert_uses_insert_point():
    """`create` leaves the node unlinked; `insert` puts nodes before the insertion point."""
    g = Graph()
    x = g.add_input("x")
    loose = g.create("aten::relu", [x])
    assert not loose.is_inserted() and list(g.nodes()) == []
    first = g.insert("aten::neg", [x])
    g.set_insert_point(first)
    before = g.insert("aten::abs", [x])
    assert [n.kind for n in g.nodes()] == ["aten::abs", "aten::neg"]
    assert before.next is first and g.insert_point is first
    g.insert_node(loose)
    assert [n.kind for n in g.nodes()] == ["aten::abs", "aten::relu", "aten::neg"]
    assert _uses(x) == [(loose, 0), (first, 0), (before, 0)]


def test_zero_and_multi_output_nodes_print():
    """Nodes with no outputs print as ` = kind(...)`; multi-output nodes list every output."""
    g = Graph()
    x = g.add_input("x")
    g.insert("prim::RaiseException", [x], num_outputs=0)
    n = g.insert("prim::TupleUnpack", [x], output_types=[TENSOR, INT])
    n.outputs[1].set_debug_name("k")
    g.register_output(n.outputs[1])
    text = str(g)
    assert "\n   = prim::RaiseException(%x)\n" in text
    assert "\n  %1 : Tensor, %k : int = prim::TupleUnpack(%x)\n" in text
    assert str(parse_ir(text)) == text


# ---- use lists

def test_use_lists_after_add_replace_remove_input():
    """add_input, replace_input and remove_input keep every use list exact."""
    g = Graph()
    x, y, z = (g.add_input(name) for name in "xyz")
    n = g.insert("aten::cat", [x, y, x])
    assert _uses(x) == [(n, 0), (n, 2)] and _uses(y) == [(n, 1)]
    n.add_input(z)
    assert _uses(z) == [(n, 3)]
    old = n.replace_input(1, z)
    assert old is y and y.uses == [] and _uses(z) == [(n, 3), (n, 1)]
    n.remove_input(0)
    assert n.inputs == [z, x, z]
    assert sorted(_uses(z), key=lambda u: u[1]) == [(n, 0), (n, 2)]
    assert _uses(x) == [(n, 1)]
    n.insert_input(0, y)
    assert n.inputs == [y, z, x, z]
    assert _uses(y) == [(n, 0)] and _uses(x) == [(n, 2)]
    assert Use(n, 0) in y.uses
    g.lint()


def test_replace_all_uses_with():
    """Every use, including the graph's return, moves to the new value."""
    g = Graph()
    x = g.add_input("x")
    a = g.insert("aten::relu", [x])
    b = g.insert("aten::neg", [a.output])
    c = g.insert("aten::add", [a.output, b.output])
    g.register_output(a.output)
    new = g.insert("aten::abs", [x])
    a.output.replace_all_uses_with(new.output)
    assert a.output.uses == []
    assert set(_uses(new.output)) == {(b, 0), (c, 0), (g.return_node, 0)}
    assert g.outputs == [new.output]
    with pytest.raises(IRVerificationError):
        g.lint()  # %abs is now used before it is defined
    new.move_after(a)
    g.lint()


def test_replace_all_uses_after_node_with():
    """Only uses after the given node are redirected, including uses nested in later blocks."""
    g, v = _if_graph()
    x = v["x"]
    fresh = g.create("test::F", [x])
    fresh.insert_after(v["a"])
    x.replace_all_uses_after_node_with(fresh, fresh.output)
    assert _uses(x) == [(v["a"], 0), (fresh, 0)]
    assert _uses(fresh.output) == [(v["b"], 0)]
    g.lint()


# ---- node order

def test_insert_before_after_and_move():
    """insert_before/after and move_before/after reorder nodes and keep is_before consistent."""
    g = Graph()
    x = g.add_input("x")
    a = g.insert("t::a", [x])
    c = g.insert("t::c", [x])
    b = g.create("t::b", [x]).insert_before(c)
    d = g.create("t::d", [x]).insert_after(c)
    assert [n.kind for n in g.nodes()] == ["t::a", "t::b", "t::c", "t::d"]
    a.move_after(d)
    assert [n.kind for n in g.nodes()] == ["t::b", "t::c", "t::d", "t::a"]
    d.move_before(b)
    assert [n.kind for n in g.nodes()] == ["t::d", "t::b", "t::c", "t::a"]
    order = list(g.nodes())
    for i, n in enumerate(order):
        for j, m in enumerate(order):
            assert n.is_before(m) == (i < j)
    g.lint()


def test_many_insertions_at_one_point_keep_order():
    """Repeated insertion between the same two nodes (forcing renumbering) keeps the order."""
    g = Graph()
    x = g.add_input("x")
    first = g.insert("t::first", [x])
    last = g.insert("t::last", [x])
    g.set_insert_point(last)
    made = [g.insert("t::mid", [x]) for _ in range(100)]
    for _ in range(70):  # always directly after `first`: halves the gap each time
        made.append(g.create("t::front", [x]).insert_after(first))
    order = list(g.nodes())
    assert order[0] is first and order[-1] is last and len(order) == 172
    assert all(order[i].is_before(order[i + 1]) for i in range(len(order) - 1))
    g.lint()


def test_is_before_across_nested_blocks():
    """Program order runs through blocks: a node's blocks come after it, block0 before block1."""
    g, v = _if_graph()
    order = list(g.walk())
    assert [n.kind for n in order] == ["test::A", "prim::If", "test::B", "test::D", "test::E"]
    for i, n in enumerate(order):
        for j, m in enumerate(order):
            assert n.is_before(m) == (i < j), (n.kind, m.kind)
            assert n.is_after(m) == (i > j)


def test_is_before_in_deeply_nested_loop():
    """is_before agrees with walk order for every pair in a loop with a nested if."""
    g = _loop_graph()
    order = list(g.walk())
    assert len(order) == 7
    for i, n in enumerate(order):
        for j, m in enumerate(order):
            assert n.is_before(m) == (i < j), (n.kind, m.kind)


def test_destroy_removes_node_and_its_uses():
    """Destroying a node unlinks it, drops the uses of its inputs and frees its blocks."""
    g, v = _if_graph()
    x = v["x"]
    v["e"].output.replace_all_uses_with(v["a"].output)
    v["e"].destroy()
    v["if_node"].destroy()
    assert [n.kind for n in g.walk()] == ["test::A"]
    assert _uses(x) == [(v["a"], 0)]
    assert v["c"].uses == []
    g.lint()
    assert str(g) == ("graph(%c : bool,\n      %x : Tensor):\n"
                      "  %2 : Tensor = test::A(%x)\n  return (%2)\n")


def test_destroy_asserts_when_outputs_are_used():
    """A node whose outputs still have uses cannot be destroyed, and stays intact."""
    g, v = _if_graph()
    with pytest.raises(AssertionError):
        v["a"].destroy()
    assert v["a"].is_inserted()
    g.lint()


# ---- copies

SECTION_TEXT = """graph(%x : Float(2, strides=[1], requires_grad=1, device=cpu),
      %c : bool):
  %2 : Tensor = prim::DifferentiableGraph_0(%x)
  %3 : Tensor = prim::If(%c)
    block0():
      %4 : Tensor = aten::relu(%2), scope: m/relu # /x.py:3:4
      -> (%4)
    block1():
      -> (%x)
  return (%3)
with prim::DifferentiableGraph_0 = graph(%y : Tensor):
  %z : Tensor = aten::neg(%y)
  return (%z)
"""


def test_copy_is_equivalent_and_independent():
    """A copy prints the same (for a freshly numbered graph) and shares no nodes or values."""
    g = parse_ir(SECTION_TEXT)
    c = g.copy()
    c.lint()
    assert str(c) == SECTION_TEXT
    orig_nodes = {id(n) for n in g.walk()}
    assert not orig_nodes & {id(n) for n in c.walk()}
    dg, dg_copy = next(g.nodes()), next(c.nodes())
    assert dg_copy.subgraph is not dg.subgraph
    assert not {id(n) for n in dg.subgraph.walk()} & {id(n) for n in dg_copy.subgraph.walk()}
    # mutating the copy (and its subgraph) leaves the original untouched
    c.inputs[0].set_debug_name("renamed")
    c.register_output(c.insert_constant(1))
    next(dg_copy.subgraph.nodes()).kind = "aten::abs"
    assert str(g) == SECTION_TEXT
    assert "aten::abs" in str(c) and "%renamed" in str(c)
    g.lint()
    c.lint()


def test_copy_keeps_the_text_line_of_each_node():
    """Errors raised while running a copy (a specialized plan) name the line of the .ir text."""
    text = ("graph(%a : int, %b : int):\n"
            "  %c : int = aten::floordiv(%a, %b)\n"
            "  %d : int = prim::If(%c)\n"
            "    block0():\n"
            "      %e : int = aten::add(%c, %a)\n"
            "      -> (%e)\n"
            "    block1():\n"
            "      -> (%c)\n"
            "  return (%d)\n")
    lines = [n.text_line for n in parse_ir(text).copy().walk()]
    assert lines == [2, 3, 5]


def test_copy_of_built_loop_graph():
    """Copying a hand-built loop graph keeps block parameters, scopes and outputs."""
    g = _loop_graph()
    c = g.copy()
    c.lint()
    assert str(c) == str(g)
    assert c.outputs[0] is not g.outputs[0]


def test_copy_with_opaque_graph_attribute():
    """A graph whose node has a `<Graph>` attribute read from text can be copied."""
    text = ("graph(%x : Tensor):\n  %1 : Tensor = aten::foo[g=<Graph>](%x)\n"
            "  return (%1)\n")
    assert str(parse_ir(text).copy()) == text


def test_opaque_subgraph_attribute_prints_or_is_rejected():
    """`aten::foo[Subgraph=<Graph>]` either raises IRParseError or prints back as read."""
    text = ("graph(%x : Tensor):\n  %1 : Tensor = aten::foo[Subgraph=<Graph>](%x)\n"
            "  return (%1)\n")
    try:
        g = parse_ir(text)
    except IRParseError:
        return
    assert str(g) == text


# ---- names

def test_setting_a_taken_name_renames_the_previous_owner():
    """As PyTorch's setDebugName: the old owner of `x` becomes `x.1`, then `x.3`, ..."""
    g = Graph()
    a = g.add_input("x")
    b = g.add_input("x")
    assert (a.debug_name, b.debug_name) == ("x.1", "x")
    c = g.add_input("x")
    assert (a.debug_name, b.debug_name, c.debug_name) == ("x.1", "x.3", "x")
    d = g.add_input("x.1")
    assert (a.debug_name, d.debug_name) == ("x.5", "x.1")
    g.lint()
    assert str(g) == ("graph(%x.5 : Tensor,\n      %x.3 : Tensor,\n      %x : Tensor,\n"
                      "      %x.1 : Tensor):\n  return ()\n")


def test_numeric_names_rejected_and_empty_name_clears():
    """Purely numeric names raise ValueError; an empty name falls back to the number."""
    g = Graph()
    v = g.add_input("x")
    with pytest.raises(ValueError):
        v.set_debug_name("12")
    assert v.name == "x"
    v.set_debug_name("")
    assert v.debug_name is None and v.name == str(v.unique)
    w = g.add_input("x")  # the name is free again: nothing is renamed
    assert w.name == "x" and v.name == "0"
    g.lint()


def test_renaming_frees_the_old_name():
    """After renaming `a` to `b`, the name `a` can be taken without renaming anything."""
    g = Graph()
    v = g.add_input("a")
    v.set_debug_name("b")
    w = g.add_input("a")
    assert (v.name, w.name) == ("b", "a")
    g.lint()


# ---- scopes

def test_scopes_push_pop_and_print():
    """Nodes take the current scope; `a/b` prints as `, scope: a/b` and scopes are interned."""
    g = Graph()
    x = g.add_input("x")
    outer = g.push_scope("a")
    inner = g.push_scope("b")
    n1 = g.insert("aten::relu", [x])
    g.pop_scope()
    n2 = g.insert("aten::neg", [x])
    g.pop_scope()
    n3 = g.insert("aten::abs", [x])
    with pytest.raises(AssertionError):
        g.pop_scope()
    assert n1.scope is inner and n2.scope is outer and n3.scope.is_root()
    assert g.push_scope("a") is outer
    g.pop_scope()
    assert g.scope_root.lookup("a/b") is inner
    n1.source = SourceLocation("/m.py", 7, 9)
    text = str(g)
    assert "= aten::relu(%x), scope: a/b # /m.py:7:9\n" in text
    assert "= aten::neg(%x), scope: a\n" in text
    assert "= aten::abs(%x)\n" in text
    assert g.str(print_scopes=False).count("scope:") == 0
    assert "# /m.py" not in g.str(print_source_locations=False)
    assert str(parse_ir(text)) == text


# ---- types

@pytest.mark.parametrize("t,text", [
    (TENSOR, "Tensor"),
    (TensorType("Float", (2, None), (1, 2), False, "cuda:1"),
     "Float(2, *, strides=[1, 2], requires_grad=0, device=cuda:1)"),
    (TensorType("Float", (2, None), (None, 2), True), "Float(2, *, requires_grad=1)"),
    (TensorType("Long", ()), "Long()"),
    (TensorType("Double", None, None, None, "cpu"), "DoubleTensor(device=cpu)"),
    (TensorType(None, None, None, True), "Tensor(requires_grad=1)"),
    (OptionalType(ListType(INT)), "int[]?"),
    (ListType(OptionalType(TENSOR)), "Tensor?[]"),
    (TupleType((TENSOR, INT)), "(Tensor, int)"),
    (TupleType(()), "()"),
    (DictType(STR, TENSOR), "Dict(str, Tensor)"),
    (FutureType(TENSOR), "Future[Tensor]"),
    (GenericType("Union", (INT, NONE)), "Union(int, NoneType)"),
    (TupleType((TENSOR, TENSOR), ("values", "indices")),
     "NamedTuple(values : Tensor, indices : Tensor)"),
    (ClassType("__torch__.models.MyModule"), "__torch__.models.MyModule"),
])
def test_types_print_like_pytorch(t, text):
    """Types print as PyTorch's operator<< does, and the printed text parses back."""
    assert str(t) == text
    g = Graph()
    g.add_input("x", t)
    printed = str(g)
    assert str(parse_ir(printed).inputs[0].type) == text


def test_parsed_types_are_structural():
    """Parsing a printed type gives an equal (and hashable) type object."""
    t = TensorType("Float", (2, None), (1, 2), False, "cuda:1")
    g = parse_ir(f"graph(%x : {t}, %y : Dict(str, Tensor)):\n  return ()\n")
    assert g.inputs[0].type == t and hash(g.inputs[0].type) == hash(t)
    assert g.inputs[1].type == DictType(STR, TENSOR)


# ---- attributes

@pytest.mark.parametrize("kind,value,text", [
    ("f", 1.0, "1."),
    ("f", -0.0, "-0."),
    ("f", 0.1, "0.10000000000000001"),
    ("f", 1e-05, "1.0000000000000001e-05"),
    ("f", 1e10, "10000000000"),
    ("f", float("inf"), "inf"),
    ("f", float("-inf"), "-inf"),
    ("i", 3, "3"),
    ("i", -7, "-7"),
    ("s", "it's\n\"ok\"\t\\", r'"it\'s\n\"ok\"\t\\"'),
    ("s", "\x01", r'"\001"'),
    ("is", (1, -2, 3), "[1, -2, 3]"),
    ("is", (), "[]"),
    ("fs", (1.0, 0.5), "[1., 0.5]"),
    ("ss", ("a", "b'"), r'["a", "b\'"]'),
    ("t", TensorData(np.array(0.5, dtype=np.float32)), "{0.5}"),
    ("t", TensorData(np.array([3], dtype=np.int64)), "{3}"),
    ("t", TensorData(np.array(True)), "{1}"),
    # up to ten elements at::Tensor's printout with newlines as spaces (torch 2.13), else opaque
    ("t", TensorData(np.zeros((2, 2))), " 0  0  0  0 [ CPUDoubleType{2,2} ]"),
    ("t", TensorData(np.zeros((11,), np.float32)), "<Tensor>"),
    ("ty", TupleType((TENSOR, INT)), "(Tensor, int)"),
    ("tys", (INT, FLOAT), "[int, float]"),
    ("ival", [1, 2], "[1, 2]"),
    ("ival", None, "None"),
    ("ival", True, "True"),
])
def test_attributes_print_like_pytorch(kind, value, text):
    """Attribute values print as Node::printAttributes does."""
    assert format_attribute(kind, value) == text


def test_quote_string_escapes():
    """Quotes, backslashes and control characters are escaped, `'` as `\\'`."""
    assert quote_string("a'b\n") == r'"a\'b\n"'
    assert quote_string("\a\b\f\r\v") == r'"\a\b\f\r\v"'
    assert format_double(2.5) == "2.5"


def test_constants_print_and_reparse_their_values():
    """insert_constant types and attributes constants as PyTorch does; the text round-trips."""
    g = Graph()
    values = [1.0, 0.1, 1e-5, 3, True, "it's\n", [1, 2], [], [0.5, 1.0], ["a", "b"], None,
              Device("cuda:1"), np.array(0.5, dtype=np.float32)]
    for v in values:
        g.register_output(g.insert_constant(v))
    text = str(g)
    assert text.splitlines()[1:-1] == [
        "  %0 : float = prim::Constant[value=1.]()",
        "  %1 : float = prim::Constant[value=0.10000000000000001]()",
        "  %2 : float = prim::Constant[value=1.0000000000000001e-05]()",
        "  %3 : int = prim::Constant[value=3]()",
        "  %4 : bool = prim::Constant[value=1]()",
        "  %5 : str = prim::Constant[value=\"it\\'s\\n\"]()",
        "  %6 : int[] = prim::Constant[value=[1, 2]]()",
        "  %7 : int[] = prim::Constant[value=[]]()",
        "  %8 : float[] = prim::Constant[value=[0.5, 1.]]()",
        "  %9 : str[] = prim::Constant[value=[\"a\", \"b\"]]()",
        "  %10 : NoneType = prim::Constant()",
        "  %11 : Device = prim::Constant[value=\"cuda:1\"]()",
        "  %12 : Float(requires_grad=0, device=cpu) = prim::Constant[value={0.5}]()",
    ]
    parsed = parse_ir(text)
    parsed.lint()
    assert str(parsed) == text
    assert [n.attr("value") for n in list(parsed.nodes())[:4]] == [1.0, 0.1, 1e-5, 3]
    assert list(parsed.nodes())[5].attr("value") == "it's\n"


@pytest.mark.parametrize("value,text", [(1 + 2j, "1.+2.j"), (-1.5 - 0.25j, "-1.5-0.25j"),
                                        (1e-05 + 1j, "1.0000000000000001e-05+1.j")])
def test_complex_constant_round_trips(value, text):
    """A complex constant prints as PyTorch's printComplex does and parses back."""
    g = Graph()
    g.register_output(g.insert_constant(value))
    printed = str(g)
    assert f"[value={text}]" in printed
    parsed = parse_ir(printed)
    assert next(parsed.nodes()).attr("value") == value
    assert str(parsed) == printed


def test_complex_negative_zero_imaginary_prints_like_pytorch():
    """complex(0.5, -0.0) prints `0.5+0.j`, as PyTorch's printComplex does."""
    assert format_attribute("c", complex(0.5, -0.0)) == "0.5+0.j"


@pytest.mark.parametrize("value", [1e20 + 1j, complex(float("inf"), 1.0)],
                         ids=["exponent", "inf"])
def test_complex_constant_with_exponent_or_inf_round_trips(value):
    """Complex constants whose parts print without a decimal point parse back."""
    g = Graph()
    g.register_output(g.insert_constant(value))
    printed = str(g)
    assert str(parse_ir(printed)) == printed


def test_complex_list_attribute_round_trips():
    """A `cs` attribute prints as `[1.+2.j, 3.-1.j]` and parses back."""
    g = Graph()
    n = g.insert("aten::foo", [g.add_input("x")])
    n.set_attr("v", "cs", (1 + 2j, 3 - 1j))
    g.register_output(n.output)
    printed = str(g)
    assert "[v=[1.+2.j, 3.-1.j]]" in printed
    assert str(parse_ir(printed)) == printed


def test_non_ascii_string_prints_like_pytorch():
    """`é` (bytes C3 A9) prints with PyTorch's signed-char escapes and that text reads back."""
    text = ("graph():\n  %1 : str = prim::Constant[value=\"\\0)+\\/.)\"]()\n"
            "  return (%1)\n")
    g = parse_ir(text)
    assert next(g.nodes()).attr("value") == "é"
    assert str(g) == text
    assert quote_string("é\x01") == r'"\0)+\/.)\001"'


# ---- the verifier

def test_lint_catches_use_before_definition():
    """A node using a value defined later in the same block fails lint."""
    g = Graph()
    x = g.add_input("x")
    a = g.insert("aten::relu", [x])
    b = g.insert("aten::neg", [a.output])
    a.move_after(b)
    with pytest.raises(IRVerificationError, match="not defined"):
        g.lint()


def test_lint_catches_value_used_outside_its_block():
    """A value defined inside block0 of an If cannot be used after the If."""
    g, v = _if_graph()
    v["e"].replace_input(0, v["b"].output)
    with pytest.raises(IRVerificationError, match="not defined"):
        g.lint()


def test_lint_catches_value_used_in_sibling_block():
    """A value defined in block0 cannot be returned from block1."""
    g, v = _if_graph()
    v["b1"].return_node.replace_input(0, v["b"].output)
    with pytest.raises(IRVerificationError, match="not defined"):
        g.lint()


def test_lint_catches_duplicate_names():
    """Two values carrying the same debug name (bypassing set_debug_name) fail lint."""
    g = Graph()
    x = g.add_input("x")
    y = g.add_input("y")
    y.debug_name = x.debug_name
    with pytest.raises(IRVerificationError, match="twice"):
        g.lint()


def test_lint_catches_stale_use_list():
    """An input list edited without updating use lists fails lint."""
    g = Graph()
    x = g.add_input("x")
    y = g.add_input("y")
    n = g.insert("aten::relu", [x])
    n.inputs[0] = y
    with pytest.raises(IRVerificationError, match="uses"):
        g.lint()


def test_lint_checks_subgraphs():
    """A broken subgraph of a group node fails the outer graph's lint."""
    g = parse_ir(SECTION_TEXT)
    sub = next(g.nodes()).subgraph
    sub.lint()
    g.lint()
    sub.register_output(g.inputs[0])  # a value of another graph
    with pytest.raises(IRVerificationError):
        g.lint()


def test_one_node_cloner_takes_a_dict_or_a_function():
    """`Graph.clone_node` (PyTorch's createClone) maps inputs through a dict (and records the
    copy's outputs there) or through a function; within one graph a cloned name takes the
    name and the original becomes `name.1`, as PyTorch's setDebugName does."""
    from irjit import parse_ir as parse
    g = parse("graph(%x : Tensor, %w : Tensor):\n  %y : Tensor = aten::relu(%x)\n  return (%y)\n")
    relu = next(iter(g.nodes()))
    mapping = {g.inputs[0]: g.inputs[1]}
    c = g.clone_node(relu, mapping).insert_after(relu)
    assert c.inputs == [g.inputs[1]] and mapping[relu.output] is c.output
    assert (c.output.name, relu.output.name) == ("y", "y.1")
    d = g.clone_node(relu, lambda v: g.inputs[0]).insert_after(c)
    assert d.inputs == [g.inputs[0]] and d.output.name == "y.1" != relu.output.name
    g.lint()
