"""Scalar programs (compiler/codegen/scalar_program*.py): number code with If/Loop compiled to
one LLVM function, checked against Python's own semantics and the interpreter; what the
interpreter raises on (division by zero, int() of nan) is a refused call, and run through a
native runner the interpreter's error is what the caller sees."""

from __future__ import annotations

import math
import operator

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import irjit
from irjit.compiler.codegen.cache import get_unit
from irjit.compiler.codegen.partition import GROUP, native_partition
from irjit.compiler.codegen.scalar_program import STATUS_REFUSED, is_scalar_program
from irjit.compiler.codegen.scalar_program_unit import STATUS_ARGUMENT, ScalarProgramUnit
from irjit.compiler.parser import parse_ir
from irjit.runtime.interpreter import Interpreter

INT64 = (-(2 ** 63), 2 ** 63 - 1)


class Refused(Exception):
    """The reference says the interpreter raises (or leaves int64) here."""


def _unit(text: str) -> ScalarProgramUnit:
    unit, _ = get_unit(parse_ir(text))
    assert isinstance(unit, ScalarProgramUnit)
    return unit


def _same(got, want) -> bool:
    if isinstance(want, float) and math.isnan(want):
        return isinstance(got, float) and math.isnan(got)
    return type(got) is type(want) and got == want and (
        not isinstance(want, float) or math.copysign(1, got) == math.copysign(1, want))


# ---- Python's semantics, as TorchScript's number builtins follow them

def _int(v):
    if isinstance(v, int) and not isinstance(v, bool) and not INT64[0] <= v <= INT64[1]:
        raise Refused("int64 overflow")
    return v


def _true_div(a, b):
    a, b = float(a), float(b)
    if b == 0:
        return math.nan if a == 0 or math.isnan(a) else math.copysign(math.inf, a) * math.copysign(1, b)
    return a / b


