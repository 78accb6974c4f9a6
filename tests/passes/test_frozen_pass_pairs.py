"""PyTorch 2.13's before/after pairs of the frozen/inference passes (tests/fixtures/passes_frozen,
written by tools/fixturegen/pass_pairs_frozen.py): our pass on torch's before-graph prints
torch's after-graph up to value numbering, and the tensor constants it folds equal torch's."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from irjit import parse_ir
from irjit.compiler.passes import all_passes, get_pass
from irjit.runtime.loader import attach_constants

from . import renumber

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "passes_frozen"
PAIRS = json.loads((FIXTURES / "manifest.json").read_text())["pairs"]
# lower_graph's before-graph still calls the submodule's method (torch inlines it from the live
# module); tests/passes/test_lower_graph.py checks that pair from the inlined graph instead
IMPLEMENTED = [p for p in PAIRS if p["pass"] in all_passes() and p["pass"] != "lower_graph"]
# a tensor constant's printed value: torch prints small tensors' data, we print `<Tensor>` for
# tensors we compute (their data is compared numerically instead)
_TENSOR_LITERAL = re.compile(r"^(\s*%\S+ : [A-Z][A-Za-z]*\(.*\) = prim::Constant)\[value=.*\]\(\)",
                             re.MULTILINE)


# a name PyTorch derives from a value number (`%17_fused_div`): numbering, like `%17`
_NUMBERED_NAME = re.compile(r"%\d+(_fused_\w+)")


# freezing gives the module a fresh class type (`___torch_mangle_<next>`), a type-registry detail
_SELF_TYPE = re.compile(r"^graph\(%self : \S+,", re.MULTILINE)


def _text(text: str) -> str:
    text = _NUMBERED_NAME.sub(r"%N\1", _TENSOR_LITERAL.sub(r"\1[value=<Tensor>]()", text))
    return renumber(_SELF_TYPE.sub("graph(%self : <module>,", text))


def _constants(pair: dict, side: str) -> dict:
    name = pair.get(f"{side}_constants")
    return dict(np.load(FIXTURES / name)) if name else {}


def run_pair(pair: dict):
    g = parse_ir((FIXTURES / pair["before"]).read_text())
    attach_constants(g, _constants(pair, "before"))
    options = {"params": dict(np.load(FIXTURES / pair["params"]))} if "params" in pair else {}
    changed = get_pass(pair["pass"]).run(g, **options)
    g.lint()
    return g, changed


def test_pairs_cover_the_implemented_passes():
    assert len(IMPLEMENTED) >= 12


@pytest.mark.parametrize("pair", IMPLEMENTED, ids=[f"{p['pass']}:{p['example']}" for p in IMPLEMENTED])
def test_pass_matches_pytorch(pair):
    g, changed = run_pair(pair)
    assert _text(str(g)) == _text((FIXTURES / pair["after"]).read_text())
    assert changed == pair["changed"]
    want = _constants(pair, "after")
    for n in g.walk():
        if n.kind == "prim::Constant" and n.attr_kind("value") == "t" and n.output.name in want:
            np.testing.assert_allclose(n.attr("value").array, want[n.output.name], rtol=1e-5, atol=1e-6)


FOLDING = [p for p in IMPLEMENTED if p["pass"].startswith("fold_frozen")
           or p["pass"] in ("optimize_frozen_graph", "transpose_frozen_linear", "freeze_module")]


@pytest.mark.parametrize("pair", FOLDING, ids=[f"{p['pass']}:{p['example']}" for p in FOLDING])
def test_folding_keeps_the_outputs(pair):
    """The interpreter computes the same outputs before and after the fold (or the freezing)."""
    from irjit.runtime.loader import load
    before_text = (FIXTURES / pair["before"]).read_text()
    consts = _constants(pair, "before")
    x = np.random.default_rng(0).standard_normal(pair["input_shape"]).astype(np.float32)
    params = FIXTURES / pair["params"] if "params" in pair else None
    want = load(before_text, params=params, constants=consts).run(x)
    g, changed = run_pair(pair)
    assert changed
    got = load(g).run(x)
    np.testing.assert_allclose(got[0].data, want[0].data, rtol=1e-4, atol=1e-5)
