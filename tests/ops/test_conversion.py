"""Conversions and properties: `to` returns its input when nothing changes, item, strides."""

import numpy as np
import pytest

import irjit.ops  # noqa: F401  (registers every op)
from irjit.runtime.autograd import backward, run_op
from irjit.ops.tensor import Tensor

X = np.arange(6.0, dtype=np.float32).reshape(2, 3)


def test_to_returns_the_same_array_unless_changed_or_copied():
    x = Tensor(X.copy())
    assert run_op("aten::to", x, 6, False, False, None).data is x.data
    assert run_op("aten::to", x, 6, False, True, None).data is not x.data
    y = run_op("aten::to", x, 7, False, False, None)
    assert y.dtype == np.float64 and not np.shares_memory(y.data, x.data)
    assert run_op("aten::to", x, Tensor(np.zeros(1, np.int32)), False, False, None).dtype == np.int32
    assert run_op("aten::to", x, "cpu", 4, False, False, None).dtype == np.int64
    assert run_op("aten::_to_copy", x, None, None, None, None, False, None).data is not x.data
    assert run_op("aten::type_as", x, Tensor(np.zeros(1, np.float16))).dtype == np.float16


def test_to_casts_like_pytorch():
    x = Tensor(np.array([1.7, -1.7, 0.0]))
    assert run_op("aten::to", x, 4, False, False, None).data.tolist() == [1, -1, 0]
    assert run_op("aten::to", x, 11, False, False, None).data.tolist() == [True, True, False]


def test_to_grad_comes_back_in_the_input_dtype():
    x = Tensor(np.ones(3, np.float32), requires_grad=True)
    y = run_op("aten::to", x, 7, False, False, None)
    backward([y], [np.array([1.0, 2.0, 3.0])])
    assert x.grad.dtype == np.float32 and x.grad.tolist() == [1, 2, 3]


def test_item():
    assert run_op("aten::item", Tensor(np.array([2.5], np.float32))) == 2.5
    v = run_op("aten::item", Tensor(np.array(3)))
    assert v == 3 and type(v) is int
    with pytest.raises(RuntimeError, match="a Tensor with 2 elements cannot be converted to Scalar"):
        run_op("aten::item", Tensor(np.array([1, 2])))


def test_properties():
    x = Tensor(np.zeros((2, 3, 4), np.float32))
    assert run_op("aten::stride", x) == [12, 4, 1]
    assert run_op("aten::stride", x, -2) == 4
    xt = run_op("aten::permute", x, [2, 0, 1])
    assert run_op("aten::stride", xt) == [1, 12, 4]
    assert not run_op("aten::is_contiguous", xt) and run_op("aten::is_contiguous", x)
    assert run_op("aten::stride", run_op("aten::expand", Tensor(np.zeros((3, 1))), [3, 5])) == [1, 0]
    assert run_op("aten::element_size", x) == 4
    assert run_op("aten::is_floating_point", x) and not run_op("aten::is_floating_point", Tensor(np.zeros(1, np.int64)))
    nchw = Tensor(np.zeros((1, 4, 4, 3), np.float32).transpose(0, 3, 1, 2))
    assert run_op("aten::is_contiguous", nchw, 2) and not run_op("aten::is_contiguous", nchw, 0)
