import pytest

from irjit.compiler.passes import get_pass

from . import fixture_pairs, pair_ids, parse, read_fixture, run_pair

CANON = get_pass("canonicalize").run
NO_NAMES = fixture_pairs("canonicalize_no_unique_names")
FUSER = fixture_pairs("canonicalize_graph_fuser_ops")


@pytest.mark.parametrize("pair", NO_NAMES, ids=pair_ids(NO_NAMES))
def test_pytorch_pairs_without_names_exactly(pair):
    g = parse(read_fixture(pair["before"]))
    CANON(g, keep_unique_names=False)
    g.lint()
    assert str(g) == read_fixture(pair["after"])  # byte-identical: numbering is the point


@pytest.mark.parametrize("pair", FUSER, ids=pair_ids(FUSER))
def test_pytorch_pairs_graph_fuser_ops(pair):
    got, want, _ = run_pair(pair, "canonicalize_graph_fuser_ops")
    assert got == want


def test_keeps_names_and_renumbers_in_order():
    g = parse("""graph(%x : Tensor):
  %9 : int = prim::Constant[value=1]()
  %y : Tensor = aten::add(%x, %x, %9)
  %4 : Tensor = aten::neg(%y)
  return (%4)
""")
    assert CANON(g)
    g.lint()
    assert str(g) == """graph(%x : Tensor):
  %1 : int = prim::Constant[value=1]()
  %y : Tensor = aten::add(%x, %x, %1)
  %3 : Tensor = aten::neg(%y)
  return (%3)
"""
    g.insert_constant(2)  # the graph is fully usable afterwards
    g.lint()


def test_scalar_tensor_constant_becomes_number():
    g = parse("""graph(%x : Tensor):
  %c : Long(requires_grad=0, device=cpu) = prim::Constant[value={2}]()
  %1 : int = prim::Constant[value=1]()
  %y : Tensor = aten::add(%x, %c, %1)
  return (%y)
""")
    assert get_pass("canonicalize_graph_fuser_ops").run(g)
    g.lint()
    add = [n for n in g.nodes() if n.kind == "aten::add"][0]
    assert add.inputs[1].type.__str__() == "int" and add.output.name == "y"
