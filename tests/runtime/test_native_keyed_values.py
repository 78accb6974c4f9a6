"""Folds of what a native plan's key records beyond tensor layouts (runtime/native_keyed_values.py):
whether an optional input or attribute is None, and the bool, None and int-list attributes the
graph reads, and the int attributes that size lists. Each plan gives the interpreter's results whichever way its calls alternate."""

from __future__ import annotations

import numpy as np
import pytest

from irjit.compiler import parse_ir
from irjit.ops.tensor import Tensor
from irjit.runtime import no_grad
from irjit.runtime.interpreter import Interpreter
from irjit.runtime.module import Module
from irjit.runtime.native import NativeRunner
from irjit.runtime.native_keyed_values import fold_keyed_values

from .native_coverage import measured

OPTIONAL_SCALE = """graph(%x : Tensor, %scale : float?, %bias : Tensor?):
  %none : NoneType = prim::Constant()
  %one : int = prim::Constant[value=1]()
  %has : bool = aten::__isnot__(%scale, %none)
  %y : Tensor = prim::If(%has)
    block0():
      %s : float = prim::unchecked_cast(%scale)
      %m : Tensor = aten::mul(%x, %s)
      -> (%m)
    block1():
      -> (%x)
  %no_bias : bool = aten::__is__(%bias, %none)
  %z : Tensor = prim::If(%no_bias)
    block0():
      -> (%y)
    block1():
      %b : Tensor = prim::unchecked_cast(%bias)
      %a : Tensor = aten::add(%y, %b, %one)
      -> (%a)
  return (%z)"""


def _kinds(graph) -> set[str]:
    return {n.kind for n in graph.walk()}


def _ones(*shape):
    return Tensor(np.arange(np.prod(shape), dtype=np.float32).reshape(shape))


def test_none_checks_of_keyed_values_that_are_not_none_fold():
    g = parse_ir(OPTIONAL_SCALE)
    assert fold_keyed_values(g, [_ones(2, 3), 2.5, _ones(3)])
    assert not _kinds(g) & {"aten::__is__", "aten::__isnot__", "prim::If"}


def test_none_inputs_are_left_to_the_fold_of_fixed_inputs():
    """A None input is a constant once fold_fixed_inputs runs; this fold leaves it alone."""
    g = parse_ir(OPTIONAL_SCALE)
    assert not fold_keyed_values(g, [_ones(2, 3), None, None])
    assert {"aten::__is__", "aten::__isnot__"} <= _kinds(g)


@pytest.mark.parametrize("order", [[(2.5, True), (None, False), (2.5, True), (None, True), (0.5, False)]])
def test_each_none_pattern_gets_its_own_plan_with_the_interpreters_results(order, monkeypatch):
    runner = NativeRunner(parse_ir(OPTIONAL_SCALE))
    x = _ones(2, 3)
    for call, (scale, with_bias) in enumerate(order * 2):
        args = [x, scale, _ones(3) if with_bias else None]
        want = Interpreter(parse_ir(OPTIONAL_SCALE)).run(list(args))[0]
        with no_grad(), measured(monkeypatch) as cov:
            got = runner.run(list(args))[0]
        monkeypatch.undo()
        np.testing.assert_array_equal(got.data, want.data)
        assert call < len(order) or not cov.interpreted  # (a new plan's first call profiles)
    assert len(runner._plans) == 4


DROPOUT = """graph(%self : __torch__.M, %x : Tensor):
  %p : float = prim::Constant[value=0.5]()
  %training : bool = prim::GetAttr[name="training"](%self)
  %y : Tensor = aten::dropout(%x, %p, %training)
  %z : Tensor = aten::tanh(%y)
  return (%z)"""


def test_a_bool_attribute_is_a_constant_of_its_plan(monkeypatch):
    """Dropout in eval mode (`training` read from the module) runs natively; switching the
    module to training mode makes another plan, where it draws random numbers interpreted."""
    runner = NativeRunner(parse_ir(DROPOUT))
    m, x = Module("__torch__.M"), _ones(4, 5)
    for training in [False, True, False, True]:
        m.set("training", training)
        with no_grad():
            runner.run([m, x])  # a new plan's first call profiles
            with measured(monkeypatch) as cov:
                z = runner.run([m, x])[0]
        monkeypatch.undo()
        if training:
            assert cov.interpreted["aten::dropout"] == 1
            kept = z.data != 0
            np.testing.assert_allclose(z.data[kept], np.tanh(2 * x.data)[kept], rtol=1e-6)
        else:
            assert dict(cov.interpreted) == {} and cov.native["aten::dropout"] == 1
            np.testing.assert_allclose(z.data, np.tanh(x.data), rtol=1e-6)
    assert len(runner._plans) == 2


def test_an_int_list_attribute_that_a_graph_appends_to_is_not_folded():
    g = parse_ir("""graph(%self : __torch__.M, %n : int):
  %sizes : int[] = prim::GetAttr[name="sizes"](%self)
  %r : int[] = aten::append(%sizes, %n)
  %k : int = aten::len(%sizes)
  return (%k)""")
    m = Module("__torch__.M")
    m.set("sizes", [1, 2])
    assert not fold_keyed_values(g, [m, 3])
    assert "prim::GetAttr" in _kinds(g)


SCALED = """graph(%self : __torch__.M, %x : Tensor):
  %step : int = prim::GetAttr[name="step"](%self)
  %heads : int = prim::GetAttr[name="heads"](%self)
  %minus : int = prim::Constant[value=-1]()
  %two : int = prim::Constant[value=2]()
  %width : int = aten::mul(%heads, %two)
  %sizes : int[] = prim::ListConstruct(%minus, %width)
  %r : Tensor = aten::reshape(%x, %sizes)
  %y : Tensor = aten::mul(%r, %step)
  return (%y)"""


def test_an_int_attribute_that_sizes_a_list_is_keyed_by_value_and_other_ints_by_type(monkeypatch):
    """A head count reaching a reshape's sizes (through int arithmetic) folds, so the reshape
    runs natively, and each value gets its plan; a step counter used as a number stays an
    argument: one plan serves every value it takes."""
    runner = NativeRunner(parse_ir(SCALED))
    m, x = Module("__torch__.M"), _ones(4, 6)
    for call, (heads, step) in enumerate([(3, 1), (3, 2), (3, 5), (1, 7), (3, 9), (1, 2)]):
        m.set("heads", heads)
        m.set("step", step)
        want = Interpreter(parse_ir(SCALED)).run([m, x])[0]
        with no_grad(), measured(monkeypatch) as cov:
            got = runner.run([m, x])[0]
        monkeypatch.undo()
        np.testing.assert_array_equal(got.data, want.data)
        assert got.data.shape == (24 // (2 * heads), 2 * heads)
        if call in (1, 2, 4, 5):  # (a plan's first call profiles)
            assert dict(cov.interpreted) == {} and cov.native["aten::reshape"] == 1
    assert len(runner._plans) == 2
