"""Advanced indexing, index_put_ (in place, accumulate), gather/scatter, masks, sort/topk."""

import numpy as np
import pytest

import irjit.ops  # noqa: F401  (registers every op)
from irjit.runtime.autograd import backward, run_op
from irjit.ops.tensor import Tensor

M = np.arange(12.0).reshape(3, 4)


def T(a, rg=False):
    return Tensor(np.array(a), requires_grad=rg)


def test_index_matches_numpy_advanced_indexing():
    x = T(M)
    np.testing.assert_array_equal(run_op("aten::index", x, [T(np.array([2, 0, -1]))]).data, M[[2, 0, -1]])
    np.testing.assert_array_equal(run_op("aten::index", x, [None, T(np.array([[0, 3], [1, 1]]))]).data,
                                  M[:, [[0, 3], [1, 1]]])
    np.testing.assert_array_equal(run_op("aten::index", x, [T(M > 4)]).data, M[M > 4])
    np.testing.assert_array_equal(run_op("aten::index", x, [T(np.array([True, False, True]))]).data, M[[0, 2]])
    x3 = np.arange(24).reshape(2, 3, 4)
    got = run_op("aten::index", T(x3), [T(np.array([1, 0])), None, T(np.array([0, 3]))])
    np.testing.assert_array_equal(got.data, x3[[1, 0], :, [0, 3]])  # separated advanced indices go first
    assert not np.shares_memory(got.data, x3)


def test_index_errors():
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 0 with size 3"):
        run_op("aten::index", T(M), [T(np.array([3]))])
    with pytest.raises(IndexError, match=r"The shape of the mask \[2\] at index 0 does not match the shape of the "
                                         r"indexed tensor \[3, 4\] at index 0"):
        run_op("aten::index", T(M), [T(np.array([True, False]))])
    with pytest.raises(IndexError, match="tensors used as indices must be long, int, byte or bool tensors"):
        run_op("aten::index", T(M), [T(np.array([1.0]))])


def test_index_put_in_place_and_accumulate():
    x = T(M.copy())
    before = x.data
    out = run_op("aten::index_put_", x, [T(np.array([0, 0]))], T(np.ones(4)), True)
    assert out is x and x.data is before and x.version == 1
    np.testing.assert_array_equal(x.data[0], M[0] + 2)
    y = run_op("aten::index_put", T(M), [T(M > 8)], T(np.array(-1.0)), False)
    assert (y.data == -1).sum() == 3
    with pytest.raises(RuntimeError, match=r"shape mismatch: value tensor of shape \[3\] cannot be broadcast to "
                                           r"indexing result of shape \[2, 4\]"):
        run_op("aten::index_put", T(M), [T(np.array([0, 1]))], T(np.ones(3)), False)
    with pytest.raises(RuntimeError, match="Index put requires the source and destination dtypes match"):
        run_op("aten::index_put", T(M), [T(np.array([0]))], T(np.ones(4, np.float32)), False)


def test_index_grad_accumulates_repeated_indices():
    x = T(np.zeros(3), rg=True)
    backward([run_op("aten::index", x, [T(np.array([0, 2, 0]))])])
    np.testing.assert_array_equal(x.grad, [2, 0, 1])


def test_index_select_and_index_add():
    np.testing.assert_array_equal(run_op("aten::index_select", T(M), -1, T(np.array([3, 0]))).data, M[:, [3, 0]])
    with pytest.raises(IndexError, match="index out of range in self"):
        run_op("aten::index_select", T(M), 0, T(np.array([3])))
    out = run_op("aten::index_add", T(np.zeros((2, 2))), 0, T(np.array([1, 1])), T(np.ones((2, 2))), 3)
    np.testing.assert_array_equal(out.data, [[0, 0], [6, 6]])


