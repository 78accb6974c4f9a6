"""remove_expands: PyTorch's RemoveExpands (no PyTorch fixture pair exists; unit cases)."""

import re
from pathlib import Path

import pytest

from compiler import parse_ir
from compiler.passes import get_pass

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "passes"


def renumber(text: str) -> str:
    """Numeric value names renumbered in order of appearance, per graph section."""
    out = []
    for part in re.split(r"(?m)^(?=with )", text):
        names: dict = {}
        out.append(re.sub(r"%(\d+)\b", lambda m: "%" + names.setdefault(m.group(1), str(len(names))), part))
    return "".join(out).strip()


def run_pair(pass_name: str, example: str, **options) -> None:
    before = (FIXTURES / f"pass_{example}_before.ir").read_text()
    after = (FIXTURES / f"pass_{example}_after.ir").read_text()
    g = parse_ir(before)
    get_pass(pass_name).run(g, **options)
    g.lint()
    assert renumber(str(g)) == renumber(after)


def run(pass_name: str, text: str, **options):
    g = parse_ir(text)
    changed = get_pass(pass_name).run(g, **options)
    g.lint()
    return g, changed


def test_implicit_expands_go_explicit_ones_stay():
    src = """graph(%x : Tensor, %s : int[]):
  %t : bool = prim::Constant[value=1]()
  %f : bool = prim::Constant[value=0]()
  %a : Tensor = aten::expand(%x, %s, %t)
  %b : Tensor = aten::expand(%a, %s, %f)
  %c : Tensor = prim::If(%t)
    block0():
      %d : Tensor = aten::expand(%b, %s, %t)
      -> (%d)
    block1():
      -> (%b)
  return (%c)
"""
    g, changed = run("remove_expands", src)
    text = str(g)
    assert changed
    assert text.count("aten::expand") == 1
    assert "aten::expand(%x, %s, %f)" in text
    assert "-> (%b)" in text


def test_nothing_to_remove():
    g, changed = run("remove_expands", "graph(%x : Tensor):\n  return (%x)\n")
    assert not changed
