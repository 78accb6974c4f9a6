"""Shape and view ops: results, aliasing (views share memory, copies do not), errors."""

import numpy as np
import pytest

import irjit.ops  # noqa: F401  (registers every op)
from irjit.runtime.autograd import backward, run_op
from irjit.ops.tensor import Tensor


def T(a, rg=False):
    return Tensor(np.array(a), requires_grad=rg)


X = np.arange(12.0).reshape(3, 4)


def shares(a: Tensor, b: Tensor) -> bool:
    return np.shares_memory(a.data, b.data)


@pytest.mark.parametrize("kind,args", [
    ("aten::view", ([4, -1],)), ("aten::reshape", ([2, 6],)), ("aten::transpose", (0, 1)),
    ("aten::t", ()), ("aten::permute", ([1, 0],)), ("aten::select", (0, 1)), ("aten::narrow", (1, 1, 2)),
    ("aten::slice", (1, 0, 3, 2)), ("aten::unsqueeze", (0,)), ("aten::squeeze", ()),
    ("aten::expand", ([2, 3, 4],)), ("aten::diagonal", (0, 0, 1)), ("aten::flatten", (0, -1)),
    ("aten::unflatten", (1, [2, 2])), ("aten::movedim", (0, 1)), ("aten::detach", ()), ("aten::numpy_T", ()),
])
def test_views_alias_their_input(kind, args):
    x = T(X.copy())
    assert shares(run_op(kind, x, *args), x)


@pytest.mark.parametrize("kind,args", [
    ("aten::clone", (None,)), ("aten::flip", ([0],)), ("aten::roll", ([1], [0])), ("aten::repeat", ([1, 1],)),
    ("aten::tril", (0,)), ("aten::sum_to_size", ([1, 4],)),
])
def test_copies_do_not_alias(kind, args):
    x = T(X.copy())
    assert not shares(run_op(kind, x, *args), x)


def test_writes_through_a_view_reach_the_base():
    x = T(X.copy())
    d = run_op("aten::diagonal", x, 1, 0, 1)
    np.testing.assert_array_equal(d.data, [1.0, 6.0, 11.0])
    d.data[...] = -1
    assert x.data[0, 1] == -1 and x.data[2, 3] == -1
    s = run_op("aten::select", x, 1, -1)
    s.data[...] = 7
    np.testing.assert_array_equal(x.data[:, 3], [7, 7, 7])


def test_view_on_non_contiguous_fails_like_pytorch_but_reshape_copies():
    xt = run_op("aten::t", T(X.copy()))
    with pytest.raises(RuntimeError, match=r"view size is not compatible.*Use \.reshape\(\.\.\.\) instead"):
        run_op("aten::view", xt, [12])
    r = run_op("aten::reshape", xt, [12])
    np.testing.assert_array_equal(r.data, X.T.reshape(-1))
    assert not shares(r, xt)


def test_view_size_errors():
    with pytest.raises(RuntimeError, match=r"shape '\[5\]' is invalid for input of size 12"):
        run_op("aten::view", T(X), [5])
    with pytest.raises(RuntimeError, match="only one dimension can be inferred"):
        run_op("aten::view", T(X), [-1, -1])


def test_contiguous_returns_the_same_array_when_already_contiguous():
    x = T(X.copy())
    assert run_op("aten::contiguous", x, 0).data is x.data
    xt = run_op("aten::t", x)
    c = run_op("aten::contiguous", xt, 0)
    assert c.data.flags.c_contiguous and not shares(c, x)


def test_squeeze_variants_and_negative_dims():
    x = T(np.zeros((1, 2, 1, 3)))
    assert run_op("aten::squeeze", x).shape == (2, 3)
    assert run_op("aten::squeeze", x, -2).shape == (1, 2, 3)
    assert run_op("aten::squeeze", x, 1).shape == (1, 2, 1, 3)  # size != 1: unchanged
    assert run_op("aten::squeeze", x, [0, 2]).shape == (2, 3)
    assert run_op("aten::unsqueeze", x, -1).shape == (1, 2, 1, 3, 1)
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-5, 4\], but got 5\)"):
        run_op("aten::unsqueeze", x, 5)


def test_expand_rules():
    x = T(np.array([[1.0], [2.0]]))
    np.testing.assert_array_equal(run_op("aten::expand", x, [3, -1, 2]).data, np.broadcast_to(x.data, (3, 2, 2)))
    with pytest.raises(RuntimeError, match=r"The expanded size of the tensor \(3\) must match the existing size \(2\) "
                                           r"at non-singleton dimension 0"):
        run_op("aten::expand", x, [3, 1])


