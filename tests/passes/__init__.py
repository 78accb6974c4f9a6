"""Tests of the graph passes, with helpers to compare graphs up to value numbering."""

from __future__ import annotations

import json
import re
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "passes"

# The pointwise function of the fixtures (x * y + 1 -> tanh -> sigmoid -> * x).
POINTWISE_SRC = """graph(%x.1 : Tensor,
      %y.1 : Tensor):
  %2 : int = prim::Constant[value=1]()
  %3 : float = prim::Constant[value=1.]()
  %4 : Tensor = aten::mul(%x.1, %y.1)
  %z.1 : Tensor = aten::add(%4, %3, %2)
  %6 : Tensor = aten::tanh(%z.1)
  %7 : Tensor = aten::sigmoid(%6)
  %8 : Tensor = aten::mul(%7, %x.1)
  return (%8)
"""

_NUMBER = re.compile(r"%(\d+)(?![\w.])")


def renumber(text: str) -> str:
    """`text` with numeric value names renumbered in order of first appearance (per graph
    section), so graphs that differ only in value numbering compare equal."""
    sections = re.split(r"(?m)^(?=with )", text)
    out = []
    for section in sections:
        mapping: dict[str, str] = {}

        def sub(m: re.Match) -> str:
            return "%" + mapping.setdefault(m.group(1), str(len(mapping)))
        out.append(_NUMBER.sub(sub, section))
    return "".join(out)


def fixture_pairs(pass_name: str) -> list[dict]:
    """The manifest entries of PyTorch's before/after pairs for `pass_name`."""
    manifest = json.loads((FIXTURES / "manifest.json").read_text())
    return [p for p in manifest["pairs"] if p["pass"] == pass_name]


def read_fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


def run_pair(pair: dict, pass_name: str, **options) -> tuple[str, str, bool]:
    """Run `pass_name` on PyTorch's before-graph of `pair`; return (got, want, changed),
    both renumbered, with the graph linted."""
    from irjit import parse_ir
    from irjit.compiler.passes import get_pass
    g = parse_ir(read_fixture(pair["before"]))
    changed = get_pass(pass_name).run(g, **options)
    g.lint()
    return renumber(str(g)), renumber(read_fixture(pair["after"])), changed


def pair_ids(pairs: list[dict]) -> list[str]:
    return [p["example"] for p in pairs]


def parse(text: str):
    from irjit import parse_ir
    return parse_ir(text)


def run_example(pass_name: str, example: str, **options) -> None:
    """Run `pass_name` on PyTorch's `pass_<example>_before.ir` and assert the result equals
    its `_after.ir` up to value numbering (the graph linted)."""
    from irjit.compiler.passes import get_pass
    g = parse(read_fixture(f"pass_{example}_before.ir"))
    get_pass(pass_name).run(g, **options)
    g.lint()
    assert renumber(str(g)).strip() == renumber(read_fixture(f"pass_{example}_after.ir")).strip()


def run_text(pass_name: str, text: str, **options):
    """Parse `text`, run `pass_name` on it, lint; return (graph, changed)."""
    from irjit.compiler.passes import get_pass
    g = parse(text)
    changed = get_pass(pass_name).run(g, **options)
    g.lint()
    return g, changed
