"""Every graph PyTorch printed parses, lints and prints back byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from irjit import parse_ir

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
ROUNDTRIP = FIXTURES / "roundtrip"
GENERATED = FIXTURES / "generated" / "roundtrip"


def _params(folder: Path, prefix: str = "") -> list:
    if not folder.is_dir():
        return []
    return [pytest.param(path, id=prefix + path.name) for path in sorted(folder.glob("*.ir"))]


def _read(path: Path) -> str:
    # bytes decoded without newline translation, so "byte-identical" means exactly that
    return path.read_bytes().decode("utf-8")


FIXTURE_PARAMS = _params(ROUNDTRIP)
GENERATED_PARAMS = _params(GENERATED, "generated/")


def test_fixture_copies_match_manifest():
    """The copied fixture folder holds exactly the files its manifest lists."""
    listed = {entry["file"] for entry in json.loads((ROUNDTRIP / "manifest.json").read_text())}
    present = {p.name for p in ROUNDTRIP.glob("*.ir")}
    assert listed == present
    assert len(present) > 100


@pytest.mark.parametrize("path", FIXTURE_PARAMS + GENERATED_PARAMS)
def test_parse_lint_reprint_identical(path: Path):
    """Parsing, linting and printing gives back the exact text PyTorch printed."""
    text = _read(path)
    graph = parse_ir(text, str(path))
    graph.lint()
    assert str(graph) == text


@pytest.mark.parametrize("path", FIXTURE_PARAMS)
def test_copy_prints_parseable_graph(path: Path):
    """A `graph.copy()` prints text that parses and lints, with the same nodes and signature."""
    graph = parse_ir(_read(path), str(path))
    copy = graph.copy()
    copy.lint()
    again = parse_ir(str(copy), "<copy>")
    again.lint()
    assert [n.kind for n in again.walk()] == [n.kind for n in graph.walk()]
    assert [str(v.type) for v in again.inputs] == [str(v.type) for v in graph.inputs]
    assert [str(v.type) for v in again.outputs] == [str(v.type) for v in graph.outputs]


def test_copy_of_graph_with_sections_keeps_subgraphs():
    """Copying a graph with a `with prim::DifferentiableGraph_0` section re-prints the section."""
    paths = [p for p in ROUNDTRIP.glob("*.ir") if "with prim::DifferentiableGraph_0" in _read(p)]
    assert paths, "expected at least one fixture with a DifferentiableGraph section"
    for path in paths:
        text = _read(path)
        copied = str(parse_ir(text, str(path)).copy())
        assert copied.count("\nwith ") == text.count("\nwith ")
