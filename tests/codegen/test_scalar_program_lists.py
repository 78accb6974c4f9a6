"""Lists that scalar programs build (compiler/codegen/scalar_program_lists.py): appends inside
loops and branches, slices, concatenation, lists merged by branches and list outputs give the
interpreter's values; an append past the list's capacity, or an int overflow on the way, refuses
the call and the native runner's result is the interpreter's (a bailout)."""

from __future__ import annotations

import pytest

from irjit.compiler.codegen.cache import get_unit
from irjit.compiler.codegen.partition import GROUP, native_partition
from irjit.compiler.codegen.scalar_program import STATUS_REFUSED
from irjit.compiler.codegen.scalar_program_lists import DEFAULT_CAPACITY
from irjit.compiler.codegen.scalar_program_unit import ScalarProgramUnit
from irjit.compiler.parser import parse_ir
from irjit.runtime import no_grad
from irjit.runtime.interpreter import Interpreter
from irjit.runtime.native import NativeRunner

from ..runtime.native_coverage import measured


@pytest.fixture(params=[False, True], ids=["plain", "bounds-checked"], autouse=True)
def checks(request, monkeypatch):
    monkeypatch.setenv("IRJIT_NATIVE_CHECKS", "1" if request.param else "0")


# as the frontend prints `out = [v * k + 1 for v in range(n) if v % 2 == 0]; out[start:end:2]`,
# then the sum of the slice and the list joined to itself
BUILD = """graph(%k : int, %start : int, %end : int):
  %t : bool = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %n : int = prim::Constant[value={n}]()
  %out : int[] = prim::ListConstruct(%one)
   = prim::Loop(%n, %t)
    block0(%i : int):
      %r : int = aten::remainder(%i, %two)
      %even : bool = aten::eq(%r, %zero)
       = prim::If(%even)
        block0():
          %m : int = aten::mul(%i, %k)
          %v : int = aten::add(%m, %one)
          %a : int[] = aten::append(%out, %v)
          -> ()
        block1():
          -> ()
      -> (%t)
  %s : int[] = aten::slice(%out, %start, %end, %two)
  %len : int = aten::len(%s)
  %sum : int = prim::Loop(%len, %t, %zero)
    block0(%j : int, %acc : int):
      %x : int = aten::__getitem__(%s, %j)
      %acc2 : int = aten::add(%acc, %x)
      -> (%t, %acc2)
  %both : int[] = aten::add(%s, %out)
  %has : bool = aten::__contains__(%both, %k)
  return (%s, %sum, %both, %has)"""


def _program(text):
    graph = parse_ir(text)
    native_partition(graph)
    groups = [n for n in graph.nodes() if n.kind == GROUP]
    assert len(groups) == 1 and [n.kind for n in graph.nodes() if n.kind != "prim::Constant"] == [GROUP]
    unit, _ = get_unit(groups[0].attr("Subgraph"))
    assert isinstance(unit, ScalarProgramUnit)
    return unit


@pytest.mark.parametrize("k,start,end", [(3, 0, 100), (-2, 1, -1), (5, -3, 2), (7, 4, 1), (0, -100, 100)])
def test_a_list_built_in_a_loop_sliced_and_joined_is_one_program(k, start, end):
    text = BUILD.replace("{n}", "9")
    unit = _program(text)
    want = Interpreter(parse_ir(text)).run([k, start, end])
    assert unit.call([k, start, end]) == (0, want)
    # one element and at most 9 appends (the loop's trip count): 10, every second one sliced
    assert unit.output_capacities[0] == 5 and unit.output_capacities[2] == 5 + 10


def test_an_int_overflow_on_the_way_refuses_the_call():
    unit = _program(BUILD.replace("{n}", "9"))
    assert unit.call([2 ** 62, 0, 9])[0] == STATUS_REFUSED


# appends bounded by no constant: the list has the default capacity
GROWING = """graph(%n : int, %k : int):
  %t : bool = prim::Constant[value=1]()
  %none : NoneType = prim::Constant()
  %two : int = prim::Constant[value=2]()
  %out : int[] = prim::ListConstruct()
   = prim::Loop(%n, %t)
    block0(%i : int):
      %v : int = aten::mul(%i, %k)
      %a : int[] = aten::append(%out, %v)
      -> (%t)
  %s : int[] = aten::slice(%out, %none, %none, %two)
  %len : int = aten::len(%out)
  return (%s, %len)"""


def test_appends_past_the_capacity_are_refused_and_the_runner_bails_out(monkeypatch):
    runner = NativeRunner(parse_ir(GROWING))
    runner.run([3, 2])  # the first call profiles
    for n, k, bailed in [(5, 3, False), (DEFAULT_CAPACITY + 1, 2, True), (DEFAULT_CAPACITY, 1, False)]:
        before = runner.stats.bailouts
        with no_grad(), measured(monkeypatch) as cov:
            got = runner.run([n, k])
        monkeypatch.undo()
        assert got == Interpreter(parse_ir(GROWING)).run([n, k])
        assert runner.stats.bailouts - before == int(bailed)
        assert dict(cov.interpreted) == ({"aten::append": n, "aten::mul": n, "aten::slice": 1, "aten::len": 1}
                                         if bailed else {})