def test_select_narrow_slice_values_and_errors():
    x = T(X)
    np.testing.assert_array_equal(run_op("aten::select", x, 1, -1).data, [3, 7, 11])
    np.testing.assert_array_equal(run_op("aten::narrow", x, 1, -3, 2).data, X[:, 1:3])
    np.testing.assert_array_equal(run_op("aten::slice", x, 1, -3, 9223372036854775807, 2).data, X[:, 1::2])
    np.testing.assert_array_equal(run_op("aten::slice", x, 0, 5, 9, 1).data, np.zeros((0, 4)))
    with pytest.raises(IndexError, match=r"select\(\): index 3 out of range for tensor of size \[3, 4\] at dimension 0"):
        run_op("aten::select", x, 0, 3)
    with pytest.raises(RuntimeError, match=r"start \(3\) \+ length \(2\) exceeds dimension size \(4\)"):
        run_op("aten::narrow", x, 1, 3, 2)
    with pytest.raises(RuntimeError, match="slice step must be positive"):
        run_op("aten::slice", x, 0, None, None, -1)


def test_permute_errors_and_t_rank():
    with pytest.raises(RuntimeError, match="input.dim\\(\\) = 2 is not equal to len\\(dims\\) = 1"):
        run_op("aten::permute", T(X), [0])
    with pytest.raises(RuntimeError, match="duplicate dims are not allowed"):
        run_op("aten::permute", T(X), [0, 0])
    with pytest.raises(RuntimeError, match=r"t\(\) expects a tensor with <= 2 dimensions, but self is 3D"):
        run_op("aten::t", T(np.zeros((1, 2, 3))))


def test_repeat_tile_flip_roll_tril():
    x = T(np.array([[1, 2], [3, 4]]))
    np.testing.assert_array_equal(run_op("aten::repeat", x, [1, 2, 1]).data, [[[1, 2], [3, 4], [1, 2], [3, 4]]])
    np.testing.assert_array_equal(run_op("aten::tile", x, [2]).data, [[1, 2, 1, 2], [3, 4, 3, 4]])
    np.testing.assert_array_equal(run_op("aten::flip", x, [-1]).data, [[2, 1], [4, 3]])
    np.testing.assert_array_equal(run_op("aten::roll", x, [1], []).data, [[4, 1], [2, 3]])
    np.testing.assert_array_equal(run_op("aten::roll", x, [1], [0]).data, [[3, 4], [1, 2]])
    np.testing.assert_array_equal(run_op("aten::tril", x, 0).data, [[1, 0], [3, 4]])
    np.testing.assert_array_equal(run_op("aten::triu", x, 1).data, [[0, 2], [0, 0]])
    with pytest.raises(RuntimeError, match="Number of dimensions of repeat dims can not be smaller"):
        run_op("aten::repeat", x, [2])


def test_size_queries_and_grad_sum_to_size():
    x = T(np.zeros((2, 3, 4)))
    assert run_op("aten::size", x) == [2, 3, 4]
    assert run_op("aten::size", x, -1) == 4
    assert run_op("aten::dim", x) == 3 and run_op("aten::numel", x) == 24
    assert run_op("aten::_size_if_not_equal", [2, 3], [2, 3]) is None
    assert run_op("aten::_size_if_not_equal", [1, 3], [2, 3]) == [1, 3]
    g = T(np.ones((2, 3)))
    assert run_op("aten::_grad_sum_to_size", g, None).data is g.data
    np.testing.assert_array_equal(run_op("aten::_grad_sum_to_size", g, [1, 3]).data, [[2, 2, 2]])
    with pytest.raises(RuntimeError, match=r"size \{\[2, 3\]\} is not expandable to size \{\[3, 2\]\}"):
        run_op("aten::sum_to_size", T(np.ones((3, 2))), [2, 3])


def test_broadcast_tensors():
    a, b = run_op("aten::broadcast_tensors", [T(np.ones((3, 1))), T(np.arange(4.0))])
    assert a.shape == b.shape == (3, 4)
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(3\) must match the size of tensor b \(4\)"):
        run_op("aten::broadcast_tensors", [T(np.ones(3)), T(np.ones(4))])


def test_grad_through_a_chain_of_views():
    x = T(np.arange(6.0).reshape(2, 3), rg=True)
    y = run_op("aten::select", run_op("aten::t", x), 0, 2)     # x[:, 2]
    z = run_op("aten::expand", run_op("aten::unsqueeze", y, 0), [4, 2])
    backward([z])
    np.testing.assert_array_equal(x.grad, [[0, 0, 4], [0, 0, 4]])
