import pytest

from irjit.compiler.passes import get_pass

from . import fixture_pairs, pair_ids, parse, run_pair

CSE = get_pass("eliminate_common_subexpression").run
PAIRS = fixture_pairs("cse")


@pytest.mark.parametrize("pair", PAIRS, ids=pair_ids(PAIRS))
def test_pytorch_pairs(pair):
    got, want, _ = run_pair(pair, "eliminate_common_subexpression")
    assert got == want


def test_different_attributes_or_types_are_not_merged():
    g = parse("""graph(%x : Tensor):
  %1 : int = prim::Constant[value=1]()
  %2 : int = prim::Constant[value=2]()
  %3 : bool = prim::Constant[value=1]()
  %4 : float = prim::Constant[value=1.]()
  return (%1, %2, %3, %4)
""")
    assert not CSE(g)


def test_block_sees_enclosing_block_but_not_sibling():
    g = parse("""graph(%x : Tensor, %c : bool):
  %a : Tensor = prim::If(%c)
    block0():
      %n1 : Tensor = aten::neg(%x)
      -> (%n1)
    block1():
      %n2 : Tensor = aten::neg(%x)
      -> (%n2)
  %n3 : Tensor = aten::neg(%x)
  return (%a, %n3)
""")
    assert not CSE(g)  # siblings and later nodes are not dominated
    g2 = parse("""graph(%x : Tensor, %c : bool):
  %n0 : Tensor = aten::neg(%x)
  %a : Tensor = prim::If(%c)
    block0():
      %n1 : Tensor = aten::neg(%x)
      -> (%n1)
    block1():
      -> (%n0)
  %z : Tensor = aten::mul(%a, %n0)
  return (%z)
""")
    assert CSE(g2)
    g2.lint()
    assert sum(n.kind == "aten::neg" for n in g2.walk()) == 1


def test_side_effects_and_writes_block_cse():
    g = parse("""graph(%x : Tensor):
  %1 : int = prim::Constant[value=1]()
  %s : str = prim::Constant[value="hi"]()
   = prim::Print(%s)
   = prim::Print(%s)
  %n1 : Tensor = aten::neg(%x)
  %n2 : Tensor = aten::neg(%x)
  %w : Tensor = aten::add_(%n2, %1, %1)
  return (%n1, %w)
""")
    assert not CSE(g)
