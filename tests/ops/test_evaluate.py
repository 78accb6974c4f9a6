"""The tape-free `evaluate`: overloads resolved as the interpreter resolves them, results as
plain arrays and Python values, in-place ops writing into their first argument."""

import numpy as np
import pytest

from irjit.ops.eager_emitter import EAGER, sum_to
from irjit.ops.errors import IRTypeError
from irjit.ops.evaluate import evaluate
from irjit.ops.tensor import Tensor


def test_resolves_overloads_and_fills_defaults():
    a = np.array([1.0, 2.0], np.float32)
    assert evaluate("aten::add", a, a).tolist() == [2.0, 4.0]          # add.Tensor, alpha=1
    assert evaluate("aten::add", a, 1).dtype == np.float32             # add.Scalar
    assert evaluate("aten::add", 2, 3) == 5                            # add.int
    assert isinstance(evaluate("aten::add", 2, 3), int)


def test_tensor_results_are_arrays_and_numbers_are_python():
    x = np.arange(6.0).reshape(2, 3)
    out = evaluate("aten::sum", x)
    assert isinstance(out, np.ndarray) and out.shape == () and out == 15.0
    assert evaluate("aten::size", x) == [2, 3]
    assert type(evaluate("aten::dim", x)) is int
    values, indices = evaluate("aten::max", x, 1)
    assert values.tolist() == [2.0, 5.0] and indices.tolist() == [2, 2]


def test_runtime_tensors_are_read_as_arrays_without_a_tape():
    t = Tensor(np.array([1.0, -2.0]), requires_grad=True)
    out = evaluate("aten::relu", t)
    assert isinstance(out, np.ndarray) and out.tolist() == [1.0, 0.0]
    assert t.grad_fn is None


def test_inplace_ops_write_into_self_in_its_dtype():
    x = np.array([1, 2], np.int64)
    out = evaluate("aten::mul_", x, 2)
    assert out is x and x.tolist() == [2, 4] and x.dtype == np.int64


def test_unknown_ops_and_bad_arguments_raise():
    with pytest.raises(IRTypeError, match="unknown operator"):
        evaluate("aten::no_such_op", 1)
    with pytest.raises(IRTypeError, match="no overload"):
        evaluate("aten::relu", "text")


def test_sum_to_reduces_broadcast_dimensions():
    g = np.ones((4, 2, 3))
    assert sum_to(g, (2, 1)).shape == (2, 1) and sum_to(g, (2, 1)).tolist() == [[12.0], [12.0]]
    assert sum_to(g, (3,)).tolist() == [8.0, 8.0, 8.0]
    assert EAGER.sum_to(g, np.zeros((1, 3))).shape == (1, 3)
    assert EAGER.op("aten::neg", np.array([1.0])).tolist() == [-1.0]
