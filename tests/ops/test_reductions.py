"""Reductions: dtype rules, dim handling (negative, lists, None/[] = all), keepdim, errors."""

import math

import numpy as np
import pytest

import irjit.ops  # noqa: F401  (registers every op)
from irjit.runtime.autograd import backward, run_op
from irjit.ops.tensor import Tensor


def T(a, rg=False):
    return Tensor(np.array(a), requires_grad=rg)


X = np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 7.5
XI = np.arange(6).reshape(2, 3)


def test_sum_dtypes():
    assert run_op("aten::sum", T(XI), None).dtype == np.int64
    assert run_op("aten::sum", T(np.ones(3, np.int32)), None).dtype == np.int64
    b = run_op("aten::sum", T(np.array([True, True, False])), None)
    assert b.dtype == np.int64 and b.data == 2
    assert run_op("aten::sum", T(X), None).dtype == np.float32
    assert run_op("aten::sum", T(XI), [1], False, 7).dtype == np.float64
    out = run_op("aten::sum", T(X), None)
    assert isinstance(out.data, np.ndarray) and out.data.shape == ()


@pytest.mark.parametrize("dims,keepdim,axes", [([0], False, (0,)), ([-1, 0], True, (2, 0)), (None, False, None),
                                               ([], False, None), ([], True, None)])
def test_sum_and_mean_dims(dims, keepdim, axes):
    s = run_op("aten::sum", T(X), dims, keepdim, None)
    np.testing.assert_allclose(s.data, X.sum(axis=axes, keepdims=keepdim))
    m = run_op("aten::mean", T(X), dims, keepdim, None)
    np.testing.assert_allclose(m.data, X.mean(axis=axes, keepdims=keepdim), rtol=1e-6)
    assert m.dtype == np.float32


def test_reduction_dim_errors():
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times in the list of dims"):
        run_op("aten::sum", T(X), [0, -3], False, None)
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-3, 2\], but got 3\)"):
        run_op("aten::sum", T(X), [3], False, None)
    with pytest.raises(RuntimeError, match=r"mean\(\): could not infer output dtype.*Got: Long"):
        run_op("aten::mean", T(XI), None)
    np.testing.assert_allclose(run_op("aten::mean", T(XI), 7).data, 2.5)


def test_zero_dim_reductions():
    z = T(np.array(3.0))
    assert run_op("aten::sum", z, [0], False, None).data == 3.0
    assert run_op("aten::sum", z, [-1], True, None).shape == ()
    assert run_op("aten::argmax", z, 0, False).data == 0


def test_prod():
    p = run_op("aten::prod", T(XI + 1), None)
    assert p.dtype == np.int64 and p.data == 720
    np.testing.assert_array_equal(run_op("aten::prod", T(XI), 1, True, None).data, [[0], [60]])


def test_max_min_variants():
    x = T(np.array([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]]))
    assert run_op("aten::max", x).data == 6.0 and run_op("aten::min", x).data == 1.0
    v, i = run_op("aten::max", x, 1, False)
    np.testing.assert_array_equal(v.data, [5.0, 6.0])
    np.testing.assert_array_equal(i.data, [1, 2])
    assert i.dtype == np.int64
    v, i = run_op("aten::min", x, 0, True)
    assert v.shape == (1, 3) and i.data.tolist() == [[0, 1, 0]]
    np.testing.assert_array_equal(run_op("aten::max", x, T(np.array([3.0, 3.0, 3.0]))).data, [[3, 5, 3], [4, 3, 6]])
    np.testing.assert_array_equal(run_op("aten::amax", x, [], False).data, 6.0)
    np.testing.assert_array_equal(run_op("aten::amin", x, [-1], True).data, [[1.0], [2.0]])
    assert np.isnan(run_op("aten::max", T(np.array([1.0, np.nan]))).data)
    with pytest.raises(RuntimeError, match=r"max\(\): Expected reduction dim to be specified for input.numel\(\) == 0"):
        run_op("aten::max", T(np.zeros(0)))
    with pytest.raises(IndexError, match=r"amax\(\): Expected reduction dim 0 to have non-zero size"):
        run_op("aten::amax", T(np.zeros((0, 3))), [0], False)


def test_argmax_argmin():
    x = T(np.array([[1.0, 5.0, 5.0], [7.0, 2.0, 0.0]]))
    a = run_op("aten::argmax", x, None, False)
    assert a.dtype == np.int64 and a.data == 3
    assert run_op("aten::argmax", x, None, True).shape == (1, 1)
    np.testing.assert_array_equal(run_op("aten::argmax", x, 1, False).data, [1, 0])  # first of ties
    np.testing.assert_array_equal(run_op("aten::argmin", x, -2, True).data, [[0, 1, 1]])


def test_median_is_the_lower_median():
    assert run_op("aten::median", T(np.array([3, 1, 2, 4]))).data == 2
    v, i = run_op("aten::median", T(np.array([[3.0, 1.0, 2.0]])), 1, False)
    assert v.data.tolist() == [2.0] and i.data.tolist() == [2]


