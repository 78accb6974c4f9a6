"""decompose_ops: PyTorch's DecomposeOps pair and unit cases."""

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


def test_pytorch_pair():
    run_pair("decompose_ops", "decompose_ops__hand_linear_patterns")


def test_scaled_addmm_is_kept():
    src = """graph(%b : Tensor, %x : Tensor, %w : Tensor):
  %2 : int = prim::Constant[value=2]()
  %1 : int = prim::Constant[value=1]()
  %r : Tensor = aten::addmm(%b, %x, %w, %2, %1)
  return (%r)
"""
    g, changed = run("decompose_ops", src)
    assert not changed and "aten::addmm" in str(g)


def test_decomposed_output_keeps_type():
    src = """graph(%b : Float(3, strides=[1], requires_grad=0, device=cpu), %x : Float(2, 4, strides=[4, 1], requires_grad=0, device=cpu), %w : Float(4, 3, strides=[3, 1], requires_grad=0, device=cpu)):
  %1 : int = prim::Constant[value=1]()
  %r : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = aten::addmm(%b, %x, %w, %1, %1)
  return (%r)
"""
    g, changed = run("decompose_ops", src)
    text = str(g)
    assert changed and "aten::addmm" not in text
    assert "Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = aten::add(%b," in text
    assert "Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = aten::mm(%x, %w)" in text
