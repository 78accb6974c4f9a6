"""What `torch._C.parse_ir` accepts and PyTorch's own tests write (untyped values, comment
lines, a line break after `graph(`, `None`), and what is not a type, rejected clearly."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from irjit.compiler import parse_ir
from irjit.compiler.ir.constants import constant_value
from irjit.ops.errors import IRParseError
from irjit.ops.types import NONE, TENSOR

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "torch_tests_style"
HAND_WRITTEN = sorted(p for p in CORPUS.glob("*.ir") if not p.name.endswith(".torch.ir"))
_VALUE = re.compile(r"%[A-Za-z0-9_.]+")


def names_in_order(text: str) -> str:
    """`text` with every value renamed by first appearance: PyTorch's parser numbers node
    outputs afresh, irjit keeps their names."""
    mapping: dict[str, str] = {}
    return _VALUE.sub(lambda m: mapping.setdefault(m.group(0), f"%v{len(mapping)}"), text)


@pytest.mark.parametrize("path", HAND_WRITTEN, ids=[p.stem for p in HAND_WRITTEN])
def test_corpus_prints_as_torch_does(path):
    """Each hand-written graph prints as PyTorch 2.13 printed it after parse_ir (up to value
    names), and PyTorch's printout reprints byte-identical."""
    torch_text = path.with_suffix(".torch.ir").read_text()
    ours = str(parse_ir(path.read_text(), str(path)))
    assert names_in_order(ours) == names_in_order(torch_text)
    assert str(parse_ir(torch_text)) == torch_text


def test_corpus_is_not_empty():
    assert len(HAND_WRITTEN) >= 12


def test_untyped_values_are_tensors():
    """`graph(%0)`, `%a = ...` and `%res, %3 = ...` declare Tensors, printed `: Tensor`."""
    g = parse_ir("graph(%0):\n  %a = a::aaa(%0)\n  %res, %3 = foo::mul(%a)\n  return (%res)\n")
    assert g.inputs[0].type == TENSOR
    assert [v.type for n in g.nodes() for v in n.outputs] == [TENSOR] * 3
    assert str(g) == ("graph(%0 : Tensor):\n  %a : Tensor = a::aaa(%0)\n"
                      "  %res : Tensor, %3 : Tensor = foo::mul(%a)\n  return (%res)\n")


def test_untyped_block_parameters():
    g = parse_ir("graph(%n : int, %x):\n  %t : bool = prim::Constant[value=1]()\n"
                 "  %y = prim::Loop(%n, %t, %x)\n    block0(%i : int, %acc):\n"
                 "      -> (%t, %acc)\n  return (%y)\n")
    loop = list(g.nodes())[1]
    assert loop.blocks[0].inputs[1].type == TENSOR


@pytest.mark.parametrize("comment", ["# CHECK: aten::relu", "#CHECK: aten::relu", "#", "  # x"])
def test_comment_lines_between_statements(comment):
    text = (f"{comment}\ngraph(%x : Tensor):\n{comment}\n  %1 : Tensor = aten::relu(%x)\n"
            f"  {comment}\n\n  return (%1)\n{comment}\n")
    assert str(parse_ir(text)) == "graph(%x : Tensor):\n  %1 : Tensor = aten::relu(%x)\n  return (%1)\n"


def test_comment_after_a_node_is_still_its_source_location():
    g = parse_ir("graph(%x : Tensor):\n  %1 : Tensor = aten::relu(%x) # a.py:3:4\n"
                 "  # CHECK: return\n  return (%1)\n")
    assert str(list(g.nodes())[0].source) == "a.py:3:4"


def test_line_break_after_graph_paren():
    """`graph(` may be followed by a line break, and the last parameter by one before `)`."""
    g = parse_ir("\ngraph(\n    %a : Tensor,\n    %b\n):\n  return (%a, %b)")
    assert str(g) == "graph(%a : Tensor,\n      %b : Tensor):\n  return (%a, %b)\n"
    assert str(parse_ir("graph(\n):\n  return ()\n")) == "graph():\n  return ()\n"


def test_none_type_reads_as_nonetype():
    g = parse_ir("graph(%0 : int):\n  %1 : None = prim::Constant()\n"
                 "  %2 : bool = aten::__is__(%0, %1)\n  return (%2)\n")
    assert list(g.nodes())[0].outputs[0].type == NONE
    assert "%1 : NoneType = prim::Constant()" in str(g)


def test_none_attribute_value_is_kept():
    """`[a=None]` is the value None, printed back as `None`."""
    text = "graph():\n   = aten::a[a=None]()\n  return ()\n"
    assert str(parse_ir(text)) == text


def test_bool_list_constant_reads_back_as_bools():
    """PyTorch prints a bool list IValue as `[True, False]`: its elements are the bools."""
    text = "graph():\n  %0 : bool[] = prim::Constant[value=[True, False, True]]()\n  return (%0)\n"
    g = parse_ir(text)
    assert constant_value(list(g.nodes())[0]) == [True, False, True]
    assert str(g) == text


