"""cat/stack and the split family: promotion, legacy empty tensors, views, errors."""

import numpy as np
import pytest

import irjit.ops  # noqa: F401  (registers every op)
from irjit.runtime.autograd import backward, run_op
from irjit.ops.tensor import Tensor


def T(a, rg=False):
    return Tensor(np.array(a), requires_grad=rg)


def test_cat_promotes_and_skips_legacy_empty():
    out = run_op("aten::cat", [T(np.ones((2, 2), np.int64)), T(np.zeros(0)), T(np.full((1, 2), 0.5, np.float32))], 0)
    assert out.dtype == np.float64 and out.shape == (3, 2)  # the float64 empty tensor still takes part in promotion
    out = run_op("aten::cat", [T(np.ones((2, 1), np.int64)), T(np.ones((2, 2), np.float16))], -1)
    assert out.dtype == np.float16 and out.shape == (2, 3)


def test_cat_errors():
    with pytest.raises(RuntimeError, match="Sizes of tensors must match except in dimension 1. Expected size 3 but got "
                                           "size 4 for tensor number 1 in the list."):
        run_op("aten::cat", [T(np.ones((3, 2))), T(np.ones((4, 2)))], 1)
    with pytest.raises(RuntimeError, match="Tensors must have same number of dimensions: got 2 and 1"):
        run_op("aten::cat", [T(np.ones((3, 2))), T(np.ones(2))], 0)
    with pytest.raises(RuntimeError, match=r"zero-dimensional tensor \(at position 0\) cannot be concatenated"):
        run_op("aten::cat", [T(np.array(1.0))], 0)
    with pytest.raises(RuntimeError, match=r"stack expects each tensor to be equal size, but got \[3\] at entry 0 and "
                                           r"\[4\] at entry 1"):
        run_op("aten::stack", [T(np.ones(3)), T(np.ones(4))], 0)


def test_cat_is_a_copy_and_its_grad_splits():
    a, b = T(np.ones((1, 2)), rg=True), T(np.ones((2, 2)), rg=True)
    out = run_op("aten::cat", [a, b], 0)
    assert not np.shares_memory(out.data, a.data)
    backward([out], [np.arange(6.0).reshape(3, 2)])
    np.testing.assert_array_equal(a.grad, [[0, 1]])
    np.testing.assert_array_equal(b.grad, [[2, 3], [4, 5]])


def test_stack_hstack_vstack():
    a, b = T(np.array([1, 2])), T(np.array([3, 4]))
    assert run_op("aten::stack", [a, b], -1).data.tolist() == [[1, 3], [2, 4]]
    assert run_op("aten::hstack", [a, b]).data.tolist() == [1, 2, 3, 4]
    assert run_op("aten::vstack", [a, b]).data.tolist() == [[1, 2], [3, 4]]


def test_splits_are_views():
    x = T(np.arange(7.0))
    parts = run_op("aten::split", x, 3, 0)
    assert [p.shape for p in parts] == [(3,), (3,), (1,)]
    assert all(np.shares_memory(p.data, x.data) for p in parts)
    assert [p.shape[0] for p in run_op("aten::split", x, [2, 5], 0)] == [2, 5]
    assert [p.shape[0] for p in run_op("aten::split_with_sizes", x, [4, 3], 0)] == [4, 3]
    assert [p.shape[0] for p in run_op("aten::chunk", x, 3, 0)] == [3, 3, 1]
    assert [p.shape[0] for p in run_op("aten::chunk", T(np.arange(6)), 4, 0)] == [2, 2, 2]  # fewer chunks
    assert [p.shape[0] for p in run_op("aten::tensor_split", x, 3, 0)] == [3, 2, 2]
    assert [p.data.tolist() for p in run_op("aten::tensor_split", x, [1, -2], 0)] == [[0.0], [1, 2, 3, 4], [5, 6]]
    rows = run_op("aten::unbind", T(np.arange(6).reshape(2, 3)), 1)
    assert [r_.data.tolist() for r_ in rows] == [[0, 3], [1, 4], [2, 5]]


def test_split_errors():
    with pytest.raises(RuntimeError, match=r"split_with_sizes expects split_sizes to sum exactly to 7 \(input tensor's "
                                           r"size at dimension 0\), but got split_sizes=\[2, 3\]"):
        run_op("aten::split", T(np.arange(7)), [2, 3], 0)
    with pytest.raises(RuntimeError, match="chunk expects `chunks` to be greater than 0, got: 0"):
        run_op("aten::chunk", T(np.arange(7)), 0, 0)


def test_split_grad_fills_unused_pieces_with_zeros():
    x = T(np.arange(5.0), rg=True)
    parts = run_op("aten::split", x, 2, 0)
    backward([parts[1]], [np.array([1.0, 2.0])])
    np.testing.assert_array_equal(x.grad, [0, 0, 1, 2, 0])


def test_meshgrid_indexing():
    a, b = T(np.arange(2)), T(np.arange(3))
    gi = run_op("aten::meshgrid", [a, b], "ij")
    assert [g.shape for g in gi] == [(2, 3), (2, 3)]
    gx = run_op("aten::meshgrid", [a, b], "xy")
    assert [g.shape for g in gx] == [(3, 2), (3, 2)]
    assert gx[0].data.tolist() == [[0, 1]] * 3
