"""Property tests: random graphs survive print -> parse -> print, and mutated fixture text
never makes parse_ir raise anything but IRParseError."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from irjit import IRParseError, parse_ir
from irjit.compiler.ir import (ANY, BOOL, DEVICE, FLOAT, INT, NONE, NUMBER, STR, TENSOR, ClassType,
                         DictType, FutureType, GenericType, Graph, ListType, OptionalType,
                         SourceLocation, TensorData, TensorType, TupleType)
from irjit.compiler.ir.attributes import AnnotatedValue

ROUNDTRIP = Path(__file__).resolve().parents[1] / "fixtures" / "roundtrip"

FAST = settings(max_examples=100, deadline=None, derandomize=True, database=None,
                report_multiple_bugs=False,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# ---- types

# Scalar types whose unranked form (`QInt8Tensor`) the type grammar does not know are only
# generated ranked; see test_unranked_quantized_tensor_type_round_trips below.
RANKED_ONLY = {"QInt8", "QUInt8", "QInt32", "QUInt4x2", "QUInt2x4", "Float8_e5m2",
               "Float8_e4m3fn", "Float8_e5m2fnuz", "Float8_e4m3fnuz", "UInt16", "UInt32",
               "UInt64"}
SCALAR_TYPES = ["Float", "Double", "Half", "BFloat16", "Long", "Int", "Short", "Char", "Byte",
                "Bool", "ComplexFloat", "ComplexDouble", "ComplexHalf", *sorted(RANKED_ONLY)]
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_"
_DIGITS = "0123456789"


def _word(first: str, rest: str, max_rest: int):
    """Names from plain character strategies (much cheaper to draw than from_regex)."""
    return st.builds(lambda a, b: a + b, st.sampled_from(first), st.text(rest, max_size=max_rest))


IDENT = _word(_LETTERS, _LETTERS + _DIGITS, 7)


@st.composite
def tensor_types(draw):
    scalar = draw(st.one_of(st.none(), st.sampled_from(SCALAR_TYPES)))
    sizes = strides = None
    if scalar in RANKED_ONLY or draw(st.booleans()):
        sizes = tuple(draw(st.lists(st.one_of(st.none(), st.integers(0, 4096)), max_size=4)))
        if sizes and draw(st.booleans()):
            strides = tuple(draw(st.lists(st.integers(0, 1 << 20), min_size=len(sizes),
                                          max_size=len(sizes))))
    requires_grad = draw(st.one_of(st.none(), st.booleans()))
    device = draw(st.one_of(st.none(), st.sampled_from(["cpu", "cuda:0", "cuda:1", "mps"])))
    return TensorType(scalar, sizes, strides, requires_grad, device)


LEAF_TYPES = st.one_of(
    tensor_types(),
    st.sampled_from([TENSOR, INT, FLOAT, BOOL, STR, NONE, DEVICE, NUMBER, ANY]),
    st.builds(lambda a, b: ClassType(f"__torch__.{a}.{b}"), IDENT, IDENT),
)


@st.composite
def types(draw, depth: int = 2):
    """Any value type: leaves, or lists, optionals, tuples, dicts, futures, unions and
    NamedTuples nested up to `depth` deep."""
    shape = draw(st.integers(0, 9)) if depth > 0 else 9
    if shape >= 7:
        return draw(LEAF_TYPES)
    inner = types(depth - 1)
    if shape == 0:
        return ListType(draw(inner))
    if shape == 1:
        return OptionalType(draw(inner))
    if shape == 2:
        return TupleType(tuple(draw(st.lists(inner, max_size=3))))
    if shape == 3:
        return DictType(draw(st.sampled_from([STR, INT, TENSOR])), draw(inner))
    if shape == 4:
        return FutureType(draw(inner))
    if shape == 5:
        return GenericType("Union", tuple(draw(st.lists(inner, min_size=2, max_size=3))))
    names = draw(st.lists(IDENT, min_size=1, max_size=3, unique=True))
    return TupleType(tuple(draw(inner) for _ in names), tuple(names))


TYPES = types()
# attribute lists are matched with brackets nested at most four deep (grammar/torchscript.lark)
ATTR_TYPES = types(1)
# value types: mostly the common ones, sometimes anything
VALUE_TYPES = st.one_of(st.sampled_from([TENSOR, INT]), TYPES)

# ---- attributes

FLOATS = st.floats(allow_nan=True, allow_infinity=True)
STRINGS = st.text(max_size=8)
COMPLEX_PARTS = st.floats(-1e9, 1e9, allow_nan=False)


def _scalar_tensor(draw):
    kind = draw(st.sampled_from(["float32", "float64", "int64", "bool", "many"]))
    if kind == "many":
        return TensorData(np.zeros(draw(st.integers(2, 4)), dtype=np.float32))
    if kind == "bool":
        return TensorData(np.array(draw(st.booleans())))
    if kind == "int64":
        return TensorData(np.array(draw(st.integers(-2**63, 2**63 - 1)), dtype=np.int64))
    value = draw(st.floats(allow_nan=True, allow_infinity=True, width=32 if kind == "float32"
                           else 64))
    return TensorData(np.array(value, dtype=kind))


# tuple constants: ASCII strings and finite floats only, see test_tuple_constant_edge_cases
TUPLE_ITEMS = st.one_of(st.none(), st.booleans(), st.integers(-2**63, 2**63 - 1),
                        st.floats(allow_nan=False, allow_infinity=False),
                        st.text(st.characters(max_codepoint=127), max_size=5))
IVALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-2**63, 2**63 - 1), FLOATS, STRINGS,
    st.lists(st.integers(-100, 100), max_size=3),
    st.lists(TUPLE_ITEMS, min_size=1, max_size=3).map(tuple),
    st.just(AnnotatedValue("annotate(List[int], [])", [])),
)


@st.composite
def attribute(draw):
    kind = draw(st.sampled_from(["i", "f", "c", "s", "is", "fs", "ss", "t", "ts", "g", "gs",
                                 "ty", "tys", "ival"]))
    if kind == "c":  # parts below 1e10 and no -0.0 imaginary part: see test_ir_core's xfails
        value = complex(draw(COMPLEX_PARTS), draw(COMPLEX_PARTS.map(lambda x: x or 0.0)))
    elif kind == "i":
        value = draw(st.integers(-2**63, 2**63 - 1))
    elif kind == "f":
        value = draw(FLOATS)
    elif kind == "s":
        value = draw(STRINGS)
    elif kind == "is":
        value = tuple(draw(st.lists(st.integers(-2**63, 2**63 - 1), max_size=4)))
    elif kind == "fs":
        value = tuple(draw(st.lists(FLOATS, min_size=1, max_size=4)))
    elif kind == "ss":
        value = tuple(draw(st.lists(STRINGS, min_size=1, max_size=3)))
    elif kind == "t":
        value = _scalar_tensor(draw)
    elif kind == "ts":
        value = (TensorData(np.zeros(2)),)
    elif kind == "g":
        value = Graph()
    elif kind == "gs":
        value = (Graph(),)
    elif kind == "ty":
        value = draw(ATTR_TYPES)
    elif kind == "tys":
        value = tuple(draw(st.lists(ATTR_TYPES, min_size=1, max_size=3)))
    else:
        value = draw(IVALUES)
    return kind, value


# ---- graphs

NAMESPACES = st.sampled_from(["aten", "prim", "quantized", "my_ops", "_caffe2"])
# kinds ending in `_<number>` are reserved for group nodes (`prim::FusionGroup_0`)
OP_NAMES = _word(_LETTERS, _LETTERS + _DIGITS, 7).map(
    lambda s: s + "x" if re.search(r"_[0-9]+$", s) else s)
GROUP_KINDS = ["prim::DifferentiableGraph", "prim::FusionGroup", "prim::TensorExprGroup",
               "prim::CudaFusionGroup"]
VALUE_NAMES = st.builds(lambda a, b: a + b, _word("abcxyz_", "abcxyz0123456789_", 3),
                        st.sampled_from(["", "", ".1", ".2", ".10"]))
SCOPE_PATHS = st.lists(_word(_LETTERS, _LETTERS + _DIGITS + ".", 8), max_size=3).map("/".join)
SOURCES = st.one_of(st.none(), st.builds(
    SourceLocation, st.sampled_from(["/home/user/models.py", "<string>", "/a b/c.py",
                                     "/usr/lib/python3.11/site-packages/torch/nn/x.py"]),
    st.integers(0, 99999), st.integers(0, 999)))


class _Builder:
    """Builds a random graph through the IR API, drawing every choice from hypothesis."""

    def __init__(self, draw, group_depth: int):
        self.draw = draw
        self.group_depth = group_depth

    def new_value_name(self, v) -> None:
        name = self.draw(st.one_of(st.none(), VALUE_NAMES))
        if name is not None:
            v.set_debug_name(name)

    def graph(self) -> Graph:
        draw = self.draw
        g = Graph()
        for _ in range(draw(st.integers(0, 3))):
            self.new_value_name(g.block.add_input(draw(VALUE_TYPES)))
        visible = self.block(g, g.block, list(g.inputs), 0)
        for v in draw(st.lists(st.sampled_from(visible), max_size=3)) if visible else []:
            g.register_output(v)
        return g

    def block(self, g: Graph, block, visible: list, level: int) -> list:
        draw = self.draw
        visible = list(visible)
        for _ in range(draw(st.integers(0, 4 if level == 0 else 2))):
            visible += self.node(g, block, visible, level)
        return visible

    def node(self, g: Graph, block, visible: list, level: int) -> list:
        draw = self.draw
        group = self.group_depth < 2 and draw(st.integers(0, 9 + 10 * self.group_depth)) == 0
        if group:
            kind = draw(st.sampled_from(GROUP_KINDS))
        else:
            kind = draw(NAMESPACES) + "::" + draw(OP_NAMES)
        n = g.create(kind, num_outputs=0)
        for v in draw(st.lists(st.sampled_from(visible), max_size=4)) if visible else []:
            n.add_input(v)
        for name, (akind, value) in draw(st.dictionaries(
                IDENT, attribute(), max_size=2)).items():
            if name == "Subgraph":
                continue
            n.set_attr(name, akind, value)
        if group:
            n.set_attr("Subgraph", "g", _Builder(draw, self.group_depth + 1).graph())
        n.scope = g.scope_root.lookup(draw(SCOPE_PATHS))
        n.source = draw(SOURCES)
        for _ in range(draw(st.integers(0, 3))):
            self.new_value_name(n.add_output(draw(VALUE_TYPES)))
        block.append_node(n)
        if level < 2 and not group:
            for _ in range(draw(st.sampled_from([0, 0, 0, 1, 2]))):
                b = n.add_block()
                for _ in range(draw(st.integers(0, 2))):
                    self.new_value_name(b.add_input(draw(VALUE_TYPES)))
                inner = self.block(g, b, visible + list(b.inputs), level + 1)
                for v in draw(st.lists(st.sampled_from(inner), max_size=2)) if inner else []:
                    b.register_output(v)
        return list(n.outputs)


@st.composite
def graphs(draw):
    return _Builder(draw, 0).graph()


@settings(FAST, max_examples=60)
@given(graphs())
def test_random_graph_print_parse_print(g):
    """A random graph lints; its text parses, lints and re-prints identically, as does its copy."""
    g.lint()
    text = str(g)
    parsed = parse_ir(text, "<random>")
    parsed.lint()
    assert str(parsed) == text
    copy = g.copy()
    copy.lint()
    assert str(copy) == text


@settings(FAST, max_examples=150)
@given(st.lists(st.tuples(IDENT, attribute()), min_size=1, max_size=4, unique_by=lambda a: a[0]),
       st.sampled_from(["aten::foo", "prim::Constant", "prim::FusionGroup"]))
def test_random_attributes_print_parse_print(attrs, kind):
    """A node with random attributes of every printable kind prints, parses and re-prints alike."""
    g = Graph()
    n = g.insert(kind, [g.add_input("x")])
    for name, (akind, value) in attrs:
        if name != "Subgraph":
            n.set_attr(name, akind, value)
    g.register_output(n.output)
    text = str(g)
    parsed = parse_ir(text)
    parsed.lint()
    assert str(parsed) == text


@FAST
@given(TYPES)
def test_random_type_text_parses_to_equal_type(t):
    """Every generated type prints as text that parses back to an equal type."""
    g = Graph()
    g.add_input("x", t)
    parsed = parse_ir(str(g)).inputs[0].type
    assert str(parsed) == str(t)


@pytest.mark.parametrize("value", [("é",), (float("inf"),), (float("nan"), 1)],
                         ids=["non_ascii", "inf", "nan"])
def test_tuple_constant_edge_cases(value):
    """Tuple constants print as PyTorch's IValue printer does and parse back."""
    g = Graph()
    n = g.insert("prim::Constant", [], output_types=[TupleType(tuple(ANY for _ in value))])
    n.set_attr("value", "ival", value)
    g.register_output(n.output)
    text = str(g)
    assert str(parse_ir(text)) == text


