"""Behaviour of the tensor pointwise ops (ops/pointwise*.py): values, result dtypes,
promotion, in-place variants and errors, against hand-derived or numpy reference values."""

import math

import numpy as np
import pytest

import irjit.ops  # noqa: F401  (registers every op)
from irjit.runtime.autograd import backward, run_op
from irjit.ops.tensor import Tensor


def T(x, dtype=None):
    return Tensor(np.asarray(x, dtype=dtype))


def run(kind, *args):
    out = run_op(kind, *args)
    return out.data if isinstance(out, Tensor) else out


I = np.array([-3, -1, 0, 2, 5])
F = np.array([-2.5, -0.5, 0.5, 1.5, 2.5], dtype=np.float32)


# ---- unary


@pytest.mark.parametrize("name,ref", [("exp", np.exp), ("log1p", np.log1p), ("sin", np.sin),
                                      ("atan", np.arctan), ("erf", np.vectorize(math.erf))])
def test_float_unary_promotes_ints_to_float32(name, ref):
    out = run(f"aten::{name}", T([0, 1, 2]))
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, ref(np.array([0.0, 1.0, 2.0])), rtol=1e-6)


def test_float_unary_keeps_float64_and_returns_0d_arrays():
    out = run("aten::sqrt", T(4.0))
    assert isinstance(out, np.ndarray) and out.shape == () and out.dtype == np.float64 and out == 2.0
    assert run("aten::rsqrt", T([4.0, 0.0])).tolist() == [0.5, math.inf]
    assert run("aten::reciprocal", T([True, False])).tolist() == [1.0, math.inf]


def test_integer_preserving_unary():
    assert run("aten::abs", T(I)).dtype == np.int64
    assert run("aten::floor", T(I)).tolist() == I.tolist()
    assert run("aten::sign", T(I)).tolist() == [-1, -1, 0, 1, 1]
    assert run("aten::sign", T([-0.0, math.nan, 2.0])).tolist() == [0.0, 0.0, 1.0]
    assert run("aten::square", T([True, False])).dtype == np.int64
    assert run("aten::round", T(F)).tolist() == [-2.0, -0.0, 0.0, 2.0, 2.0]  # half to even
    assert run("aten::frac", T(F)).tolist() == [-0.5, -0.5, 0.5, 0.5, 0.5]
    with pytest.raises(RuntimeError, match="Bool"):
        run("aten::abs", T([True]))
    with pytest.raises(RuntimeError, match="Long"):
        run("aten::frac", T(I))


def test_round_decimals():
    assert run("aten::round", T([1.2345, 125.0]), 2).tolist() == pytest.approx([1.23, 125.0])
    assert run("aten::round", T([1.2345, 125.0], np.float32), -1).tolist() == [0.0, 120.0]
    with pytest.raises(RuntimeError):
        run("aten::round", T(I), 1)


def test_unary_inplace_writes_into_self():
    x = T([0.0, 1.0])
    out = run_op("aten::exp_", x)
    assert out is x and x.data.tolist() == [1.0, math.e]
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        run_op("aten::exp_", T([1, 2]))


# ---- pow


def test_pow_promotion_and_integer_rules():
    assert run("aten::pow", T(I), 2).tolist() == [9, 1, 0, 4, 25]
    assert run("aten::pow", T(I), 2.0).dtype == np.float32
    assert run("aten::pow", T([True, False]), 2).dtype == np.int64
    assert run("aten::pow", 2, T(I)).tolist() == [0, 0, 1, 4, 32]
    assert run("aten::pow", 2.0, T(I)).dtype == np.float32
    assert run("aten::pow", T(I), T([2, 1, 0, 3, -1])).tolist() == [9, -1, 1, 8, 0]
    with pytest.raises(RuntimeError, match="negative integer powers"):
        run("aten::pow", T(I), -1)
    x = T([2.0, 3.0])
    assert run_op("aten::pow_", x, 2) is x and x.data.tolist() == [4.0, 9.0]


# ---- clamp


