"""propagate_device: PyTorch's DeviceTypePropagation pairs and unit cases."""

from pathlib import Path

import pytest

from . import run_example as run_pair, run_text as run

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "passes"


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
