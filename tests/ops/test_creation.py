"""Creation ops: default dtypes, inference from fill values and literals, ranges, randomness."""

import numpy as np
import pytest

import irjit.ops  # noqa: F401  (registers every op)
from irjit.runtime.autograd import run_op
from irjit.ops.random import manual_seed
from irjit.ops.tensor import Tensor

OPTS = [None, None, None, None]


def test_fills_and_default_dtypes():
    z = run_op("aten::zeros", [2, 3], *OPTS)
    assert z.dtype == np.float32 and z.shape == (2, 3) and not z.data.any()
    assert run_op("aten::ones", [2], 4, None, None, None).dtype == np.int64
    assert run_op("aten::empty", [2], *OPTS, None).data.tolist() == [0, 0]
    assert run_op("aten::full", [2], 3, *OPTS).dtype == np.int64
    assert run_op("aten::full", [2], True, *OPTS).dtype == np.bool_
    assert run_op("aten::full", [2], 2.5, *OPTS).dtype == np.float32
    assert run_op("aten::full", [2], 3.7, 4, None, None, None).data.tolist() == [3, 3]
    with pytest.raises(RuntimeError, match="negative dimension -1"):
        run_op("aten::zeros", [2, -1], *OPTS)


def test_like_and_new_variants_take_the_input_dtype():
    x = Tensor(np.ones((2, 2), np.int32))
    assert run_op("aten::zeros_like", x, *OPTS, None).dtype == np.int32
    assert run_op("aten::full_like", x, 2.7, *OPTS, None).data.tolist() == [[2, 2], [2, 2]]
    assert run_op("aten::ones_like", x, 6, None, None, None, None).dtype == np.float32
    n = run_op("aten::new_full", x, [3], 1.5, *OPTS)
    assert n.dtype == np.int32 and n.shape == (3,)
    assert run_op("aten::new_zeros", x, [1, 2], *OPTS).shape == (1, 2)


@pytest.mark.parametrize("args,expected,dtype", [((5,), [0, 1, 2, 3, 4], np.int64), ((1, 4), [1, 2, 3], np.int64),
                                                 ((0, 1, 0.25), [0, 0.25, 0.5, 0.75], np.float32),
                                                 ((10, 0, -3), [10, 7, 4, 1], np.int64), ((0.5, 3), [0.5, 1.5, 2.5], np.float32)])
def test_arange(args, expected, dtype):
    out = run_op("aten::arange", *args, *OPTS)
    assert out.dtype == dtype
    np.testing.assert_allclose(out.data, expected)


def test_arange_errors():
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        run_op("aten::arange", 0, 5, 0, *OPTS)
    with pytest.raises(RuntimeError, match="upper bound and lower bound inconsistent with step sign"):
        run_op("aten::arange", 5, 0, 1, *OPTS)


def test_linspace_and_eye():
    np.testing.assert_allclose(run_op("aten::linspace", 0, 1, 5, *OPTS).data, [0, 0.25, 0.5, 0.75, 1])
    assert run_op("aten::linspace", 0, 1, 0, *OPTS).shape == (0,)
    assert run_op("aten::linspace", 0, 10, 4, 4, None, None, None).data.tolist() == [0, 3, 6, 10]
    assert run_op("aten::eye", 2, 3, *OPTS).data.tolist() == [[1, 0, 0], [0, 1, 0]]
    assert run_op("aten::eye", 2, *OPTS).dtype == np.float32


def test_tensor_literals():
    assert run_op("aten::tensor", [[1, 2], [3, 4]], None, None, False).dtype == np.int64
    assert run_op("aten::tensor", [1, 2.5], None, None, False).dtype == np.float32
    assert run_op("aten::tensor", [True, False], None, None, False).dtype == np.bool_
    assert run_op("aten::tensor", [], None, None, False).shape == (0,)
    assert run_op("aten::tensor", 2.5, None, None, False).shape == ()
    t = run_op("aten::tensor", [1.0, 2.0], 7, None, True)
    assert t.dtype == np.float64 and t.requires_grad
    with pytest.raises(ValueError, match=r"expected sequence of length 2 at dim 1 \(got 1\)"):
        run_op("aten::tensor", [[1, 2], [3]], None, None, False)
    assert run_op("aten::scalar_tensor", 3, *OPTS).dtype == np.float32
    x = Tensor(np.ones(2))
    assert run_op("aten::as_tensor", x, None, None).data is x.data
    assert run_op("aten::as_tensor", x, 6, None).dtype == np.float32


def test_random_ops_are_seeded():
    manual_seed(3)
    a = run_op("aten::randn", [4], *OPTS).data
    manual_seed(3)
    b = run_op("aten::randn", [4], *OPTS).data
    np.testing.assert_array_equal(a, b)
    r = run_op("aten::rand", [1000], *OPTS).data
    assert r.dtype == np.float32 and 0 <= r.min() and r.max() < 1
    i = run_op("aten::randint", 3, 7, [500], 4, None, None, None).data
    assert i.dtype == np.int64 and set(np.unique(i)) == {3, 4, 5, 6}
    bern = run_op("aten::bernoulli", Tensor(np.array([0.0, 1.0] * 10)), None).data
    assert bern.tolist() == [0.0, 1.0] * 10
    n = run_op("aten::normal", Tensor(np.full(3, 5.0)), 0.0, None).data
    assert n.tolist() == [5.0, 5.0, 5.0]