def test_clamp():
    assert run("aten::clamp", T(I), 1.5, None).tolist() == [1.5, 1.5, 1.5, 2.0, 5.0]
    assert run("aten::clamp", T(I), 1, 3).dtype == np.int64
    assert run("aten::clamp", T(F), 2, 1).tolist() == [1.0] * 5  # min > max gives max
    out = run("aten::clamp", T([math.nan, 1.0]), 0, 0.5)
    assert math.isnan(out[0]) and out[1] == 0.5
    assert run("aten::clamp", T(F), T([0]), None).dtype == np.float32
    assert run("aten::clamp_min", T(I), 0).tolist() == [0, 0, 0, 2, 5]
    assert run("aten::clip", T(I), None, 0).tolist() == [-3, -1, 0, 0, 0]
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max'"):
        run("aten::clamp", T(F), None, None)
    with pytest.raises(RuntimeError, match="can't be cast"):
        run_op("aten::clamp_", T(I), 1.5, None)


def test_clamp_gradients_follow_pytorch():
    x = Tensor(np.array([0.5, 3.0]), requires_grad=True)
    lo = Tensor(np.array([1.0, 1.0]), requires_grad=True)
    out = run_op("aten::clamp", x, lo, None)
    gx, glo = backward([out], [np.ones(2)], inputs=[x, lo])
    assert gx.tolist() == [0.0, 1.0] and glo.tolist() == [1.0, 0.0]


# ---- where / masked_fill


def test_where_dtypes_and_errors():
    b = T([True, False])
    assert run("aten::where", b, 1.0, 0).dtype == np.float32
    assert run("aten::where", b, 1, 0).dtype == np.int64
    assert run("aten::where", b, True, False).dtype == np.bool_
    assert run("aten::where", b, T([1, 2]), 2.5).tolist() == [1.0, 2.5]
    with pytest.raises(RuntimeError, match="boolean tensor, but got a tensor with dtype Long"):
        run("aten::where", T([1, 0]), T([1, 2]), 2)
    rows, cols = run_op("aten::where", T([[0, 1], [2, 0]]))
    assert rows.data.tolist() == [0, 1] and cols.data.tolist() == [1, 0] and rows.dtype == np.int64


def test_masked_fill():
    assert run("aten::masked_fill", T(I), T(I > 0), 2.7).tolist() == [-3, -1, 0, 2, 2]
    out = run("aten::masked_fill", T(F[:2]), T([[True], [False]]), 1.0)
    assert out.shape == (2, 2) and out.tolist() == [[1.0, 1.0], [-2.5, -0.5]]
    assert run("aten::masked_fill", T(F), T(F > 0), T(9.0)).dtype == np.float32
    with pytest.raises(RuntimeError, match="only supports boolean masks, but got mask with dtype long int"):
        run("aten::masked_fill", T(F), T([1, 0, 1, 0, 0]), 2.7)
    with pytest.raises(RuntimeError, match="0-dimensional value tensor"):
        run("aten::masked_fill", T(F), T(F > 0), T([9.0]))
    x = T([1.0, 2.0])
    assert run_op("aten::masked_fill_", x, T([False, True]), 0.0) is x and x.data.tolist() == [1.0, 0.0]


# ---- comparisons, logical, bitwise


def test_comparisons():
    assert run("aten::eq", T(I), 0.5).dtype == np.bool_
    assert run("aten::lt", T([True, False]), 1).tolist() == [False, True]
    assert run("aten::lt", T(1.5), T(I)).tolist() == [False, False, False, True, True]
    assert run("aten::ge", T(I), T([0])).tolist() == [False, False, True, True, True]
    x = T([0.5, 1.0])
    assert run_op("aten::eq_", x, 0.5) is x and x.data.tolist() == [1.0, 0.0]


def test_logical_and_bitwise():
    assert run("aten::logical_and", T(I), T(F)).tolist() == [True, True, False, True, True]
    assert run("aten::logical_not", T(F)).tolist() == [False] * 5
    x = T(I.copy())
    run_op("aten::logical_and_", x, T(F))
    assert x.data.tolist() == [1, 1, 0, 1, 1] and x.dtype == np.int64
    assert run("aten::bitwise_not", T(I)).tolist() == [2, 0, -1, -3, -6]
    assert run("aten::bitwise_not", T([True, False])).tolist() == [False, True]
    assert run("aten::__and__", T([True, False]), 1).dtype == np.int64
    assert run("aten::__and__", T([True, False]), True).dtype == np.bool_
    assert run("aten::__xor__", T(I), 3).tolist() == [-2, -4, 3, 1, 6]
    with pytest.raises(RuntimeError, match="not implemented for 'Float'"):
        run("aten::bitwise_not", T(F))
    with pytest.raises(RuntimeError, match="not implemented for 'Float'"):
        run("aten::__or__", T(F), 1)


