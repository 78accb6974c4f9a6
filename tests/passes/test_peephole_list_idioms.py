"""peephole_list_idioms: PyTorch's PeepholeOptimizeListIdioms pairs and unit cases."""

from pathlib import Path

import pytest

from . import run_example as run_pair, run_text as run

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "passes"


@pytest.mark.parametrize("example", ["hand_list_idioms", "inlined_tuple_list_dict"])
def test_pytorch_pairs(example):
    run_pair("peephole_list_idioms", f"peephole_list_idioms__{example}", refine_list_len=1)


def test_mutated_lists_are_left_alone():
    src = """graph(%x : Tensor):
  %0 : int = prim::Constant[value=0]()
  %l : Tensor[] = prim::ListConstruct(%x)
  %a : Tensor[] = aten::append(%l, %x)
  %n : int = aten::len(%l)
  %g : Tensor = aten::__getitem__(%l, %0)
  return (%n, %g)
"""
    g, changed = run("peephole_list_idioms", src)
    assert not changed
    assert "aten::len(%l)" in str(g)


def test_negative_index_and_slice_step():
    src = """graph(%a : int, %b : int, %c : int):
  %m1 : int = prim::Constant[value=-1]()
  %0 : int = prim::Constant[value=0]()
  %2 : int = prim::Constant[value=2]()
  %none : NoneType = prim::Constant()
  %l : int[] = prim::ListConstruct(%a, %b, %c)
  %last : int = aten::__getitem__(%l, %m1)
  %s : int[] = aten::slice(%l, %0, %none, %2)
  return (%last, %s)
"""
    g, changed = run("peephole_list_idioms", src)
    assert changed
    text = str(g)
    assert "prim::ListConstruct(%a, %c)" in text
    assert "return (%c, " in text