def test_unranked_quantized_tensor_type_round_trips():
    """An unranked tensor type of every scalar type, with a flag, prints and parses back."""
    for scalar in sorted(RANKED_ONLY):
        t = TensorType(scalar, None, None, False)
        g = Graph()
        g.add_input("x", t)
        assert str(parse_ir(str(g)).inputs[0].type) == str(t)


# ---- mutated fixture text

MUTATION_ALPHABET = "%():,=[]{}<>-#!?*./\\\n \t\"'_0123456789aeTFxgb^;é"
TOKENS = ["%x", "%1", "(", ")", "[", "]", "{", "}", ":", ",", "=", "->", "return", "with ",
          "graph(", "block0():", "block1():", "prim::If", "prim::DifferentiableGraph_0",
          "<Graph>", "<Tensor>", "Tensor", "Float(", "int[]", "?", "!", "*", "strides=[",
          "requires_grad=", "device=", "Dict(", "Future[", "NamedTuple(", "annotate(", "\"",
          "\\", "1.", "inf", "#", ", scope: ", "\n", "  ", ";", "^", "[Undefined]", "{0.5}",
          "Enum<", "None", "__torch__.a.B", "%", ".", "9" * 30]


def _fixture_texts() -> list[str]:
    """The smallest fixtures showing each feature: blocks, sections, scopes, attributes."""
    texts = sorted((p.read_text() for p in ROUNDTRIP.glob("*.ir")), key=len)
    chosen: list[str] = []
    for feature in ("block0", "\nwith ", "scope:", "[value=", "requires_grad=", "prim::profile"):
        chosen += [t for t in texts if feature in t and t not in chosen][:4]
    return chosen


