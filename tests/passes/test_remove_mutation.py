"""remove_tensor_mutation's `later_views` mode (native specialization's, not PyTorch's pass):
an in-place op on a fresh tensor that is aliased only after it becomes functional, its later
uses (views, writes into them, returns) reading the functional result; an alias taken before
it still blocks the rewrite, and PyTorch's pass blocks both."""

from __future__ import annotations

import numpy as np

from irjit.compiler import parse_ir
from irjit.compiler.passes import get_pass
from irjit.compiler.passes.remove_mutation import remove_tensor_mutation
from irjit.ops.tensor import Tensor
from irjit.runtime.interpreter import Interpreter

LATER_VIEW = """graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %one : int = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %five : float = prim::Constant[value=5.]()
  %y : Tensor = aten::clone(%x, %none)
  %a : Tensor = aten::add_(%y, %one, %one)
  %v : Tensor = aten::select(%y, %zero, %zero)
  %f : Tensor = aten::fill_(%v, %five)
  %t : (Tensor, Tensor) = prim::TupleConstruct(%y, %v)
  return (%t)"""

EARLIER_VIEW = LATER_VIEW.replace("""  %a : Tensor = aten::add_(%y, %one, %one)
  %v : Tensor = aten::select(%y, %zero, %zero)""", """  %v : Tensor = aten::select(%y, %zero, %zero)
  %a : Tensor = aten::add_(%y, %one, %one)""")


def _kinds(graph) -> list:
    return [n.kind for n in graph.nodes() if n.kind != "prim::Constant"]


def _run(graph) -> list:
    (y, v), = Interpreter(graph).run([Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))])
    return [y.data, v.data]


def test_a_fresh_tensor_aliased_only_after_the_write_becomes_functional():
    graph = parse_ir(LATER_VIEW)
    expected = _run(parse_ir(LATER_VIEW))
    assert remove_tensor_mutation(graph, later_views=True)
    assert "aten::add" in _kinds(graph) and "aten::add_" not in _kinds(graph)
    got = _run(graph)
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)
    np.testing.assert_array_equal(got[0], [[5, 5, 5], [4, 5, 6]])


def test_an_alias_taken_before_the_write_blocks_the_rewrite():
    graph = parse_ir(EARLIER_VIEW)
    assert not remove_tensor_mutation(graph, later_views=True)
    assert "aten::add_" in _kinds(graph)


def test_pytorchs_pass_blocks_later_aliases_too():
    graph = parse_ir(LATER_VIEW)
    assert not get_pass("remove_mutation").run(graph)
    assert "aten::add_" in _kinds(graph)
