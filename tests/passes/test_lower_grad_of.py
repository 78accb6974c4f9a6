"""lower_grad_of: PyTorch's LowerGradOf (no PyTorch fixture pair exists; unit cases)."""

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


def test_grad_of_becomes_if_on_any_nonzero():
    src = """graph(%x : Tensor, %y : Tensor):
  %1 : Tensor, %2 : Tensor = prim::GradOf[name="aten::mul"](%x, %y)
    block0():
      %3 : Tensor = aten::mul(%x, %y)
      %4 : Tensor = aten::neg(%x)
      -> (%3, %4)
  return (%1, %2)
"""
    g, changed = run("lower_grad_of", src)
    assert changed
    text = renumber(str(g))
    assert "prim::GradOf" not in text
    assert "%0 : int = prim::AutogradAnyNonZero(%x, %y)" in text
    assert "%1 : Tensor, %2 : Tensor = prim::If(%0)" in text
    assert "%5 : Tensor = prim::AutogradZero()\n      -> (%5, %5)" in text
    assert "return (%1, %2)" in text