FIXTURE_TEXTS = _fixture_texts()


@st.composite
def mutated_text(draw):
    text = draw(st.sampled_from(FIXTURE_TEXTS))
    for _ in range(draw(st.integers(1, 3))):
        if not text:
            break
        op = draw(st.sampled_from(["delete", "insert", "replace", "truncate", "token",
                                   "drop_line", "dup_line", "swap_lines", "cut_line"]))
        i = draw(st.integers(0, len(text) - 1))
        if op == "delete":
            text = text[:i] + text[i + draw(st.integers(1, 8)):]
        elif op == "insert":
            text = text[:i] + draw(st.text(MUTATION_ALPHABET, min_size=1, max_size=4)) + text[i:]
        elif op == "replace":
            text = text[:i] + draw(st.sampled_from(MUTATION_ALPHABET)) + text[i + 1:]
        elif op == "truncate":
            text = text[:i]
        elif op == "token":
            pieces = re.findall(r"\w+|\s+|.", text)
            k = draw(st.integers(0, len(pieces) - 1))
            pieces[k] = draw(st.sampled_from(TOKENS))
            text = "".join(pieces)
        else:
            lines = text.split("\n")
            k = draw(st.integers(0, len(lines) - 1))
            m = draw(st.integers(0, len(lines) - 1))
            if op == "drop_line":
                del lines[k]
            elif op == "dup_line":
                lines.insert(k, lines[m])
            elif op == "swap_lines":
                lines[k], lines[m] = lines[m], lines[k]
            else:
                lines[k] = lines[k][:draw(st.integers(0, len(lines[k])))]
            text = "\n".join(lines)
    return text


