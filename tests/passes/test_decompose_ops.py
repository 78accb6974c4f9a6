"""decompose_ops: PyTorch's DecomposeOps pair and unit cases."""

from pathlib import Path


from . import run_example as run_pair, run_text as run

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "passes"


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
