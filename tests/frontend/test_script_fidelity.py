"""irjit.jit.script against PyTorch 2.13 on the same functions (tools/fixturegen/script_cases.py;
fixtures by tools/fixturegen/script_pairs.py): the same node kinds in the same order, and
`.code` equal modulo names. Modules: test_model_pairs.py."""

from __future__ import annotations

import pytest

import irjit
import irjit.jit

from .script_support import FIXTURES, canonical_code, load_cases, node_kinds

CASES = load_cases().CASES


def _scripted(case):
    return irjit.jit.script(case)


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_graph_has_pytorchs_node_kinds_in_order(fn):
    want = irjit.parse_ir((FIXTURES / f"{fn.__name__}.graph.ir").read_text())
    got = _scripted(fn).graph
    assert node_kinds(got) == node_kinds(want), f"{got}\n---- PyTorch:\n{want}"


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_code_matches_pytorchs_modulo_names(fn):
    want = (FIXTURES / f"{fn.__name__}.code").read_text()
    got = _scripted(fn).code
    assert canonical_code(got) == canonical_code(want), f"{got}\n---- PyTorch:\n{want}"


def test_at_least_twenty_functions_are_compared():
    assert len(load_cases().CASES) >= 20


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_source_comments_give_pytorchs_line_and_column(fn):
    want = irjit.parse_ir((FIXTURES / f"{fn.__name__}.graph.ir").read_text())
    got = _scripted(fn).graph
    for mine, theirs in zip(got.walk(), want.walk()):
        if theirs.kind == "prim::Constant":
            continue  # pooled constants keep the location of whichever copy came first
        if theirs.source is not None and not theirs.source.filename.endswith("script_cases.py"):
            continue  # ops PyTorch compiles from its own TorchScript builtins (`x.shape`, `//`)
        where = None if theirs.source is None else (theirs.source.line, theirs.source.col)
        assert where == (None if mine.source is None else (mine.source.line, mine.source.col)), \
            f"{mine.kind}: {mine.source} vs PyTorch's {theirs.source}"