def test_gather_scatter():
    idx = np.array([[0, 3], [2, 2]])
    np.testing.assert_array_equal(run_op("aten::gather", T(M), 1, T(idx), False).data, [[0, 3], [6, 6]])
    with pytest.raises(RuntimeError, match="index 4 is out of bounds for dimension 1 with size 4"):
        run_op("aten::gather", T(M), 1, T(np.array([[4]])), False)
    s = run_op("aten::scatter", T(np.zeros((2, 4))), 1, T(idx), T(-np.ones((2, 2))))
    np.testing.assert_array_equal(s.data, [[-1, 0, 0, -1], [0, 0, -1, 0]])
    s = run_op("aten::scatter", T(np.zeros((2, 4))), 1, T(idx), 5.0)
    assert s.data.sum() == 15
    a = run_op("aten::scatter_add", T(np.zeros((2, 4))), 1, T(idx), T(np.ones((2, 2))))
    np.testing.assert_array_equal(a.data, [[1, 0, 0, 1], [0, 0, 2, 0]])


def test_masked_ops_and_nonzero():
    mask = np.array([True, False, True, False])
    np.testing.assert_array_equal(run_op("aten::masked_select", T(M), T(mask)).data, M[:, mask].reshape(-1))
    out = run_op("aten::masked_scatter", T(np.zeros((2, 2))), T(np.array([[True, False], [True, True]])),
                 T(np.arange(1.0, 6.0)))
    np.testing.assert_array_equal(out.data, [[1, 0], [2, 3]])
    with pytest.raises(RuntimeError, match="Number of elements of source < number of ones in mask"):
        run_op("aten::masked_scatter", T(np.zeros(3)), T(np.ones(3, bool)), T(np.ones(2)))
    nz = run_op("aten::nonzero", T(M > 9))
    assert nz.dtype == np.int64 and nz.data.tolist() == [[2, 2], [2, 3]]


def test_take_along_dim():
    np.testing.assert_array_equal(run_op("aten::take_along_dim", T(M), T(np.array([[0], [3], [1]])), 1).data,
                                  [[0], [7], [9]])
    np.testing.assert_array_equal(run_op("aten::take_along_dim", T(M), T(np.array([11, 0])), None).data, [11, 0])
    # non-dim dims broadcast: one row of indices for every row
    assert run_op("aten::take_along_dim", T(M), T(np.array([[0, 1]])), 1).shape == (3, 2)


def test_sort_argsort_topk_are_stable():
    s = np.array([[3.0, 1.0, 2.0, 1.0], [0.0, 5.0, 5.0, -1.0]])
    v, i = run_op("aten::sort", T(s), -1, False)
    assert v.data.tolist() == [[1, 1, 2, 3], [-1, 0, 5, 5]] and i.data.tolist() == [[1, 3, 2, 0], [3, 0, 1, 2]]
    v, i = run_op("aten::sort", T(s), True, 1, True)
    assert i.data.tolist() == [[0, 2, 1, 3], [1, 2, 0, 3]]
    assert run_op("aten::argsort", T(s), 0, False).data.tolist() == [[1, 0, 0, 1], [0, 1, 1, 0]]
    v, i = run_op("aten::topk", T(s), 2, -1, True, True)
    assert v.data.tolist() == [[3, 2], [5, 5]] and i.dtype == np.int64
    v, _ = run_op("aten::sort", T(np.array([1.0, np.nan, 0.0])), 0, True)
    assert np.isnan(v.data[0])  # NaN is the largest value
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        run_op("aten::topk", T(s), 5, -1, True, True)


def test_copy_broadcasts_and_casts_in_place():
    x = T(np.zeros((2, 3), np.int64))
    before = x.data
    out = run_op("aten::copy_", x, T(np.array([1.7, 2.2, -3.9])), False)
    assert out is x and x.data is before
    assert x.data.tolist() == [[1, 2, -3], [1, 2, -3]]
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(3\) must match the size of tensor b \(4\)"):
        run_op("aten::copy_", x, T(np.ones(4)), False)
