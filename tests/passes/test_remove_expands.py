"""remove_expands: PyTorch's RemoveExpands (no PyTorch fixture pair exists; unit cases)."""

from pathlib import Path


from . import run_text as run

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "passes"


def test_implicit_expands_go_explicit_ones_stay():
    src = """graph(%x : Tensor, %s : int[]):
  %t : bool = prim::Constant[value=1]()
  %f : bool = prim::Constant[value=0]()
  %a : Tensor = aten::expand(%x, %s, %t)
  %b : Tensor = aten::expand(%a, %s, %f)
  %c : Tensor = prim::If(%t)
    block0():
      %d : Tensor = aten::expand(%b, %s, %t)
      -> (%d)
    block1():
      -> (%b)
  return (%c)
"""
    g, changed = run("remove_expands", src)
    text = str(g)
    assert changed
    assert text.count("aten::expand") == 1
    assert "aten::expand(%x, %s, %f)" in text
    assert "-> (%b)" in text


def test_nothing_to_remove():
    g, changed = run("remove_expands", "graph(%x : Tensor):\n  return (%x)\n")
    assert not changed
