import pytest

from irjit.compiler.passes import get_pass

from . import fixture_pairs, pair_ids, parse, run_pair

POOL = get_pass("constant_pooling").run
PAIRS = fixture_pairs("constant_pooling")


@pytest.mark.parametrize("pair", PAIRS, ids=pair_ids(PAIRS))
def test_pytorch_pairs(pair):
    got, want, _ = run_pair(pair, "constant_pooling")
    assert got == want


def test_constants_in_blocks_are_hoisted_and_merged():
    g = parse("""graph(%x : Tensor, %c : bool):
  %y : Tensor = aten::neg(%x)
  %a : int = prim::If(%c)
    block0():
      %1 : int = prim::Constant[value=1]()
      -> (%1)
    block1():
      %2 : int = prim::Constant[value=1]()
      -> (%2)
  return (%y, %a)
""")
    assert POOL(g)
    g.lint()
    nodes = list(g.nodes())
    assert nodes[0].kind == "prim::Constant"
    assert sum(n.kind == "prim::Constant" for n in g.walk()) == 1


def test_pooling_is_idempotent():
    g = parse("""graph(%x : Tensor):
  %1 : int = prim::Constant[value=1]()
  %2 : Tensor = aten::add(%x, %x, %1)
  return (%2)
""")
    assert not POOL(g)
