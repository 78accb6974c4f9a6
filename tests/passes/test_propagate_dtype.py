"""propagate_dtype: PyTorch's DtypePropagation pair and unit cases."""

from pathlib import Path


from . import run_example as run_pair, run_text as run

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "passes"


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
