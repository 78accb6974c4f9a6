"""propagate_dtype: PyTorch's DtypePropagation pair and unit cases."""

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
    run_pair("propagate_dtype", "propagate_dtype__hand_norm_ops_typed")


def test_promotion_and_comparison():
    src = """graph(%x : Long(2, strides=[1], requires_grad=0, device=cpu), %y : Float(2, strides=[1], requires_grad=0, device=cpu), %z : Tensor):
  %1 : int = prim::Constant[value=1]()
  %a : Tensor = aten::add(%x, %y, %1)
  %b : Tensor = aten::gt(%x, %y)
  %c : Tensor = aten::add(%x, %z, %1)
  return (%a, %b, %c)
"""
    g, changed = run("propagate_dtype", src)
    text = str(g)
    assert changed
    assert "%a : FloatTensor = aten::add" in text
    assert "%b : BoolTensor = aten::gt" in text
    assert "%c : Tensor = aten::add" in text
