"""PyTorch 2.13's before/after pairs of the frozen/inference passes (tests/fixtures/passes_frozen,
written by tools/fixturegen/pass_pairs_frozen.py): our pass on torch's before-graph prints
torch's after-graph up to value numbering."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from irjit import parse_ir
from irjit.compiler.passes import all_passes, get_pass

from . import renumber

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "passes_frozen"
PAIRS = json.loads((FIXTURES / "manifest.json").read_text())["pairs"]
IMPLEMENTED = [p for p in PAIRS if p["pass"] in all_passes()]


def test_pairs_cover_the_implemented_passes():
    assert len(IMPLEMENTED) >= 8


@pytest.mark.parametrize("pair", IMPLEMENTED, ids=[f"{p['pass']}:{p['example']}" for p in IMPLEMENTED])
def test_pass_matches_pytorch(pair):
    g = parse_ir((FIXTURES / pair["before"]).read_text())
    changed = get_pass(pair["pass"]).run(g)
    g.lint()
    assert renumber(str(g)) == renumber((FIXTURES / pair["after"]).read_text())
    assert changed == pair["changed"]
