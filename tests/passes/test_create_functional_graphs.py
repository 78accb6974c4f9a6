"""create_functional_graphs against PyTorch 2.13's before/after pairs (tests/fixtures/passes);
more cases, checked against torch runs, are goldens in golden/create_functional_graphs."""

from __future__ import annotations

import pytest

from irjit import parse_ir
from irjit.compiler.passes import get_pass

from . import fixture_pairs, pair_ids, run_pair

PAIRS = fixture_pairs("create_functional_graphs")


def test_pairs_exist():
    assert len(PAIRS) == 2


@pytest.mark.parametrize("pair", PAIRS, ids=pair_ids(PAIRS))
def test_pytorch_pairs(pair):
    got, want, changed = run_pair(pair, "create_functional_graphs")
    assert got == want
    assert changed == pair["changed"]


def test_group_of_six_stays_and_five_is_inlined():
    """Groups need six non-constant nodes (PyTorch's minSubgraphSize_)."""
    chain = ["aten::relu", "aten::sigmoid", "aten::tanh", "aten::exp", "aten::neg", "aten::abs"]

    def graph(n):
        lines = ["graph(%x : Tensor):"]
        prev = "%x"
        for i, kind in enumerate(chain[:n]):
            lines.append(f"  %{i + 1} : Tensor = {kind}({prev})")
            prev = f"%{i + 1}"
        lines.append(f"  %out : Tensor = aten::mul({prev}, %x)")
        lines.append("  return (%out)")
        return parse_ir("\n".join(lines) + "\n")

    six, five = graph(6), graph(5)
    assert get_pass("create_functional_graphs").run(six)
    assert [n.kind for n in six.nodes()] == ["prim::FunctionalGraph", "aten::mul"]
    get_pass("create_functional_graphs").run(five)
    assert "prim::FunctionalGraph" not in str(five)