def test_mutation_sources_exist():
    """The mutation test has varied fixture texts to start from."""
    assert len(FIXTURE_TEXTS) >= 10
    assert any("block0" in t for t in FIXTURE_TEXTS)
    assert any("\nwith " in t for t in FIXTURE_TEXTS)


@settings(FAST, max_examples=300)
@given(mutated_text())
def test_mutated_text_raises_only_parse_errors(text):
    """parse_ir on mutated fixture text raises nothing but a located IRParseError; what does
    parse is a valid graph whose printout re-parses to the same printout."""
    try:
        g = parse_ir(text, "<mutated>")
    except IRParseError as e:
        assert e.line >= 1 and e.column >= 1
        assert e.reason and "\n" not in e.reason
        return
    g.lint()
    printed = str(g)
    assert str(parse_ir(printed, "<reprinted>")) == printed


# A graph in the 2017 format (PyTorch PR #3016), to mutate.
LEGACY_TEXT = """graph(%1 : Float(1)
      %2 : Float(1)) {
  %3 : Float(1) = Constant[value=<Tensor>](), uses = [%4.i1], scope: Foo;
  %5 : Float(1) = ^Add(False)(%2, %3), uses = [[%6.i1]], scope: Foo;
  %7 : Float(1) = ^Tanh()(%5), uses = [[%0.i0]], scope: Foo;
  return (%7);
}
"""


@settings(FAST, max_examples=100)
@given(st.integers(0, len(LEGACY_TEXT) - 1), st.integers(1, 4),
       st.text(MUTATION_ALPHABET, max_size=3))
def test_mutated_legacy_text_raises_only_parse_errors(i, n, insert):
    """Mutated 2017-format text either parses or raises IRParseError."""
    text = LEGACY_TEXT[:i] + insert + LEGACY_TEXT[i + n:]
    try:
        parse_ir(text, "<legacy>")
    except IRParseError as e:
        assert e.line >= 1 and e.column >= 1
