"""erase_shape_information: PyTorch's EraseShapeInformation pairs and unit cases."""

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


@pytest.mark.parametrize("example", ["hand_pointwise_typed", "shaped_nograd_fn_lstm_cell"])
def test_pytorch_pairs(example):
    run_pair("erase_shape_information", f"erase_shape_information__{example}")


def test_containers_and_subgraphs():
    src = """graph(%x : Float(2, strides=[1], requires_grad=0, device=cpu)):
  %l : Float(2, strides=[1], requires_grad=0, device=cpu)[] = prim::ListConstruct(%x)
  %y : Float(2, strides=[1], requires_grad=0, device=cpu) = prim::FusionGroup_0(%x)
  return (%l, %y)
with prim::FusionGroup_0 = graph(%0 : Float(2, strides=[1], requires_grad=0, device=cpu)):
  %1 : Float(2, strides=[1], requires_grad=0, device=cpu) = aten::neg(%0)
  return (%1)
"""
    g, changed = run("erase_shape_information", src)
    assert changed and "Float" not in str(g)
    assert "%l : Tensor[] = prim::ListConstruct(%x)" in str(g)
