import pytest

from irjit.compiler.passes import get_pass
from irjit.compiler.passes.manager import PassError

from . import fixture_pairs, pair_ids, parse, run_pair

LOWER = get_pass("lower_tuples").run
PAIRS = fixture_pairs("lower_all_tuples")


@pytest.mark.parametrize("pair", PAIRS, ids=pair_ids(PAIRS))
def test_pytorch_pairs(pair):
    got, want, _ = run_pair(pair, "lower_tuples")
    assert got == want


def test_tuple_index_and_graph_outputs_are_flattened():
    g = parse("""graph(%x : Tensor):
  %0 : int = prim::Constant[value=-1]()
  %n : Tensor = aten::neg(%x)
  %t : (Tensor, Tensor) = prim::TupleConstruct(%x, %n)
  %e : Tensor = prim::TupleIndex(%t, %0)
  return (%t, %e)
""")
    assert LOWER(g)
    g.lint()
    assert [o.name for o in g.outputs] == ["x", "n", "n"]
    assert all("Tuple" not in n.kind for n in g.walk())


def test_tuple_graph_inputs_are_flattened():
    g = parse("""graph(%x : (Tensor, Tensor)):
  %a : Tensor, %b : Tensor = prim::TupleUnpack(%x)
  return (%b)
""")
    assert LOWER(g)
    g.lint()
    assert len(g.inputs) == 2 and g.outputs[0] is g.inputs[1]


def test_tuple_from_an_opaque_op_is_an_error():
    g = parse("""graph(%x : Tensor):
  %t : (Tensor, Tensor) = aten::some_op(%x)
  %a : Tensor, %b : Tensor = prim::TupleUnpack(%t)
  return (%a)
""")
    with pytest.raises(PassError, match="does not forward tuples"):
        LOWER(g)
