"""TorchScript's number builtins (ops/scalar*.py): overload resolution, TorchScript's
semantics where they differ from Python's, conversions and errors."""

import math

import numpy as np
import pytest

import irjit.ops  # noqa: F401  (registers every op)
from irjit.runtime.autograd import run_op
from irjit.ops.registry import find_op
from irjit.ops.tensor import Tensor


def overload(kind, *args):
    return find_op(kind, list(args)).schema.full_name


def test_overload_resolution():
    assert overload("aten::add", 1, 2) == "aten::add.int"
    assert overload("aten::add", 1, 2.0) == "aten::add.int_float"
    assert overload("aten::add", 1.0, 2) == "aten::add.float_int"
    assert overload("aten::mul", 2.0, 3.0) == "aten::mul.float"
    assert overload("aten::eq", "a", "b") == "aten::eq.str"
    assert overload("aten::eq", [1], [1]) == "aten::eq.int_list"
    assert overload("aten::floor", 2.5) == "aten::floor.float"
    assert overload("prim::max", [1, 2]) == "prim::max.self_int"


def test_arithmetic():
    assert run_op("aten::add", 1, 2) == 3 and isinstance(run_op("aten::add", 1, 2.0), float)
    assert run_op("aten::div", 7, 2) == 3.5
    assert run_op("aten::div", 1, 0) == math.inf and run_op("aten::div", -1.0, 0.0) == -math.inf
    assert math.isnan(run_op("aten::div", 0, 0))
    assert run_op("aten::floordiv", -7, 2) == -4 and run_op("aten::floordiv", -7.5, 2.0) == -4.0
    assert run_op("aten::floordiv", 1.0, 0.0) == math.inf
    assert run_op("aten::remainder", -7, 2) == 1 and run_op("aten::remainder", 7, -2) == -1
    assert run_op("aten::remainder", -7.5, 2.0) == 0.5
    assert math.isnan(run_op("aten::remainder", 1.0, 0.0))
    assert run_op("aten::fmod", -7, 2) == -1.0
    with pytest.raises(ZeroDivisionError):
        run_op("aten::floordiv", 1, 0)
    with pytest.raises(ZeroDivisionError):
        run_op("aten::remainder", 1, 0)
    assert run_op("aten::__round_to_zero_floordiv", -7, 2) == -3


def test_pow_and_neg():
    assert run_op("aten::pow", 2, 3) == 8.0 and isinstance(run_op("aten::pow", 2, 3), float)
    assert run_op("aten::pow", 2, -1) == 0.5
    assert math.isnan(run_op("aten::pow", -8.0, 1 / 3))
    with pytest.raises(ZeroDivisionError, match="negative power"):
        run_op("aten::pow", 0.0, -1.0)
    assert run_op("aten::neg", 3) == -3 and run_op("prim::abs", -2.5) == 2.5


def test_comparisons_and_logic():
    assert run_op("aten::lt", 1, 1.5) is True
    assert run_op("aten::eq", 1, 1.0) is True
    assert run_op("aten::ge", "b", "a") is True
    assert run_op("aten::ne", [1, 2], [1, 3]) is True
    assert run_op("aten::eq", [np.array(1.0)], [np.array(1.0)]) is True
    with pytest.raises(RuntimeError, match="more than one value is ambiguous"):
        run_op("aten::eq", [Tensor(np.ones(2))], [Tensor(np.ones(2))])
    assert run_op("aten::__and__", True, False) is False
    assert run_op("aten::__xor__", 6, 3) == 5
    assert run_op("aten::__not__", False) is True


def test_is_and_isnot():
    t = Tensor(np.zeros(1))
    assert run_op("aten::__is__", None, None) is True
    assert run_op("aten::__isnot__", t, None) is True
    assert run_op("aten::__is__", t, t) is True
    assert run_op("aten::__is__", t, Tensor(np.zeros(1))) is False
    assert run_op("aten::__is__", 1, 1) is True and run_op("aten::__is__", 1, True) is False
    assert run_op("aten::__is__", [1], [1]) is False


def test_min_max():
    assert run_op("prim::max", 1, 2.5) == 2.5
    assert run_op("prim::min", 1, 2.0) == 1.0 and isinstance(run_op("prim::min", 1, 2.0), float)
    assert math.isnan(run_op("prim::max", math.nan, 1.0))
    assert run_op("prim::max", [3, 7, 1]) == 7 and run_op("prim::min", [3.0, -1.0]) == -1.0
    assert run_op("prim::max", [1, 2], [1, 3]) == [1, 3]
    with pytest.raises(ValueError, match="max\\(\\) arg is an empty sequence"):
        run_op("prim::max", [])


def test_math_functions():
    assert run_op("aten::sqrt", 4) == 2.0
    assert math.isnan(run_op("aten::sqrt", -1.0))
    assert run_op("aten::log", -0.0) == -math.inf
    assert run_op("aten::exp", 1000.0) == math.inf
    assert run_op("aten::floor", -2.5) == -3 and isinstance(run_op("aten::floor", -2.5), int)
    assert run_op("aten::ceil", 2.1) == 3
    assert run_op("aten::round", 2.5) == 2.0 and run_op("aten::round", -0.5) == -0.0
    assert run_op("aten::log", 8, 2) == pytest.approx(3.0)
    assert run_op("aten::isnan", math.nan) is True
    assert run_op("aten::gcd", 12, 18) == 6 and run_op("aten::factorial", 5) == 120
    with pytest.raises(ValueError, match="factorial\\(\\) not defined for negative values"):
        run_op("aten::factorial", -1)
    assert run_op("aten::copysign", 2, -0.0) == -2.0
    assert run_op("aten::sum", [1, 2, 3]) == 6 and run_op("aten::sum", [0.5, 0.25]) == 0.75
    assert run_op("aten::sum", [True, True]) == 2


def test_conversions():
    assert run_op("aten::Int", Tensor(np.array(2.7))) == 2
    assert run_op("aten::Int", Tensor(np.array([3]))) == 3
    with pytest.raises(RuntimeError, match="a Tensor with 2 elements cannot be converted to Scalar"):
        run_op("aten::Int", Tensor(np.array([1, 2])))
    assert run_op("aten::Int", -2.7) == -2 and run_op("aten::Int", True) == 1
    assert run_op("aten::Int", "-12") == -12
    with pytest.raises(ValueError, match="invalid literal for int\\(\\) with base 10: ' 12 '"):
        run_op("aten::Int", " 12 ")
    assert run_op("aten::Float", " 1.5e3") == 1500.0 and run_op("aten::Float", "2.5abc") == 2.5
    with pytest.raises(ValueError):
        run_op("aten::Float", "abc")
    assert run_op("aten::Float", Tensor(np.array(3))) == 3.0
    assert run_op("aten::Bool", Tensor(np.array([0.5]))) is True and run_op("aten::Bool", 0) is False
    assert run_op("aten::IntImplicit", Tensor(np.array(4))) == 4
    assert run_op("aten::FloatImplicit", Tensor(np.array(4))) == 4.0
    assert run_op("aten::ScalarImplicit", Tensor(np.array(1.5))) == 1.5
    with pytest.raises(RuntimeError, match="dimension other than 0"):
        run_op("aten::ScalarImplicit", Tensor(np.array([1.5])))
    with pytest.raises(RuntimeError, match="Cannot input a tensor of type Float as an integral argument"):
        run_op("aten::IntImplicit", Tensor(np.array(1.5, dtype=np.float32)))
