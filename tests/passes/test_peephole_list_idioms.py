"""peephole_list_idioms: PyTorch's PeepholeOptimizeListIdioms pairs and unit cases."""

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
