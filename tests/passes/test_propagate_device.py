"""propagate_device: PyTorch's DeviceTypePropagation pairs and unit cases."""

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


@pytest.mark.parametrize("example", ["hand_peephole_typed", "shaped_grad_fn_layernorm"])
def test_pytorch_pairs(example):
    run_pair("propagate_device", f"propagate_device__{example}")


def test_cpu_zero_dim_gives_way_and_mismatch_clears():
    src = """graph(%s : Float(requires_grad=0, device=cpu), %x : Tensor(device=cuda:0), %y : Tensor(device=cpu)):
  %1 : int = prim::Constant[value=1]()
  %a : Tensor = aten::add(%s, %x, %1)
  %b : Tensor(device=cpu) = aten::add(%x, %y, %1)
  return (%a, %b)
"""
    g, changed = run("propagate_device", src)
    text = str(g)
    assert changed
    assert "%a : Tensor(device=cuda:0) = aten::add" in text
    assert "%b : Tensor = aten::add" in text