def test_a_branch_may_yield_a_list_the_program_built():
    text = """graph(%k : int, %c : bool):
  %t : bool = prim::Constant[value=1]()
  %none : NoneType = prim::Constant()
  %two : int = prim::Constant[value=2]()
  %four : int = prim::Constant[value=4]()
  %out : int[] = prim::ListConstruct(%k, %two)
   = prim::Loop(%four, %t)
    block0(%i : int):
      %a : int[] = aten::append(%out, %i)
      -> (%t)
  %picked : int[] = prim::If(%c)
    block0():
      %s : int[] = aten::slice(%out, %none, %none, %two)
      -> (%s)
    block1():
      -> (%out)
  %n : int = aten::len(%picked)
  return (%picked, %n)"""
    unit = _program(text)
    for c in (True, False):
        assert unit.call([9, c]) == (0, Interpreter(parse_ir(text)).run([9, c]))


def test_a_list_a_branch_yields_is_not_a_view_when_appends_follow():
    """`picked` may be `out` itself; an append after the branch must show through it, so the
    branch (and what reads it) stays outside the program, and the results are the interpreter's."""
    text = """graph(%c : bool, %k : int):
  %none : NoneType = prim::Constant()
  %two : int = prim::Constant[value=2]()
  %out : int[] = prim::ListConstruct(%k, %two)
  %picked : int[] = prim::If(%c)
    block0():
      %s : int[] = aten::slice(%out, %none, %none, %two)
      -> (%s)
    block1():
      -> (%out)
  %a : int[] = aten::append(%out, %k)
  %n : int = aten::len(%picked)
  return (%picked, %n)"""
    runner = NativeRunner(parse_ir(text))
    with no_grad():
        for c in (True, False, True, False):
            assert runner.run([c, 5]) == Interpreter(parse_ir(text)).run([c, 5])


def test_an_append_after_a_node_outside_the_program_read_the_list_does_not_join_it():
    """The tuple holds the list before the append (and sees it): the append must not move
    before it into the program, whose output list would be a copy."""
    text = """graph(%k : int):
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %out : int[] = prim::ListConstruct(%k, %one)
  %n : int = aten::mul(%k, %two)
  %held : (int[]) = prim::TupleConstruct(%out)
  %a : int[] = aten::append(%out, %n)
  %m : int = aten::len(%out)
  return (%held, %m)"""
    graph = parse_ir(text)
    native_partition(graph)
    kinds = [n.kind for n in graph.nodes() if n.kind != "prim::Constant"]
    assert kinds.index("prim::TupleConstruct") < kinds.index("aten::append")
    runner = NativeRunner(parse_ir(text))
    with no_grad():
        for k in (3, 0, 3):
            assert runner.run([k]) == Interpreter(parse_ir(text)).run([k])


def test_appending_to_a_list_argument_stays_interpreted():
    """The caller holds that list: a program's copy would not change it."""
    text = """graph(%xs : int[], %k : int):
  %a : int[] = aten::append(%xs, %k)
  %n : int = aten::len(%xs)
  return (%n)"""
    graph = parse_ir(text)
    native_partition(graph)
    assert "aten::append" in [n.kind for n in graph.nodes()]


SORTED = """graph(%xs : {kind}[], %y : {kind}):
  %none : NoneType = prim::Constant()
  %one : int = prim::Constant[value=1]()
  %tail : {kind}[] = aten::slice(%xs, %one, %none, %one)
  %ys : {kind}[] = prim::ListConstruct(%y)
  %z : {kind}[] = aten::add(%tail, %ys)
  %s : {kind}[] = aten::sorted(%z)
  %n : int = aten::len(%s)
  return (%s, %n)"""


@pytest.mark.parametrize("kind,xs,y", [
    ("int", [5, 3, -1, 3, 9, 0, 2 ** 62], -7), ("int", [], 4), ("int", [1], 0),
    ("float", [2.5, -0.0, 0.0, -1e300, 0.0, -0.0, float("inf")], 0.0)])
def test_slices_joins_and_sorts_of_list_arguments_make_new_lists(kind, xs, y):
    text = SORTED.replace("{kind}", kind)
    unit = _program(text)
    status, got = unit.call([list(xs), y])
    want = Interpreter(parse_ir(text)).run([list(xs), y])
    assert status == 0 and got == want
    assert [str(v) for v in got[0]] == [str(v) for v in want[0]]  # -0.0 and 0.0 where sorted puts them


def test_sorting_nan_or_a_list_argument_past_the_capacity_is_refused():
    unit = _program(SORTED.replace("{kind}", "float"))
    assert unit.call([[1.0, float("nan"), 0.0], 2.0])[0] == STATUS_REFUSED
    assert unit.call([[0.5] * (DEFAULT_CAPACITY + 1), 1.0])[0] == STATUS_REFUSED
    assert unit.call([[0.5] * DEFAULT_CAPACITY, 1.0])[0] == 0