def _floordiv(a, b):
    if isinstance(a, int) and isinstance(b, int):  # bools too
        if b == 0:
            raise Refused("division by zero")
        return _int(a // b)
    a, b = float(a), float(b)
    if math.isinf(a):
        raise Refused("floor of inf")
    return _true_div(a, b) if b == 0 else a // b


def _remainder(a, b):
    if isinstance(a, int) and isinstance(b, int):
        if b == 0:
            raise Refused("modulo by zero")
        return a % b
    a, b = float(a), float(b)
    return math.nan if b == 0 or math.isinf(a) else a % b


def _to_int(x):
    if math.isnan(x) or math.isinf(x):
        raise Refused("int() of nan/inf")
    return _int(int(x))


def _pick(better):
    def pick(a, b):
        if isinstance(a, float) and math.isnan(a) or isinstance(b, float) and math.isnan(b):
            raise Refused("max/min of nan")
        r = b if better(b, a) else a
        return float(r) if isinstance(a, float) or isinstance(b, float) else r
    return pick


NUM, ANY = ("int", "float"), ("int", "float", "bool")
# IR op, operand kinds it accepts, Python reference (bools take part as 0 and 1)
BINARY = [("aten::add", ANY, lambda a, b: _int(a + b)),
          ("aten::sub", ANY, lambda a, b: _int(a - b)),
          ("aten::mul", ANY, lambda a, b: _int(a * b)),
          ("aten::div", ANY, _true_div),
          ("aten::floordiv", ANY, _floordiv),
          ("aten::remainder", ANY, _remainder),
          ("prim::max", NUM, _pick(operator.gt)),
          ("prim::min", NUM, _pick(operator.lt))] + \
         [(f"aten::{n}", ANY, getattr(operator, n)) for n in ("lt", "le", "gt", "ge", "eq", "ne")]
BOOL_BINARY = [("aten::__and__", operator.and_), ("aten::__or__", operator.or_),
               ("aten::__xor__", operator.xor), ("aten::eq", operator.eq), ("aten::ne", operator.ne)]
UNARY = [("aten::Float", "int", float), ("aten::Int", "float", _to_int),
         ("aten::Bool", "int", bool), ("aten::Bool", "float", bool),
         ("aten::neg", "int", lambda a: _int(-a)), ("aten::neg", "float", operator.neg),
         ("prim::abs", "float", abs), ("aten::__not__", "bool", operator.not_),
         ("aten::floor", "float", lambda x: _to_int(math.floor(x)) if math.isfinite(x) else _to_int(x))]

INTS = st.one_of(st.integers(-20, 20), st.integers(*INT64), st.sampled_from([INT64[0], -1, 0]))
FLOATS = st.one_of(st.floats(-50, 50), st.floats(allow_nan=True, allow_infinity=True),
                   st.sampled_from([0.0, -0.0, 0.5, -2.5, math.inf, 2.0 ** 63]))


def _kind(value) -> str:
    return "bool" if isinstance(value, bool) else "int" if isinstance(value, int) else "float"


def _refused_kind(op: str, kinds: list) -> str:
    """The declared type of a node whose value Python refuses to compute."""
    if op in ("aten::Int", "aten::floor"):
        return "int"
    return "float" if "float" in kinds or op == "aten::div" else "int"


@st.composite
def straight_line(draw):
    """(IR text, input values, Python's results or Refused) of a random straight-line program."""
    inputs = [("a", draw(INTS)), ("b", draw(INTS)), ("x", draw(FLOATS)), ("y", draw(FLOATS)),
              ("p", draw(st.booleans())), ("q", draw(st.booleans()))]
    values = dict(inputs)
    names = {k: [n for n, v in inputs if _kind(v) == k] for k in ("int", "float", "bool")}
    lines, outputs, refused = [], [], None
    for i in range(draw(st.integers(1, 6))):
        choice = draw(st.integers(0, 2))
        if choice == 0:
            op, kinds, ref = draw(st.sampled_from(BINARY))
            a = draw(st.sampled_from(names[draw(st.sampled_from(kinds))]))
            b = draw(st.sampled_from(names[draw(st.sampled_from(kinds))]))
            args = (a, b)
        elif choice == 1:
            op, ref = draw(st.sampled_from(BOOL_BINARY))
            args = (draw(st.sampled_from(names["bool"])), draw(st.sampled_from(names["bool"])))
        else:
            op, kind, ref = draw(st.sampled_from(UNARY))
            args = (draw(st.sampled_from(names[kind])),)
        try:
            result = ref(*[values[n] for n in args])
        except Refused as e:
            refused, result = e, None
        kind = _kind(result) if refused is None else _refused_kind(op, [_kind(values[n]) for n in args])
        name = f"v{i}"
        values[name] = result
        names[kind].append(name)
        lines.append(f"  %{name} : {kind} = {op}({', '.join('%' + n for n in args)})")
        outputs.append(name)
        if refused is not None:
            break
    header = ", ".join(f"%{n} : {_kind(v)}" for n, v in inputs)
    text = f"graph({header}):\n" + "\n".join(lines) + f"\n  return ({', '.join('%' + n for n in outputs)})\n"
    want = refused if refused is not None else [values[n] for n in outputs]
    return text, [v for _, v in inputs], want


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(straight_line())
def test_straight_line_programs_follow_python_semantics(case):
    text, args, want = case
    unit = _unit(text)
    status, got = unit.call(args)
    if isinstance(want, Refused):
        assert status == STATUS_REFUSED, (text, args, got)
        return
    assert status == 0, (text, args)
    assert all(_same(g, w) for g, w in zip(got, want)), (text, args, got, want)
    interpreted = Interpreter(parse_ir(text)).run(list(args))
    assert all(_same(g, w) for g, w in zip(got, interpreted)), (text, args, got, interpreted)


def test_mixed_max_and_min_have_the_schemas_float_type():
    """prim::max.int_float(0, 0.0) is the float 0.0 in the interpreter as in programs (Python's
    max would give the int 0), so its negation is -0.0 in both."""
    text = ("graph(%a : int, %x : float):\n  %m : float = prim::max(%a, %x)\n"
            "  %n : float = aten::neg(%m)\n  %k : float = prim::min(%x, %a)\n  return (%n, %k)\n")
    got = _unit(text).call([0, 0.0])
    interpreted = Interpreter(parse_ir(text)).run([0, 0.0])
    assert got[0] == 0 and all(type(v) is float for v in got[1] + interpreted)
    assert [math.copysign(1, v) for v in interpreted] == [math.copysign(1, v) for v in got[1]] == [-1, 1]


def test_mixed_int_float_comparisons_are_exact():
    unit = _unit("graph(%a : int, %x : float):\n"
                 "  %lt : bool = aten::lt(%a, %x)\n  %eq : bool = aten::eq(%a, %x)\n"
                 "  %gt : bool = aten::gt(%x, %a)\n  return (%lt, %eq, %gt)\n")
    for a, x in [(2 ** 53 + 1, 2.0 ** 53), (2 ** 63 - 1, 2.0 ** 63), (-(2 ** 63), -(2.0 ** 63)),
                 (3, math.nan), (3, 3.0), (-1, -0.5), (7, math.inf)]:
        assert unit.call([a, x]) == (0, [a < x, a == x, x > a]), (a, x)


def test_arguments_of_another_type_are_refused_before_running():
    unit = _unit("graph(%a : int, %x : float):\n  %s : float = aten::add(%a, %x)\n  return (%s)\n")
    assert unit.call([1, 2.5]) == (0, [3.5])
    for args in ([1.0, 2.5], [True, 2.5], [2 ** 63, 2.5], [1, 2], [np.int64(1), 2.5]):
        assert unit.call(args)[0] == STATUS_ARGUMENT, args


# ---- control flow

NESTED_LOOPS = """graph(%n : int, %m : int):
  %true : bool = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %zerof : float = prim::Constant[value=0.]()
  %big : int = prim::Constant[value=9223372036854775807]()
  %step : float = prim::Constant[value=0.01]()
  %one : int = prim::Constant[value=1]()
  %acc : float, %total : int = prim::Loop(%n, %true, %zerof, %zero)
    block0(%i : int, %acc.1 : float, %total.1 : int):
      %go : bool = aten::lt(%zero, %m)
      %acc.3 : float, %total.3 : int, %j : int = prim::Loop(%big, %go, %acc.1, %total.1, %zero)
        block0(%k : int, %acc.2 : float, %total.2 : int, %j.1 : int):
          %im : int = aten::mul(%i, %m)
          %ij : int = aten::add(%im, %j.1)
          %f : float = aten::Float(%ij)
          %scaled : float = aten::mul(%f, %step)
          %acc.4 : float = aten::add(%acc.2, %scaled)
          %prod : int = aten::mul(%i, %j.1)
          %total.4 : int = aten::add(%total.2, %prod)
          %j.2 : int = aten::add(%j.1, %one)
          %again : bool = aten::lt(%j.2, %m)
          -> (%again, %acc.4, %total.4, %j.2)
      -> (%true, %acc.3, %total.3)
  return (%acc, %total)
"""


def _nested_loops(n, m):
    acc, total = 0.0, 0
    for i in range(n):
        j = 0
        if 0 < m:
            while True:
                acc += float(i * m + j) * 0.01
                total += i * j
                j += 1
                if not j < m:
                    break
    return [acc, total]


@pytest.mark.parametrize("n,m", [(0, 3), (-2, 3), (1, 0), (3, 4), (17, 9)])
def test_nested_loops_with_carried_values_and_while_conditions(n, m):
    assert _unit(NESTED_LOOPS).call([n, m]) == (0, _nested_loops(n, m))


EARLY_RETURN = """graph(%k : int, %x : float):
  %big : int = prim::Constant[value=9223372036854775807]()
  %false : bool = prim::Constant[value=0]()
  %true : bool = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %half : float = prim::Constant[value=0.5]()
  %small : float = prim::Constant[value=0.01]()
  %nan : float = prim::Constant[value=-1.]()
  %go : bool = aten::gt(%k, %zero)
  %returned : bool, %ret : float, %y : float, %i : int = prim::Loop(%big, %go, %false, %nan, %x, %zero)
    block0(%t : int, %r.1 : bool, %ret.1 : float, %y.1 : float, %i.1 : int):
      %y.2 : float = aten::mul(%y.1, %half)
      %done : bool = aten::lt(%y.2, %small)
      %stop : bool, %r.2 : bool, %ret.2 : float = prim::If(%done)
        block0():
          -> (%false, %true, %y.2)
        block1():
          -> (%true, %false, %ret.1)
      %i.2 : int = aten::add(%i.1, %one)
      %more : bool = aten::lt(%i.2, %k)
      %cont : bool = aten::__and__(%more, %stop)
      -> (%cont, %r.2, %ret.2, %y.2, %i.2)
  %out : float = prim::If(%returned)
    block0():
      -> (%ret)
    block1():
      %plus : float = aten::add(%y, %one)
      -> (%plus)
  return (%out, %i)
"""


def _early_return(k, x):
    i, y = 0, x
    while i < k:
        y = y * 0.5
        i += 1
        if y < 0.01:
            return [y, i]
    return [y + 1, i]


@pytest.mark.parametrize("k,x", [(0, 1.0), (3, 1.0), (40, 1.0), (40, -3.0), (5, math.nan)])
def test_loop_with_early_return_flags_as_the_frontend_prints_them(k, x):
    status, got = _unit(EARLY_RETURN).call([k, x])
    assert status == 0 and all(_same(g, w) for g, w in zip(got, _early_return(k, x)))


def test_if_merges_branches_of_different_kinds_into_the_declared_type():
    unit = _unit("graph(%p : bool, %a : int):\n  %t : bool = prim::Constant[value=1]()\n"
                 "  %r : int = prim::If(%p)\n    block0():\n      -> (%t)\n"
                 "    block1():\n      %s : int = aten::add(%a, %a)\n      -> (%s)\n  return (%r)\n")
    assert unit.call([True, 5]) == (0, [1])
    assert unit.call([False, 5]) == (0, [10])


# ---- errors: refused natively, raised by the interpreter

def test_division_by_zero_is_refused_and_the_interpreter_raises_it():
    source = ("graph(%a : int, %b : int):\n  %q : int = aten::floordiv(%a, %b)\n"
              "  %r : int = aten::remainder(%a, %b)\n  %s : int = aten::add(%q, %r)\n  return (%s)\n")
    assert _unit(source).call([7, 0])[0] == STATUS_REFUSED
    fn = irjit.compile(source)
    assert fn.run(-7, 2) == [-4 + 1]
    with pytest.raises(Exception) as native_error:
        fn.run(7, 0)
    with pytest.raises(Exception) as interpreted_error:
        irjit.load(source).run(7, 0)
    # the same error; the native runner's graph copy has no .ir line numbers to report
    assert type(native_error.value) is type(interpreted_error.value)
    assert str(native_error.value).split(": ", 1)[1] == str(interpreted_error.value).split(": ", 1)[1]
    assert "division by 0" in str(native_error.value)


def test_int_of_nan_and_overflow_are_refused():
    unit = _unit("graph(%x : float, %a : int):\n  %i : int = aten::Int(%x)\n"
                 "  %m : int = aten::mul(%a, %a)\n  return (%i, %m)\n")
    assert unit.call([2.9, 3]) == (0, [2, 9])
    assert unit.call([-2.9, 3]) == (0, [-2, 9])
    for args in ([math.nan, 1], [math.inf, 1], [1e19, 1], [1.0, 2 ** 32]):
        assert unit.call(args)[0] == STATUS_REFUSED, args


def test_power_is_float_and_zero_to_a_negative_power_is_refused():
    unit = _unit("graph(%a : int, %b : int, %x : float):\n  %p : float = aten::pow(%a, %b)\n"
                 "  %q : float = aten::pow(%x, %b)\n  return (%p, %q)\n")
    status, (p, q) = unit.call([2, 10, 1.5])
    assert status == 0 and p == pytest.approx(1024.0, rel=1e-15) and q == pytest.approx(1.5 ** 10, rel=1e-15)
    assert unit.call([0, -1, 1.0])[0] == STATUS_REFUSED
    assert unit.call([1, -1, 0.0])[0] == STATUS_REFUSED


# ---- the autograd-zero guards

GUARD = """graph(%g0 : Tensor, %g1 : Tensor, %g2 : Tensor):
  %nz : bool = prim::AutogradAllNonZero(%g0, %g1)
  %z : bool = prim::AutogradAllZero(%g2)
  %l : bool[] = prim::ListConstruct(%nz, %z)
  %ok : bool = aten::all(%l)
  %any : int = prim::AutogradAnyNonZero(%g1, %g2)
  return (%ok, %any)
"""


@pytest.mark.parametrize("defined", [(1, 1, 0), (1, 0, 0), (0, 0, 0), (1, 1, 1), (0, 1, 1)])
def test_autograd_zero_guards_see_none_and_defined_tensors(defined):
    args = [np.ones(2, np.float32) if d else None for d in defined]
    want = [bool(defined[0] and defined[1] and not defined[2]), bool(defined[1] or defined[2])]
    assert _unit(GUARD).call(args) == (0, want)
    tensors = [None if a is None else irjit.Tensor(a) for a in args]  # None: an undefined grad
    graph = parse_ir(GUARD)
    assert Interpreter(graph).run_block(graph.block, tensors, {}) == want


def test_the_guard_becomes_one_program_in_front_of_the_specialized_branch():
    graph = parse_ir("""graph(%g0 : Float(2, strides=[1], device=cpu)):
  %t : bool = prim::Constant[value=1]()
  %nz : bool = prim::AutogradAllNonZero(%g0)
  %l : bool[] = prim::ListConstruct(%nz, %t)
  %ok : bool = aten::all(%l)
  %r : Tensor = prim::If(%ok)
    block0():
      %m : Float(2, strides=[1], device=cpu) = aten::mul(%g0, %g0)
      -> (%m)
    block1():
      -> (%g0)
  return (%r)
""")
    native_partition(graph)
    groups = [n for n in graph.walk() if n.kind == GROUP]
    assert len(groups) == 2
    guard = groups[0].attr("Subgraph")
    assert is_scalar_program(guard)
    assert [n.kind for n in guard.nodes() if n.kind != "prim::Constant"] == [
        "prim::AutogradAllNonZero", "prim::ListConstruct", "aten::all"]


# ---- lists

LIST_SUM = """graph(%xs : int[], %fs : float[], %k : int, %x : float):
  %true : bool = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %n : int = aten::len(%xs)
  %total : int = prim::Loop(%n, %true, %zero)
    block0(%i : int, %t.1 : int):
      %v : int = aten::__getitem__(%xs, %i)
      %t.2 : int = aten::add(%t.1, %v)
      -> (%true, %t.2)
  %at : int = aten::__getitem__(%xs, %k)
  %in : bool = aten::__contains__(%xs, %k)
  %fin : bool = aten::__contains__(%fs, %x)
  %all : bool = aten::all(%xs)
  return (%total, %at, %in, %fin, %all)
"""


@pytest.mark.parametrize("xs,fs,k,x", [([1, 2, 3, 4, 6], [0.5, -0.0], -1, 0.0), ([5], [], 0, 1.0),
                                       ([0, 7], [2.0], 1, 2.0), ([2 ** 62, 2 ** 62 - 1], [1.0], -2, 3.0)])
def test_list_arguments_are_read_in_place_with_python_indexing(xs, fs, k, x):
    graph = parse_ir(LIST_SUM)
    want = Interpreter(graph).run([list(xs), list(fs), k, x])
    assert _unit(LIST_SUM).call([xs, fs, k, x]) == (0, want)


def test_list_indices_out_of_range_nan_items_and_foreign_elements_are_refused():
    unit = _unit(LIST_SUM)
    assert unit.call([[1, 2], [1.0], 2, 1.0])[0] == STATUS_REFUSED  # xs[2] raises
    assert unit.call([[], [1.0], 0, 1.0])[0] == STATUS_REFUSED
    assert unit.call([[1, 2], [math.nan], 0, math.nan])[0] == STATUS_REFUSED  # nan in [nan] is identity
    for xs, fs in (([1, 2.0], [1.0]), ([1, True], [1.0]), ([2 ** 63], [1.0]), ((1, 2), [1.0]), ([1], [1])):
        assert unit.call([xs, fs, 0, 1.0])[0] == STATUS_ARGUMENT, (xs, fs)


# ---- numbers read from one-element tensors

def test_numbers_of_one_element_tensors_are_read_through_the_array_guards():
    unit = _unit("graph(%t : Float(requires_grad=0, device=cpu), %u : Long(1, strides=[1], device=cpu),\n"
                 "      %v : Bool(1, 1, strides=[1, 1], device=cpu)):\n"
                 "  %f : float = aten::Float(%t)\n  %i : int = aten::Int(%t)\n"
                 "  %j : int = aten::Int(%u)\n  %g : float = aten::Float(%u)\n"
                 "  %b : bool = aten::Bool(%v)\n  %c : bool = aten::Bool(%t)\n"
                 "  %s : float = aten::FloatImplicit(%t)\n"
                 "  return (%f, %i, %j, %g, %b, %c, %s)\n")
    t, u, v = np.array(-2.5, np.float32), np.array([7]), np.array([[True]])
    assert unit.call([t, u, v]) == (0, [-2.5, -2, 7, 7.0, True, True, -2.5])
    assert unit.call([np.array(np.nan, np.float32), u, v])[0] == STATUS_REFUSED  # int(nan)
    for bad in ([t.astype(np.float64), u, v], [t, np.array([7, 8]), v], [None, u, v],
                [t, u, np.array([[1]])], [t, 7, v]):
        assert unit.call(bad)[0] != 0  # a guard refuses: dtype, size, None, not an array


def test_tensor_metadata_and_none_tests_are_checked_against_the_layout():
    unit = _unit("graph(%t : Float(2, 3, strides=[3, 1], device=cpu), %o : Tensor?, %d : int):\n"
                 "  %none : NoneType = prim::Constant()\n  %one : int = prim::Constant[value=1]()\n"
                 "  %r : int = aten::dim(%t)\n  %n : int = aten::numel(%t)\n"
                 "  %s1 : int = aten::size(%t, %one)\n  %sd : int = aten::size(%t, %d)\n"
                 "  %l : int = aten::len(%t)\n  %i : bool = aten::__is__(%o, %none)\n"
                 "  %j : bool = aten::__isnot__(%d, %none)\n"
                 "  return (%r, %n, %s1, %sd, %l, %i, %j)\n")
    t = np.zeros((2, 3), np.float32)
    assert unit.call([t, None, -2]) == (0, [2, 6, 3, 2, 2, True, True])
    assert unit.call([t, t, 1]) == (0, [2, 6, 3, 3, 2, False, True])
    assert unit.call([t, None, 2])[0] == STATUS_REFUSED  # size(t, 2) raises
    assert unit.call([np.zeros((3, 2), np.float32), None, 0])[0] != 0  # another layout


def test_a_tensor_of_several_elements_or_an_int_of_a_float_tensor_is_not_lowered():
    for body in ("%f : float = aten::Float(%t)", "%f : int = aten::IntImplicit(%s)"):
        graph = parse_ir("graph(%t : Float(2, strides=[1], device=cpu), %s : Float(device=cpu)):\n"
                         f"  {body}\n  return (%f)\n")
        assert get_unit(graph)[0] is None


# ---- partitioning

def test_number_nodes_around_a_tensor_op_in_a_loop_body_become_one_program():
    graph = parse_ir("""graph(%x : Float(3, strides=[1], device=cpu), %n : int, %m : int):
  %true : bool = prim::Constant[value=1]()
  %one : int = prim::Constant[value=1]()
  %step : float = prim::Constant[value=0.5]()
  %y : Float(3, strides=[1], device=cpu), %t : int = prim::Loop(%n, %true, %x, %one)
    block0(%i : int, %y.1 : Float(3, strides=[1], device=cpu), %t.1 : int):
      %im : int = aten::mul(%i, %m)
      %f : float = aten::Float(%im)
      %s : float = aten::mul(%f, %step)
      %y.2 : Float(3, strides=[1], device=cpu) = aten::add(%y.1, %s, %one)
      %t.2 : int = aten::add(%t.1, %i)
      %c : bool = aten::lt(%t.2, %m)
      -> (%c, %y.2, %t.2)
  return (%y, %t)
""")
    native_partition(graph)
    body = [n for n in graph.nodes() if n.kind == "prim::Loop"][0].blocks[0]
    kinds = [n.kind for n in body.nodes() if n.kind != "prim::Constant"]
    assert kinds == [GROUP, GROUP]  # the program (hoisted above the tensor op), then the kernel
    program = next(body.nodes()).attr("Subgraph")
    assert is_scalar_program(program)
    assert [n.kind for n in program.nodes() if n.kind != "prim::Constant"] == [
        "aten::mul", "aten::Float", "aten::mul", "aten::add", "aten::lt"]


def test_a_while_condition_on_a_tensor_sum_reads_the_sum_in_the_program():
    graph = parse_ir("""graph(%x : Float(3, strides=[1], device=cpu), %limit : float):
  %none : NoneType = prim::Constant()
  %big : int = prim::Constant[value=20]()
  %s : Float(device=cpu) = aten::sum(%x, %none)
  %f : float = aten::Float(%s)
  %lt : bool = aten::lt(%f, %limit)
  %go : bool = prim::If(%lt)
    block0():
      %i : bool = aten::lt(%limit, %big)
      -> (%i)
    block1():
      -> (%lt)
  return (%go)
""")
    native_partition(graph)
    groups = [n for n in graph.nodes() if n.kind == GROUP]
    assert len(groups) == 2 and not is_scalar_program(groups[0].attr("Subgraph"))
    program = groups[1].attr("Subgraph")
    assert [n.kind for n in program.nodes() if n.kind != "prim::Constant"] == [
        "aten::Float", "aten::lt", "prim::If"]
    fn = irjit.compile(str(graph))
    for limit in (1.0, 100.0, 7.0):
        x = np.array([1.0, 2.0, 3.0], np.float32)
        assert fn.run(x, limit) == irjit.load(str(graph)).run(x, limit)


def test_a_program_reads_a_tensor_that_requires_grad_natively(monkeypatch):
    """Number outputs need no autograd tape, so grad mode does not send a program to the
    interpreter (tensor units with such inputs still go there)."""
    from irjit.runtime.native import NativeRunner
    from tests.runtime.native_coverage import measured
    source = """graph(%t : Float(requires_grad=1, device=cpu), %limit : float):
  %f : float = aten::Float(%t)
  %lt : bool = aten::lt(%f, %limit)
  return (%lt)
"""
    runner = NativeRunner(parse_ir(source))
    t = irjit.Tensor(np.array(0.5, np.float32), requires_grad=True)
    assert runner.run([t, 1.0]) == [True]  # profiles and specializes
    with measured(monkeypatch) as cov:
        assert runner.run([t, 0.25]) == [False]
    assert dict(cov.native) == {"aten::Float": 1, "aten::lt": 1} and not cov.interpreted


def test_programs_are_not_moved_across_side_effects():
    graph = parse_ir("""graph(%a : int, %b : int):
  %s : str = prim::Constant[value="x"]()
  %c : int = aten::add(%a, %b)
   = prim::Print(%s)
  %d : int = aten::mul(%a, %b)
  return (%c, %d)
""")
    native_partition(graph)
    kinds = [n.kind for n in graph.nodes() if n.kind != "prim::Constant"]
    assert kinds == [GROUP, "prim::Print", GROUP]


def test_a_list_read_outside_programs_is_built_outside_and_passed_in():
    graph = parse_ir("""graph(%p : bool, %q : bool):
  %l : bool[] = prim::ListConstruct(%p, %q)
  %t : (bool[]) = prim::TupleConstruct(%l)
  %all : bool = aten::all(%l)
  %n : int = aten::len(%l)
  %m : int = aten::mul(%n, %n)
  return (%all, %m, %t)
""")
    native_partition(graph)
    kinds = [n.kind for n in graph.nodes() if n.kind != "prim::Constant"]
    assert kinds == ["prim::ListConstruct", "prim::TupleConstruct", GROUP]
    unit, _ = get_unit(list(graph.nodes())[-1].attr("Subgraph"))
    assert unit.call([[True, False]]) == (0, [False, 4])
    assert unit.call([[True, True]]) == (0, [True, 4])


def test_programs_are_not_moved_across_writes_to_a_tensor_they_read():
    graph = parse_ir("""graph(%t : Float(requires_grad=0, device=cpu)):
  %one : int = prim::Constant[value=1]()
  %a : float = aten::Float(%t)
  %u : Float(requires_grad=0, device=cpu) = aten::add_(%t, %one, %one)
  %b : float = aten::Float(%t)
  return (%a, %b)
""")
    native_partition(graph)
    kinds = [n.kind for n in graph.nodes() if n.kind != "prim::Constant"]
    assert kinds == [GROUP, "aten::add_", GROUP]


def test_nodes_a_program_cannot_lower_stay_outside_it():
    graph = parse_ir("""graph(%a : int, %l : str[]):
  %c : int = aten::add(%a, %a)
  %n : int = aten::len(%l)
  %d : int = aten::mul(%c, %n)
  return (%d)
""")
    native_partition(graph)
    kinds = [n.kind for n in graph.nodes() if n.kind != "prim::Constant"]
    assert kinds == [GROUP, "aten::len", GROUP]
