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


def test_block_dce_keeps_writes_to_values_from_outside_the_block():
    """The block-level entry (used when unrolling loops and building fusion groups) treats
    values from outside the block as live: an append to a list read after the loop stays,
    a dead pure node inside goes."""
    from irjit.compiler.passes.eliminate_dead_code import eliminate_dead_code_in_block
    g = parse("""graph(%x : Tensor, %n : int):
  %t : bool = prim::Constant[value=1]()
  %l : Tensor[] = prim::ListConstruct()
   = prim::Loop(%n, %t)
    block0(%i : int):
      %a : Tensor[] = aten::append(%l, %x)
      %dead : Tensor = aten::relu(%x)
      -> (%t)
  %z : int = prim::Constant[value=0]()
  %r : Tensor = aten::cat(%l, %z)
  return (%r)
""")
    body = next(n for n in g.nodes() if n.kind == "prim::Loop").blocks[0]
    assert eliminate_dead_code_in_block(body)
    assert [n.kind for n in body.nodes()] == ["aten::append"]
    g.lint()


def test_a_call_matching_an_overloads_arity_is_not_taken_for_an_out_call():
    """`aten::max(%x, %y)` is max.other (two arguments), not `max(%x)` writing into and
    returning `out=%y`: its result aliases nothing, so a second such call returned by the graph
    is the same subexpression (as PyTorch's CSE, which knows the schema); unused, it is
    removed, while add's out= form `aten::add(%x, %y, %a, %y)` writes %y and stays."""
    g = parse("""graph(%x : Tensor, %y : Tensor):
  %m : Tensor = aten::max(%x, %y)
  %n : Tensor = aten::max(%x, %y)
  return (%n)""")
    get_pass("eliminate_common_subexpression").run(g)
    assert kinds(g) == ["aten::max"]
    g = parse("""graph(%x : Tensor, %y : Tensor):
  %a : int = prim::Constant[value=1]()
  %m : Tensor = aten::max(%x, %y)
  %o : Tensor = aten::add(%x, %y, %a, %y)
  return (%x)""")
    DCE(g)
    assert kinds(g) == ["prim::Constant", "aten::add"]
