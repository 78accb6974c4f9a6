"""lower_grad_of: PyTorch's LowerGradOf (no PyTorch fixture pair exists; unit cases)."""

from pathlib import Path


from . import renumber, run_text as run

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "passes"


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
