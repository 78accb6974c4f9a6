import numpy as np
import pytest

from irjit import parse_ir
from irjit.compiler.passes import get_pass
from irjit.ops.registry import is_registered

from . import fixture_pairs, pair_ids, parse, read_fixture, run_pair

CP = get_pass("constant_propagation").run
CPI = get_pass("constant_propagation_immutable_types").run
PAIRS = fixture_pairs("constant_propagation")
IMMUTABLE = fixture_pairs("constant_propagation_immutable_types")


@pytest.mark.parametrize("pair", PAIRS + IMMUTABLE, ids=pair_ids(PAIRS + IMMUTABLE))
def test_pair_ops_are_registered(pair):
    """A registry regression fails here by name (the pairs below would fail less legibly)."""
    g = parse(read_fixture(pair["before"]))
    missing = sorted({n.kind for n in g.walk() if n.kind.startswith("aten::") and not is_registered(n.kind)})
    assert not missing, f"ops not registered: {', '.join(missing)}"


@pytest.mark.parametrize("pair", PAIRS, ids=pair_ids(PAIRS))
def test_pytorch_pairs(pair):
    got, want, changed = run_pair(pair, "constant_propagation")
    assert got == want and changed


@pytest.mark.parametrize("pair", IMMUTABLE, ids=pair_ids(IMMUTABLE))
def test_pytorch_pairs_immutable_types(pair):
    got, want, changed = run_pair(pair, "constant_propagation_immutable_types")
    assert got == want and changed


TENSOR_GRAPH = """graph(%x : Tensor):
  %a : Float(requires_grad=0, device=cpu) = prim::Constant[value={1.5}]()
  %b : Float(requires_grad=0, device=cpu) = prim::Constant[value={2}]()
  %1 : int = prim::Constant[value=1]()
  %c : Tensor = aten::add(%a, %b, %1)
  %y : Tensor = aten::mul(%x, %c)
  return (%y)
"""


def test_tensor_results_become_tensor_constants():
    g = parse(TENSOR_GRAPH)
    assert CP(g)
    g.lint()
    (c,) = [n for n in g.nodes() if n.kind == "prim::Constant" and n.attr_kind("value") == "t"
            and n.output.uses]
    assert np.allclose(c.attr("value").array, 3.5)
    assert "aten::add" not in [n.kind for n in g.nodes()]


def test_immutable_variant_leaves_tensors_alone():
    g = parse(TENSOR_GRAPH)
    assert not CPI(g)
    assert "aten::add" in [n.kind for n in g.nodes()]


def test_constant_if_is_inlined_and_unrun_loop_removed():
    g = parse("""graph(%x : Tensor):
  %f : bool = prim::Constant[value=0]()
  %y : Tensor = prim::If(%f)
    block0():
      -> (%x)
    block1():
      %n : Tensor = aten::neg(%x)
      -> (%n)
  %z : Tensor = prim::Loop(%f, %f, %y)
    block0(%i : int, %a : Tensor):
      %e : Tensor = aten::exp(%a)
      -> (%f, %e)
  return (%z)
""")
    assert CP(g)
    g.lint()
    assert [n.kind for n in g.nodes()] == ["aten::neg"]


def test_same_constant_if_outputs_are_hoisted():
    g = parse("""graph(%x : Tensor, %c : bool):
  %y : int, %z : Tensor = prim::If(%c)
    block0():
      %1 : int = prim::Constant[value=3]()
      %n : Tensor = aten::neg(%x)
      -> (%1, %n)
    block1():
      %2 : int = prim::Constant[value=3]()
      -> (%2, %x)
  return (%y, %z)
""")
    assert CP(g)
    g.lint()
    if_node = [n for n in g.nodes() if n.kind == "prim::If"][0]
    assert len(if_node.outputs) == 1
    assert g.outputs[0].node.kind == "prim::Constant"


def test_nondeterministic_and_mutating_ops_are_not_folded():
    g = parse("""graph(%x : Tensor):
  %a : Float(requires_grad=0, device=cpu) = prim::Constant[value={1.5}]()
  %1 : int = prim::Constant[value=1]()
  %w : Tensor = aten::add_(%a, %1, %1)
  %y : Tensor = aten::mul(%x, %a)
  return (%y, %w)
""")
    CP(g)
    assert "aten::add_" in [n.kind for n in g.nodes()]


def test_folded_tensor_list_keeps_its_tensors_and_feeds_later_folds():
    """A folded `Tensor[]` is a `ts` constant holding the arrays, so `cat` of it folds too."""
    g = parse_ir("graph():\n  %0 : int = prim::Constant[value=0]()\n"
                 "  %n : NoneType = prim::Constant()\n  %sz : int[] = prim::ListConstruct(%0)\n"
                 "  %one : int = prim::Constant[value=2]()\n  %s : int[] = prim::ListConstruct(%one)\n"
                 "  %t : Tensor = aten::zeros(%s, %n, %n, %n, %n)\n  %u : Tensor = aten::ones(%s, %n, %n, %n, %n)\n"
                 "  %l : Tensor[] = prim::ListConstruct(%t, %u)\n  %c : Tensor = aten::cat(%l, %0)\n"
                 "  return (%l, %c)\n")
    get_pass("constant_propagation").run(g)
    assert all(n.kind == "prim::Constant" for n in g.nodes())
    (lst,) = [n for n in g.nodes() if n.attr_kind("value") == "ts"]
    assert [d.array.tolist() for d in lst.attr("value")] == [[0.0, 0.0], [1.0, 1.0]]
    (cat,) = [n for n in g.nodes() if n.attr_kind("value") == "t"]
    assert cat.attr("value").array.tolist() == [0.0, 0.0, 1.0, 1.0]


def test_printed_tensor_list_constant_is_not_silently_empty():
    """`[<Tensors>]` read from text has no data: running it is an error, folding skips it."""
    from irjit.ops.errors import IRRuntimeError
    from irjit.runtime.loader import load
    text = ("graph():\n  %0 : int = prim::Constant[value=0]()\n"
            "  %l : Tensor[] = prim::Constant[value=[<Tensors>]]()\n"
            "  %c : Tensor = aten::cat(%l, %0)\n  return (%c)\n")
    g = parse_ir(text)
    assert not get_pass("constant_propagation").run(g)
    with pytest.raises(IRRuntimeError, match=r"not printed in the graph \(`\[<Tensors>\]`\)"):
        load(text).run()


def test_annotated_list_constant_reads_its_values():
    g = parse_ir("graph():\n  %o : int?[] = prim::Constant[value=annotate(List[Optional[int]], [1, None])]()\n"
                 "  %t : (int, Tensor) = prim::Constant[value=(1, {2.5})]()\n  return (%o, %t)\n")
    from irjit.runtime.loader import load
    lst, tup = load(g).run()
    assert lst == [1, None] and tup[0] == 1 and float(tup[1].data) == 2.5