# ---- division family


def test_remainder_fmod_floor_divide():
    assert run("aten::remainder", T(I), -2).tolist() == [-1, -1, 0, 0, -1]
    assert run("aten::remainder", T(F), 1.0).tolist() == [0.5] * 5
    assert run("aten::remainder", 5.0, T([2, 3])).tolist() == [1.0, 2.0]
    assert run("aten::fmod", T(I), -2).tolist() == [-1, -1, 0, 0, 1]
    assert run("aten::fmod", T(I), 1.5).dtype == np.float32
    assert run("aten::floor_divide", T(I), -2).tolist() == [1, 0, 0, -1, -3]
    assert run("aten::floor_divide", T(F), 0.0).tolist() == [-math.inf, -math.inf, math.inf, math.inf, math.inf]
    for kind in ("aten::remainder", "aten::fmod", "aten::floor_divide"):
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            run(kind, T(I), 0)


def test_div_rounding_modes():
    assert run("aten::div", T(I), -2, "trunc").tolist() == [1, 0, 0, -1, -2]
    assert run("aten::div", T(I), -2, "floor").tolist() == [1, 0, 0, -1, -3]
    none = run("aten::div", T(I), -2, None)
    assert none.dtype == np.float32 and none.tolist() == [1.5, 0.5, -0.0, -1.0, -2.5]
    assert run("aten::div", T(F), 0.7, "floor").tolist() == [-4.0, -1.0, 0.0, 2.0, 3.0]
    assert run("aten::true_divide", T(I), 2).dtype == np.float32
    with pytest.raises(RuntimeError, match="rounding_mode to be one of None, 'trunc', or 'floor' but found 'x'"):
        run("aten::div", T(I), 2, "x")
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        run("aten::div", T(I), 0, "trunc")


def test_maximum_addcmul_addcdiv_lerp():
    out = run("aten::maximum", T([math.nan, 1.0]), T([0.0, math.nan]))
    assert np.isnan(out).all()
    assert run("aten::minimum", T(I), T([1.5], np.float32)).dtype == np.float32
    assert run("aten::addcmul", T(I), T(I), T(I), 2.5).tolist() == [15, 1, 0, 10, 55]  # value truncated
    assert run("aten::addcdiv", T([1.0]), T([1.0]), T([4.0]), 2).tolist() == [1.5]
    with pytest.raises(RuntimeError, match="Integer division with addcdiv"):
        run("aten::addcdiv", T(F), T(I), T(I))
    a, b = np.array([0.0, 10.0]), np.array([10.0, 0.0])
    assert run("aten::lerp", T(a), T(b), 0.25).tolist() == [2.5, 7.5]
    assert run("aten::lerp", T(a), T(b), T([0.75, 1.0])).tolist() == [7.5, 0.0]
    with pytest.raises(RuntimeError, match="expected dtype double for `end` but got dtype float"):
        run("aten::lerp", T(a), T(b, np.float32), 0.3)


def test_isnan_nan_to_num_fill():
    assert run("aten::isnan", T(I)).tolist() == [False] * 5
    assert run("aten::isfinite", T([1.0, math.inf, math.nan])).tolist() == [True, False, False]
    out = run("aten::nan_to_num", T([math.nan, math.inf, -math.inf], np.float32))
    info = np.finfo(np.float32)
    assert out.tolist() == [0.0, float(info.max), float(info.min)]
    assert run("aten::nan_to_num", T([math.nan, math.inf]), 1.5, 2.0, None).tolist() == [1.5, 2.0]
    x = T(I.copy())
    assert run_op("aten::fill_", x, 2.7) is x and x.data.tolist() == [2] * 5
    with pytest.raises(RuntimeError, match="0-dimension value tensor"):
        run_op("aten::fill_", T(F), T([3.0]))
    assert run_op("aten::zero_", T(F)).data.tolist() == [0.0] * 5


def test_inplace_op_on_non_leaf_is_differentiated():
    x = Tensor(np.array([1.0, 2.0]), requires_grad=True)
    y = run_op("aten::mul", x, 3.0)
    run_op("aten::exp_", y)
    (g,) = backward([y], [np.ones(2)], inputs=[x])
    np.testing.assert_allclose(g, 3.0 * np.exp(3.0 * np.array([1.0, 2.0])))