def error_of(text: str) -> IRParseError:
    with pytest.raises(IRParseError) as info:
        parse_ir(text)
    return info.value


@pytest.mark.parametrize("type_text,reason,column", [
    ("Float(-2, 3)", "a size cannot be negative (-2)", 18),
    ("Float(2, 3, device=gpu)", "unknown device type 'gpu'", 31),
    ("Float(2, 3, device=gpu:0)", "unknown device type 'gpu'", 31),
    ("Optional[int]", "'Optional[...]' is Python's spelling; TorchScript IR writes T?", 12),
    ("List[int]", "'List[...]' is Python's spelling; TorchScript IR writes T[]", 12),
    ("Dict[str, int]", "'Dict[...]' is Python's spelling", 12),
    ("Float(2, 3, strides=[*, 1])", "unexpected '*'; expected ']', an integer", 33),
    ("Float(2, 3, strides=[3, -1])", "a stride cannot be negative", 24),
])
def test_not_a_type_is_rejected(type_text, reason, column):
    e = error_of(f"graph(%x : {type_text}):\n  return (%x)\n")
    assert reason in e.reason and (e.line, e.column) == (1, column)


@pytest.mark.parametrize("device", ["cpu", "cuda:1", "mps", "meta", "xpu:0"])
def test_known_device_kinds_are_types(device):
    text = f"graph(%x : Float(2, 3, device={device})):\n  return (%x)\n"
    assert str(parse_ir(text)) == text


@pytest.mark.parametrize("line", ['  %1 : str = prim::Constant[value="abc]()',
                                  '  %1 : str = prim::Constant[value="abc',
                                  '  %1 : str = prim::Constant[value="a\\"bc]()'])
def test_unterminated_string_is_reported_as_such(line):
    e = error_of(f"graph(%x : int):\n{line}\n  return (%1)\n")
    assert e.reason.startswith("unterminated string") and (e.line, e.column) == (2, 35)


_INTERNAL = re.compile(r"__ANON|_NL\b|\b[a-z]+_[a-z_]+\b|\b[A-Z]+_[A-Z_]+\b|\$END")


@pytest.mark.parametrize("text", [
    "graph(%x : int):\n  %1 : int = prim::Constant[value=]()\n  return (%1)\n",
    "graph(%x : (int, )):\n  return (%x)\n",
    "graph(%x : Float(2, 3, foo=[1)):\n  return (%x)\n",
    "graph(%x : int[)):\n  return (%x)\n",
    "graph(%x : Enum<a>[)):\n  return (%x)\n",
    "graph(%x : int):\n  %1 : int = prim::Constant[value=[1,]]()\n  return (%1)\n",
    "graph(%x : int):\n  %1 : int = prim::Constant[value=<Tensor]()\n  return (%1)\n",
    "graph(%x : Float(2, ,3)):\n  return (%x)\n",
    "graph(%x : NamedTuple(a : int, b)):\n  return (%x)\n",
    "graph(%x : int):\n  %1 : int = ^Foo[](%x)\n  return (%1)\n",
    "graph(%x : int):\n  %1 : int = prim::Constant[value=1]\n  return (%1)\n",
    "graph(%x : int) {\n  %1 : int = Foo(%x), uses = [%2.i0;\n  return (%1);\n}\n",
    "# only a comment\n",
])
def test_messages_name_no_grammar_internals(text):
    """Error messages speak of tokens a user writes, never of the grammar's names."""
    reason = error_of(text).reason
    assert not _INTERNAL.search(reason.split(":", 1)[-1] if reason.startswith("bad type") else
                                reason), reason


def test_strides_with_unknown_sizes_are_kept_but_not_a_layout():
    """PyTorch 2.13 prints `Float(*, *, strides=[4, 1])` in dynamic-shape fuser groups: we read it
    and print it back as is, but it is no complete layout, so native code is not specialized on
    those strides (inputs of another shape and stride run natively with the right results)."""
    from pathlib import Path

    import numpy as np

    from irjit.compiler.codegen.lower import tensor_layout
    from irjit.runtime.loader import load

    path = Path(__file__).resolve().parents[1] / "fixtures" / "generated" / "roundtrip" / \
        "0905_dynamic_fn_pointwise_run2.ir"
    text = path.read_text()
    graph = parse_ir(text, str(path))
    assert str(graph) == text
    (group,) = [n for n in graph.walk() if n.kind == "prim::TensorExprGroup"]
    body = group.attr("Subgraph")
    star = [v.type for n in body.nodes() for v in n.outputs if "strides" in str(v.type)]
    assert str(star[0]) == "Float(*, *, strides=[4, 1], requires_grad=0, device=cpu)"
    assert all(t.complete_sizes() is None and tensor_layout(t) is None for t in star)
    rng = np.random.default_rng(0)
    x, y = (rng.standard_normal((3, 5)).astype(np.float32) for _ in range(2))
    want = load(str(body), backend="interp").run(x, y, 3)[0].data
    native = load(str(body), executor="profiling", backend="native")
    for _ in range(3):
        np.testing.assert_allclose(native.run(x, y, 3)[0].data, want, rtol=1e-6)
