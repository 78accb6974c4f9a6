import pytest

from irjit.compiler.passes import get_pass

from . import fixture_pairs, pair_ids, parse, run_pair

DCE = get_pass("eliminate_dead_code").run


@pytest.mark.parametrize("pair", fixture_pairs("dce"), ids=pair_ids(fixture_pairs("dce")))
def test_pytorch_pairs(pair):
    got, want, changed = run_pair(pair, "eliminate_dead_code")
    assert got == want
    assert changed == pair["changed"]


ALLOW = fixture_pairs("dce_allow_deleting_nodes_with_side_effects")


@pytest.mark.parametrize("pair", ALLOW, ids=pair_ids(ALLOW))
def test_pytorch_pairs_allow_side_effects(pair):
    got, want, _ = run_pair(pair, "eliminate_dead_code", allow_deleting_side_effects=True)
    assert got == want


def kinds(g):
    return [n.kind for n in g.walk()]


def test_mutation_of_input_is_kept_and_of_dead_value_is_removed():
    g = parse("""graph(%x : Tensor):
  %1 : int = prim::Constant[value=1]()
  %v : Tensor = aten::t(%x)
  %2 : Tensor = aten::add_(%v, %1, %1)
  %3 : Tensor = aten::neg(%x)
  %4 : Tensor = aten::add_(%3, %1, %1)
  return (%x)
""")
    assert DCE(g)
    assert kinds(g) == ["prim::Constant", "aten::t", "aten::add_"]


def test_mutation_of_live_fresh_value_is_kept():
    g = parse("""graph(%x : Tensor):
  %1 : int = prim::Constant[value=1]()
  %3 : Tensor = aten::neg(%x)
  %4 : Tensor = aten::add_(%3, %1, %1)
  return (%3)
""")
    assert not DCE(g)
    assert "aten::add_" in kinds(g)


def test_without_alias_analysis_every_mutation_is_kept():
    text = """graph(%x : Tensor):
  %1 : int = prim::Constant[value=1]()
  %3 : Tensor = aten::neg(%x)
  %4 : Tensor = aten::add_(%3, %1, %1)
  return (%x)
"""
    g = parse(text)
    DCE(g, alias_analysis=False)
    assert kinds(g) == ["prim::Constant", "aten::neg", "aten::add_"]


def test_side_effects_inside_blocks_keep_the_block_node():
    g = parse("""graph(%x : Tensor, %c : bool):
   = prim::If(%c)
    block0():
       = prim::Print(%x)
      -> ()
    block1():
      -> ()
  %y : Tensor = aten::neg(%x)
  return (%y)
""")
    assert not DCE(g)
    assert "prim::Print" in kinds(g)
    DCE(g, allow_deleting_side_effects=True)
    assert kinds(g) == ["aten::neg"]


def test_unused_if_outputs_are_removed():
    g = parse("""graph(%x : Tensor, %c : bool):
  %a : Tensor, %b : Tensor = prim::If(%c)
    block0():
      %n : Tensor = aten::neg(%x)
      -> (%x, %n)
    block1():
      -> (%x, %x)
  return (%a)
""")
    assert DCE(g)
    g.lint()
    (if_node,) = [n for n in g.nodes()]
    assert len(if_node.outputs) == 1 and all(len(b.outputs) == 1 for b in if_node.blocks)
    assert "aten::neg" not in kinds(g)
