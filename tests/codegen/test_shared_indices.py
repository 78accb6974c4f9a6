"""Groups equal but for a select's constant index take the index as an argument
(compiler/codegen/shared_indices.py): one unit for all of them, computing what each
constant's unit computes, bit for bit, and refusing an index out of range."""

from __future__ import annotations

import numpy as np

from irjit.compiler import parse_ir
from irjit.compiler.codegen.emit import STATUS_OUT_OF_BOUNDS
from irjit.compiler.codegen.partition import GROUP, make_group
from irjit.compiler.codegen.shared_indices import share_index_variants
from irjit.compiler.codegen.unit import tensor_unit
from irjit.compiler.structural_hash import canonical_text
from irjit.ops.types import INT

ROW = "Float(3, 4, strides=[4, 1], device=cpu)"
STEPS = f"""graph(%x : Float(5, 3, 4, strides=[12, 4, 1], device=cpu),
      %w : Float(4, 4, strides=[4, 1], device=cpu)):
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %four : int = prim::Constant[value=4]()
  %a0 : {ROW} = aten::select(%x, %zero, %one)
  %a1 : {ROW} = aten::matmul(%a0, %w)
  %a2 : {ROW} = aten::tanh(%a1)
  %b0 : {ROW} = aten::select(%x, %zero, %four)
  %b1 : {ROW} = aten::matmul(%b0, %w)
  %b2 : {ROW} = aten::tanh(%b1)
  %c0 : {ROW} = aten::select(%x, %zero, %two)
  %c1 : {ROW} = aten::matmul(%c0, %w)
  %c2 : {ROW} = aten::sigmoid(%c1)
  %d0 : {ROW} = aten::select(%x, %zero, %two)
  %d1 : {ROW} = aten::neg(%d0)
  %e0 : {ROW} = aten::select(%x, %zero, %one)
  %e1 : {ROW} = aten::neg(%e0)
  return (%a2, %b2, %c2, %d0, %d1, %e0, %e1)"""


def _grouped(text: str, runs: list[list[str]]):
    """The graph of `text` with each run of nodes (named by their first output) one group."""
    g = parse_ir(text)
    by_name = {n.outputs[0].debug_name: n for n in g.nodes() if n.outputs}
    return g, [make_group([by_name[name] for name in run]) for run in runs]


def _int_inputs(group) -> int:
    return sum(v.type == INT for v in group.attr("Subgraph").inputs)


def test_groups_equal_but_for_the_index_share_one_subgraph_taking_it():
    g, (a, b, c, d, e) = _grouped(STEPS, [["a0", "a1", "a2"], ["b0", "b1", "b2"], ["c0", "c1", "c2"],
                                         ["d0", "d1"], ["e0", "e1"]])
    assert share_index_variants(g)
    assert _int_inputs(a) == _int_inputs(b) == 1
    assert canonical_text(a.attr("Subgraph")) == canonical_text(b.attr("Subgraph"))
    assert [n.inputs[-1].node.attr("value") for n in (a, b)] == [1, 4]  # the indices, outside
    # another body (sigmoid) keeps its constant; so do groups handing the window out (d, e)
    assert _int_inputs(c) == _int_inputs(d) == _int_inputs(e) == 0
    assert not share_index_variants(g)


def test_the_shared_unit_computes_what_each_constant_unit_does_and_refuses_other_indices():
    g, (a, b) = _grouped(STEPS, [["a0", "a1", "a2"], ["b0", "b1", "b2"]])
    constants = [n.attr("Subgraph").copy() for n in (a, b)]
    share_index_variants(g)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 3, 4)).astype(np.float32)
    w = rng.standard_normal((4, 4)).astype(np.float32)
    shared = tensor_unit(a.attr("Subgraph"), "shared_index")
    for index, sub in zip((1, 4), constants):
        status, want = tensor_unit(sub, f"constant_index_{index}").call([x, w])
        assert status == 0
        np.testing.assert_allclose(want[0], np.tanh(x[index] @ w), rtol=1e-5)
        status, got = shared.call([x, w, index])
        assert status == 0 and np.array_equal(got[0], want[0])
    for index in (5, -6):
        assert shared.call([x, w, index])[0] == STATUS_OUT_OF_BOUNDS


def test_groups_are_left_as_they_are_without_a_second_of_their_kind():
    g, (a, c) = _grouped(STEPS, [["a0", "a1", "a2"], ["c0", "c1", "c2"]])
    assert not share_index_variants(g)
    assert sum(n.kind == GROUP for n in g.nodes()) == 2 and _int_inputs(a) == _int_inputs(c) == 0
