"""erase_shape_information: PyTorch's EraseShapeInformation pairs and unit cases."""

from pathlib import Path

import pytest

from . import run_example as run_pair, run_text as run

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "passes"


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
