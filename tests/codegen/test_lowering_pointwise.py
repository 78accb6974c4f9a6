"""Native pointwise rules (ops/lowering_pointwise.py) against the interpreter: integer and
float division and modulo (division by zero is a bailout and the interpreter's error),
bitwise ops, float classification, integer powers, tensor clamp bounds, activations and
their backward ops; in-place ops on fresh tensors fuse, aliased ones stay interpreted."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from irjit.compiler import parse_ir
from irjit.compiler.codegen.entry import describe_status
from irjit.compiler.codegen.lower import lower_group
from irjit.compiler.codegen.unit import NativeUnit
from irjit.ops.lowering_common import NotLowerable
from irjit.ops.errors import IRRuntimeError
from irjit.ops.tensor import Tensor
from irjit.runtime.autograd import no_grad
from irjit.runtime.native import NativeRunner

from . import typed_graph
from .lowering_check import assert_native_matches, interpreted, run_native


@pytest.fixture(params=[False, True], ids=["plain", "bounds-checked"])
def checks(request, monkeypatch):
    monkeypatch.setenv("IRJIT_NATIVE_CHECKS", "1" if request.param else "0")


def _binary(op: str, extra: str = "") -> str:
    return f"""graph(%x : Tensor, %y : Tensor):
  %r : Tensor = {op}(%x, %y{extra})
  return (%r)"""


def _unary(op: str, extra: str = "") -> str:
    return f"""graph(%x : Tensor):
  %r : Tensor = {op}(%x{extra})
  return (%r)"""


def _divisor(a: np.ndarray) -> np.ndarray:
    return np.where(a == 0, 3, a).astype(a.dtype)


INTS = hnp.arrays(np.int64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=5),
                  elements=st.integers(-50, 50))
FLOATS = st.sampled_from([np.float32, np.float64])

DIVISIONS = ["aten::floor_divide", "aten::remainder", "aten::fmod"]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(DIVISIONS), INTS, st.booleans())
def test_integer_division_and_modulo(checks, op, a, transposed):
    b = _divisor(a[::-1].copy())
    if transposed and a.ndim >= 2:
        a = np.ascontiguousarray(a.swapaxes(0, 1)).swapaxes(0, 1)
    assert_native_matches(_binary(op), [a, b])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(DIVISIONS), INTS, FLOATS, st.sampled_from([0.0, 0.75, -2.5]))
def test_float_division_and_modulo(checks, op, a, dtype, zero_fill):
    x = a.astype(dtype) / 4
    y = np.where(a[::-1] % 5 == 0, zero_fill, a[::-1] / 3).astype(dtype)  # zeros: IEEE results
    assert_native_matches(_binary(op), [x, y])


@pytest.mark.parametrize("mode", ["trunc", "floor"])
@pytest.mark.parametrize("dtype", [np.int64, np.float32, np.float64])
def test_div_rounding_modes(checks, mode, dtype):
    text = f"""graph(%x : Tensor, %y : Tensor):
  %mode : str = prim::Constant[value="{mode}"]()
  %r : Tensor = aten::div(%x, %y, %mode)
  return (%r)"""
    x = np.array([[7, -7, 7, -7, 0, -9223372036854775807 - 1]], np.int64)
    y = np.array([[2, 2, -2, -2, 5, -1]], np.int64)
    if dtype != np.int64:
        x, y = x[:, :5], y[:, :5]
    assert_native_matches(text, [x.astype(dtype), y.astype(dtype)])


def test_int_min_divided_by_minus_one_does_not_trap():
    x = np.array([np.iinfo(np.int64).min, 5], np.int64)
    for op in DIVISIONS:
        assert_native_matches(_binary(op), [x, np.array([-1, -1], np.int64)])


@pytest.mark.parametrize("op", DIVISIONS + ["aten::div.mode"])
def test_integer_division_by_zero_bails_out_and_raises_the_interpreters_error(checks, op):
    text = _binary("aten::div", ', %mode') if op == "aten::div.mode" else _binary(op)
    text = text.replace("graph(%x : Tensor, %y : Tensor):",
                        'graph(%x : Tensor, %y : Tensor):\n  %mode : str = prim::Constant[value="floor"]()')
    runner = NativeRunner(parse_ir(text))
    x = np.arange(6, dtype=np.int64).reshape(2, 3)
    with no_grad():
        runner.run([Tensor(x), Tensor(x + 1)])  # profiles
        runner.run([Tensor(x), Tensor(x + 1)])  # native
        assert runner.stats.nodes_native == 1 and runner.stats.bailouts == 0
        with pytest.raises(IRRuntimeError, match="ZeroDivisionError"):
            runner.run([Tensor(x), Tensor(x)])  # a zero divisor at [0, 0]
    assert runner.stats.bailouts == 1


@pytest.mark.parametrize("op", ["aten::__and__", "aten::__or__", "aten::__xor__"])
@pytest.mark.parametrize("dtypes", [(np.int64, np.int64), (np.bool_, np.bool_), (np.int64, np.bool_)])
def test_bitwise(checks, op, dtypes):
    rng = np.random.default_rng(3)
    x = rng.integers(-9, 9, (3, 4)).astype(dtypes[0])
    y = rng.integers(-9, 9, (3, 4)).astype(dtypes[1])
    assert_native_matches(_binary(op), [x, y])


def test_bitwise_of_floats_raises_as_the_interpreter_does():
    x = np.ones((2, 2), np.float32)
    with pytest.raises(IRRuntimeError, match="bitwise_and"):
        run_native(_binary("aten::__and__"), [x, x])


@pytest.mark.parametrize("op", ["aten::isinf", "aten::isfinite", "aten::isnan", "aten::nan_to_num",
                                "aten::bitwise_not"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.bool_])
def test_classification_and_cleanup(checks, op, dtype):
    x = np.array([[np.inf, -np.inf, np.nan, 1.5], [0.0, -2.0, 3e38, -7.0]])
    if dtype in (np.int64, np.bool_):
        x = np.clip(np.nan_to_num(x, posinf=9, neginf=-9), -100, 100)
    elif op == "aten::bitwise_not":
        return  # PyTorch refuses bitwise ops on floats
    assert_native_matches(_unary(op), [x.astype(dtype)])


def test_nan_to_num_with_replacements(checks):
    text = """graph(%x : Tensor):
  %a : float = prim::Constant[value=1.5]()
  %b : float = prim::Constant[value=100.]()
  %c : float = prim::Constant[value=-100.]()
  %r : Tensor = aten::nan_to_num(%x, %a, %b, %c)
  return (%r)"""
    assert_native_matches(text, [np.array([np.nan, np.inf, -np.inf, 2.0], np.float32)])


@pytest.mark.parametrize("exponent", [0, 1, 2, 3, 5, 8])
def test_integer_powers(checks, exponent):
    text = f"""graph(%x : Tensor):
  %e : int = prim::Constant[value={exponent}]()
  %r : Tensor = aten::pow(%x, %e)
  return (%r)"""
    assert_native_matches(text, [np.arange(-6, 6, dtype=np.int64).reshape(3, 4)])


@pytest.mark.parametrize("base", ["2.", "3", "0.5"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_powers_of_a_number(checks, base, dtype):
    """`aten::pow.Scalar` (a number base, as symbolic_script's pow_2 backward recomputes it)."""
    kind = "float" if "." in base else "int"
    text = f"""graph(%x : Tensor):
  %b : {kind} = prim::Constant[value={base}]()
  %r : Tensor = aten::pow(%b, %x)
  return (%r)"""
    assert_native_matches(text, [np.linspace(-3, 3, 12).astype(dtype).reshape(3, 4)])


@pytest.mark.parametrize("lambd", ["0.5", "2"])
def test_hardshrink_and_its_backward(checks, lambd):
    kind = "float" if "." in lambd else "int"
    text = f"""graph(%x : Tensor, %g : Tensor):
  %l : {kind} = prim::Constant[value={lambd}]()
  %y : Tensor = aten::hardshrink(%x, %l)
  %d : Tensor = aten::hardshrink_backward(%g, %x, %l)
  return (%y, %d)"""
    x = np.array([-3, -2, -1, -0.5, -0.25, 0, 0.25, 0.5, 1, 2, 3, 4], np.float32).reshape(3, 4)
    assert_native_matches(text, [x, np.arange(12, dtype=np.float32).reshape(3, 4)])


def test_clamp_with_tensor_bounds(checks):
    text = """graph(%x : Tensor, %lo : Tensor, %hi : Tensor):
  %none : NoneType = prim::Constant()
  %a : Tensor = aten::clamp(%x, %lo, %hi)
  %b : Tensor = aten::clamp(%x, %none, %hi)
  return (%a, %b)"""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    assert_native_matches(text, [x, np.full((4,), -0.5, np.float32), np.full((3, 1), 0.5, np.float32)])


@pytest.mark.parametrize("op, extra", [
    ("aten::mish", ""), ("aten::log_sigmoid", ""), ("aten::glu", ", %one"), ("aten::glu", ", %m1"),
    ("aten::prelu", ", %w"), ("aten::prelu", ", %w1"),
    ("aten::hardsigmoid_backward", ", %x2"), ("aten::hardswish_backward", ", %x2"),
    ("aten::mish_backward", ", %x2"), ("aten::softplus_backward", ", %x2, %one, %twenty"),
    ("aten::elu_backward", ", %one, %one, %one, %false, %x2"),
    ("aten::elu_backward", ", %one, %one, %one, %true, %x2"),
    ("aten::log_sigmoid_backward", ", %x2, %buf"),
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_activations_and_backward_ops(checks, op, extra, dtype):
    text = f"""graph(%x : Tensor, %x2 : Tensor, %w : Tensor, %w1 : Tensor, %buf : Tensor):
  %one : int = prim::Constant[value=1]()
  %m1 : int = prim::Constant[value=-1]()
  %twenty : int = prim::Constant[value=20]()
  %false : bool = prim::Constant[value=0]()
  %true : bool = prim::Constant[value=1]()
  %r : Tensor = {op}(%x{extra})
  return (%r)"""
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((2, 4, 6)) * 4).astype(dtype)
    x2 = (rng.standard_normal((2, 4, 6)) * 4).astype(dtype)
    w = rng.standard_normal((4,)).astype(dtype)
    w1 = np.array([0.25], dtype)
    buf = np.exp(-np.abs(x2))
    assert_native_matches(text, [x, x2, w, w1, buf], all_native=False)
    _, runner = run_native(text, [x, x2, w, w1, buf])
    assert runner.stats.nodes_interpreted == 0


INPLACE = """graph(%x : Tensor):
  %one : int = prim::Constant[value=1]()
  %two : float = prim::Constant[value=2.]()
  %lo : float = prim::Constant[value=-1.]()
  %hi : float = prim::Constant[value=3.]()
  %y : Tensor = aten::mul(%x, %two)
  %a : Tensor = aten::add_(%y, %x, %one)
  %b : Tensor = aten::clamp_(%y, %lo, %hi)
  %c : Tensor = aten::relu_(%y)
  %d : Tensor = aten::mul_(%y, %two)
  return (%y)"""


def test_inplace_ops_on_a_fresh_tensor_fuse(checks):
    runner = assert_native_matches(INPLACE, [np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4)])
    assert runner.stats.units == 1 and runner.stats.nodes_native == 5


@pytest.mark.parametrize("alias", ["aten::select(%y, %zero, %zero)", "aten::dropout(%y, %p, %false)"])
def test_inplace_ops_on_an_aliased_tensor_stay_interpreted_and_correct(checks, alias):
    text = f"""graph(%x : Tensor):
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %two : float = prim::Constant[value=2.]()
  %p : float = prim::Constant[value=0.5]()
  %false : bool = prim::Constant[value=0]()
  %y : Tensor = aten::mul(%x, %two)
  %v : Tensor = {alias}
  %a : Tensor = aten::add_(%v, %v, %one)
  %w : Tensor = aten::mul(%y, %two)
  return (%w, %y)"""
    runner = assert_native_matches(text, [np.arange(12, dtype=np.float32).reshape(3, 4)], all_native=False)
    assert runner.stats.nodes_interpreted >= 1


def test_inplace_ops_on_a_graph_input_stay_interpreted():
    text = """graph(%x : Tensor):
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::add_(%x, %x, %one)
  %r : Tensor = aten::relu(%a)
  return (%r)"""
    x = np.arange(4, dtype=np.float32)
    got, runner = run_native(text, [x.copy()])
    np.testing.assert_array_equal(got[0].data, 2 * x)
    assert runner.stats.nodes_interpreted == 1


@pytest.mark.parametrize("op", ["aten::add_(%y, %half, %one)", "aten::copy_(%y, %x, %false)",
                                "aten::mul_(%y, %f)"])
def test_inplace_ops_that_would_change_dtype_or_have_no_lowering_stay_interpreted(op):
    text = f"""graph(%x : Tensor, %f : Tensor):
  %one : int = prim::Constant[value=1]()
  %half : float = prim::Constant[value=0.5]()
  %false : bool = prim::Constant[value=0]()
  %y : Tensor = aten::mul(%x, %one)
  %a : Tensor = {op}
  return (%y)"""
    x = np.arange(6, dtype=np.int64).reshape(2, 3)
    f = np.full((2, 3), 1.5, np.float32)
    try:
        expected = [t.data for t in interpreted(text, [x, f])]
    except IRRuntimeError as e:  # PyTorch refuses to write a float result into an int tensor
        with pytest.raises(IRRuntimeError, match=str(e).split(": ", 2)[-1][:30]):
            run_native(text, [x, f])
        return
    got, runner = run_native(text, [x, f])
    np.testing.assert_array_equal(got[0].data, expected[0])
    assert runner.stats.nodes_interpreted == 1


@pytest.mark.parametrize("op", ["aten::silu", "aten::softplus", "aten::hardsigmoid", "aten::hardswish",
                                "aten::mish", "aten::log_sigmoid", "aten::prelu"])
def test_float_only_activations_of_integers_are_not_lowered(op):
    """The interpreter raises PyTorch's "not implemented" error for them: no unit computes a
    value instead."""
    text = _binary(op) if op == "aten::prelu" else _unary(op)
    graph = typed_graph(text, "Long(4), Long(1)" if op == "aten::prelu" else "Long(4)")
    graph.outputs[0].type = graph.inputs[0].type
    with pytest.raises(NotLowerable):
        lower_group(graph, "float_only")


def test_a_zero_divisor_is_the_units_status():
    graph = typed_graph(_binary("aten::remainder"), "Long(2, 3), Long(2, 3)")
    graph.outputs[0].type = graph.inputs[0].type
    unit = NativeUnit(graph, "remainder_status")
    x = np.arange(6, dtype=np.int64).reshape(2, 3)
    status, (out,) = unit.call([x, x + 1])
    assert status == 0 and out.tolist() == (x % (x + 1)).tolist()
    status, _ = unit.call([x, x])
    assert describe_status(status) == "argument 0: integer division by zero"