def test_var_std_corrections():
    x = T(np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 3.0]]))
    np.testing.assert_allclose(run_op("aten::var", x, True).data, np.var(x.data, ddof=1))
    np.testing.assert_allclose(run_op("aten::var", x, [1], False, True).data, np.var(x.data, axis=1, keepdims=True))
    np.testing.assert_allclose(run_op("aten::std", x, [0], 2, False).data, [math.inf, math.inf, math.nan])
    np.testing.assert_allclose(run_op("aten::std", x, None, 0.5, False).data, np.sqrt(np.sum((x.data - x.data.mean()) ** 2) / 5.5))
    v, m = run_op("aten::var_mean", x, [1], True, False)
    np.testing.assert_allclose(v.data, np.var(x.data, axis=1, ddof=1))
    np.testing.assert_allclose(m.data, x.data.mean(axis=1))
    assert np.isnan(run_op("aten::var", T(np.array([1.0])), True).data)
    with pytest.raises(RuntimeError, match="std and var only support floating point and complex dtypes"):
        run_op("aten::std", T(XI), True)


@pytest.mark.parametrize("p,ref", [(2, lambda a: np.sqrt((a ** 2).sum())), (1, lambda a: np.abs(a).sum()),
                                   (0, lambda a: float((a != 0).sum())), (math.inf, lambda a: np.abs(a).max()),
                                   (-math.inf, lambda a: np.abs(a).min()), (3, lambda a: (np.abs(a) ** 3).sum() ** (1 / 3))])
def test_vector_norms(p, ref):
    a = np.array([[3.0, -4.0, 0.0], [1.0, 2.0, -2.0]])
    np.testing.assert_allclose(run_op("aten::norm", T(a), p).data, ref(a))
    np.testing.assert_allclose(run_op("aten::linalg_vector_norm", T(a), p, [1], True, None).data,
                               np.array([[ref(a[0])], [ref(a[1])]]))


def test_norm_rejects_integers():
    with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor as input. Got Long"):
        run_op("aten::norm", T(XI), 2)
    assert run_op("aten::norm", T(XI), 2, [1], False, 7).dtype == np.float64


def test_logsumexp_is_stable():
    a = np.array([[1000.0, 1000.0], [-np.inf, -np.inf]])
    np.testing.assert_allclose(run_op("aten::logsumexp", T(a), [1], False).data, [1000 + math.log(2), -np.inf])
    assert run_op("aten::logsumexp", T(np.ones(3, np.int64)), [0], False).dtype == np.float32


def test_cumulative_ops():
    c = run_op("aten::cumsum", T(XI), 1, None)
    assert c.dtype == np.int64 and c.data.tolist() == [[0, 1, 3], [3, 7, 12]]
    assert run_op("aten::cumsum", T(np.ones(3, bool)), 0, None).data.tolist() == [1, 2, 3]
    np.testing.assert_array_equal(run_op("aten::cumprod", T(np.array([2.0, 0.0, 3.0])), 0, None).data, [2, 0, 0])
    assert run_op("aten::cumprod", T(XI), 0, 6).dtype == np.float32


def test_cumprod_grad_with_zeros():
    x = T(np.array([2.0, 0.0, 3.0]), rg=True)
    backward([run_op("aten::cumprod", x, 0, None)])
    # out = [x0, x0 x1, x0 x1 x2]: d/dx0 = 1 + x1 + x1 x2, d/dx1 = x0 + x0 x2, d/dx2 = x0 x1
    np.testing.assert_allclose(x.grad, [1.0, 8.0, 0.0])


def test_prod_grad_with_a_zero():
    x = T(np.array([2.0, 0.0, 3.0]), rg=True)
    backward([run_op("aten::prod", x, None)])
    np.testing.assert_allclose(x.grad, [0.0, 6.0, 0.0])


def test_all_any_count_nonzero():
    x = T(np.array([[1, 0, 2], [3, 4, 5]]))
    assert run_op("aten::all", x).data.dtype == np.bool_ and not run_op("aten::all", x).data
    assert run_op("aten::all", x, 1, False).data.tolist() == [False, True]
    assert run_op("aten::any", x, [0, 1], True).data.tolist() == [[True]]
    assert run_op("aten::all", x, [], False).data.tolist() == [[True, False, True], [True, True, True]]
    assert run_op("aten::all", T(np.array([1, 2], np.uint8))).dtype == np.uint8
    cnt = run_op("aten::count_nonzero", x, None)
    assert cnt.dtype == np.int64 and cnt.data == 5
    assert run_op("aten::count_nonzero", x, [1]).data.tolist() == [2, 3]


def test_sum_grad_expands_over_reduced_dims():
    x = T(np.ones((2, 3)), rg=True)
    backward([run_op("aten::mean", x, [1], False, None)], [np.array([3.0, 6.0])])
    np.testing.assert_allclose(x.grad, [[1, 1, 1], [2, 2, 2]])
