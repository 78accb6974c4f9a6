"""Malformed IR raises IRParseError pointing at the offending line and column, and nothing
else."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from irjit import IRParseError, parse_ir

MALFORMED = Path(__file__).resolve().parents[1] / "fixtures" / "malformed"
FILES = sorted(MALFORMED.glob("*.ir"))


def _parse_error(text: str, filename: str = "<test>") -> IRParseError:
    with pytest.raises(IRParseError) as info:
        parse_ir(text, filename)
    return info.value


def _check_well_formed(e: IRParseError, text: str, filename: str) -> None:
    lines = text.splitlines()
    assert e.filename == filename
    assert e.line >= 1 and e.column >= 1
    assert e.reason.strip() and "\n" not in e.reason
    # the line text is the input's line `e.line`; the column is on it or just past its end
    assert e.line_text is not None
    assert e.line <= max(len(lines), 1)
    assert e.line_text == (lines[e.line - 1] if lines else "")
    assert e.column <= len(e.line_text) + 1
    first = str(e).splitlines()[0]
    assert first == f"{filename}:{e.line}:{e.column}: error: {e.reason}"


def test_fixture_copies_match_manifest():
    """The copied folder holds exactly the files its manifest lists."""
    listed = {entry["file"] for entry in json.loads((MALFORMED / "manifest.json").read_text())}
    assert listed == {p.name for p in FILES}
    assert len(FILES) >= 15


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_fixture_raises_located_parse_error(path: Path):
    """Each malformed fixture raises IRParseError with a usable location, reason and line text."""
    text = path.read_bytes().decode("utf-8")
    e = _parse_error(text, path.name)
    _check_well_formed(e, text, path.name)


def test_error_message_has_caret_under_column():
    """`str(error)` shows the offending line with a caret under the column."""
    text = (MALFORMED / "028_bad_shape_bang.ir").read_text()
    e = _parse_error(text, "f.ir")
    first, line, caret = str(e).splitlines()
    assert line == "  %3 : Double(4!, 4, 5) = prim::Constant()"
    assert caret == " " * (e.column - 1) + "^"
    assert line[caret.index("^")] == "!"


# (fixture, line, column, the text at the column, words the reason must contain)
FIXTURE_SPOTS = [
    ("028_bad_shape_bang.ir", 4, 16, "!", ["!"]),
    ("014_use_before_definition.ir", 2, 28, "%2", ["undefined", "%2"]),
    ("041_dict_type_one_arg.ir", 1, 12, "Dict", ["Dict", "2"]),
    ("038_bad_tensor_kwarg.ir", 1, 21, "colour", ["colour"]),
    ("034_unclosed_tensor_type.ir", 1, 23, ":", ["':'"]),
    ("045_attr_missing_name.ir", 2, 29, "=", ["'='"]),
    ("055_arrow_outside_block.ir", 2, 3, "->", ["'->'"]),
    ("011_two_returns.ir", 3, 3, "return", ["'return'"]),
    ("007_graph_without_parens.ir", 1, 6, ":", ["'('"]),
    ("051_attr_nested_list.ir", 2, 30, "[", ["nested"]),
]


@pytest.mark.parametrize("name,line,column,at,words", FIXTURE_SPOTS,
                         ids=[s[0] for s in FIXTURE_SPOTS])
def test_fixture_error_position_and_reason(name, line, column, at, words):
    """Selected fixtures report the exact line:column and a reason naming the problem."""
    e = _parse_error((MALFORMED / name).read_text(), name)
    assert (e.line, e.column) == (line, column)
    assert e.line_text[column - 1:].startswith(at)
    for word in words:
        assert word in e.reason


def test_truncated_input_reports_end_of_input():
    """A file cut off mid-node reports the end of input on its last line."""
    text = (MALFORMED / "001_truncated_mid_node.ir").read_text()
    e = _parse_error(text)
    assert e.line == len(text.splitlines())
    assert e.column == len(text.splitlines()[-1]) + 1
    assert "end of input" in e.reason


def _g(*lines: str) -> str:
    return "\n".join(lines) + "\n"


# (text, line, column, the text at the column, a phrase the reason must contain)
INLINE_CASES = {
    "strides_before_size": (_g("graph(%x : Float(4, strides=[5], 5)):", "  return (%x)"),
                            1, 34, "5)", "unexpected '5'"),
    "strides_wrong_length": (_g("graph(%x : Float(4, 5, strides=[5])):", "  return (%x)"),
                             1, 24, "strides", "one entry per size"),
    "requires_grad_not_bool": (_g("graph(%x : Float(4, requires_grad=2)):", "  return (%x)"),
                               1, 21, "requires_grad", "0 or 1"),
    "kwarg_twice": (_g("graph(%x : Float(4, device=cpu, device=cpu)):", "  return (%x)"),
                    1, 33, "device", "given twice"),
    "scalar_type_without_sizes": (_g("graph(%x : Float):", "  return (%x)"),
                                  1, 17, ")", "expected '('"),
    "attribute_twice": (_g("graph():", "  %1 : int = prim::Constant[value=1, value=2]()",
                           "  return (%1)"), 2, 28, "[value", "given twice"),
    "undefined_return": (_g("graph(%x : Tensor):", "  return (%y)"), 2, 11, "%y", "%y"),
    "value_used_outside_its_block": (_g(
        "graph(%c : bool):",
        "  %1 : int = prim::If(%c)",
        "    block0():",
        "      %2 : int = prim::Constant[value=1]()",
        "      -> (%2)",
        "    block1():",
        "      -> (%2)",
        "  return (%1)"), 7, 11, "%2", "undefined value %2"),
    "value_used_after_its_block": (_g(
        "graph(%c : bool):",
        "   = prim::If(%c)",
        "    block0():",
        "      %2 : int = prim::Constant[value=1]()",
        "      -> ()",
        "  return (%2)"), 6, 11, "%2", "undefined value %2"),
    "blocks_out_of_order": (_g("graph(%c : bool):", "   = prim::If(%c)", "    block1():",
                               "      -> ()", "  return ()"), 3, 5, "block1", "block0"),
    "inconsistent_indentation": (_g("graph(%x : Tensor):", "  %1 : Tensor = aten::relu(%x)",
                                    "   %2 : Tensor = aten::relu(%x)", "  return (%1)"),
                                 3, 4, "%2", "indentation"),
    "section_without_node": (_g("graph(%x : Tensor):", "  return (%x)",
                                "with prim::DifferentiableGraph_0 = graph(%y : Tensor):",
                                "  return (%y)"), 3, 6, "prim::DifferentiableGraph_0",
                             "no node uses"),
    "section_kind_mismatch": (_g("graph(%x : Tensor):",
                                 "  %1 : Tensor = prim::DifferentiableGraph_0(%x)",
                                 "  return (%1)",
                                 "with prim::FusionGroup_0 = graph(%y : Tensor):",
                                 "  return (%y)"), 4, 6, "prim::FusionGroup_0", "line 2"),
    "name_ending_in_dot": (_g("graph(%x. : Tensor):", "  return (%x.)"),
                           1, 7, "%x.", "invalid value name"),
    "bad_scalar_tensor": (_g("graph():", "  %1 : Tensor = prim::Constant[value={abc}]()",
                             "  return (%1)"), 2, 38, "{abc}", "bad tensor value"),
    "trailing_garbage": (_g("graph(%x : Tensor):", "  return (%x)", "foo"),
                         3, 1, "foo", "unexpected"),
}


@pytest.mark.parametrize("case", list(INLINE_CASES))
def test_inline_error_position_and_reason(case):
    """Hand-written malformed texts report the exact line:column and a specific reason."""
    text, line, column, at, phrase = INLINE_CASES[case]
    e = _parse_error(text)
    _check_well_formed(e, text, "<test>")
    assert (e.line, e.column) == (line, column)
    assert e.line_text[column - 1:].startswith(at)
    assert phrase in e.reason


@pytest.mark.parametrize("text", ["", "\n", "   \n", "graph():", "graph():\n", "return ()\n",
                                  "graph(%x : Tensor):\n  return (%x)\x00\n"],
                         ids=["empty", "newline", "blank", "header_only", "header_line",
                              "no_graph", "nul_byte"])
def test_degenerate_inputs_raise_parse_error(text):
    """Empty, blank and truncated inputs raise IRParseError with line and column >= 1."""
    e = _parse_error(text)
    assert e.line >= 1 and e.column >= 1
    assert e.reason.strip() and "\n" not in e.reason


def test_malformed_legacy_format_raises_parse_error():
    """A 2017-format text with a syntax error (no `;`) raises IRParseError, not AttributeError."""
    e = _parse_error(_g("graph(%x : Float(1)) {", "  return (%x)", "}"))
    assert e.line == 2


def test_node_output_used_inside_its_own_block():
    """A node's outputs are not visible inside its blocks: `-> (%1)` within %1's If is an error."""
    e = _parse_error(_g("graph(%c : bool):",
                        "  %1 : int = prim::If(%c)",
                        "    block0():",
                        "      -> (%1)",
                        "    block1():",
                        "      -> (%1)",
                        "  return (%1)"))
    assert (e.line, e.column) == (4, 11)
