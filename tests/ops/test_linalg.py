"""Matrix products: matmul over every rank combination, fused forms, einsum, errors."""

import numpy as np
import pytest

import irjit.ops  # noqa: F401  (registers every op)
from irjit.runtime.autograd import backward, run_op
from irjit.ops.tensor import Tensor

r = np.random.default_rng(3)


def T(a, rg=False):
    return Tensor(np.array(a), requires_grad=rg)


@pytest.mark.parametrize("sa,sb,out", [((3,), (3,), ()), ((2, 3), (3,), (2,)), ((3,), (3, 4), (4,)),
                                       ((2, 3), (3, 4), (2, 4)), ((5, 2, 3), (3,), (5, 2)), ((3,), (5, 3, 4), (5, 4)),
                                       ((5, 1, 2, 3), (4, 3, 2), (5, 4, 2, 2))])
def test_matmul_ranks(sa, sb, out):
    a, b = r.standard_normal(sa).astype(np.float32), r.standard_normal(sb).astype(np.float32)
    res = run_op("aten::matmul", T(a), T(b))
    assert res.shape == out and res.dtype == np.float32
    np.testing.assert_allclose(res.data, np.matmul(a, b), rtol=1e-5)


def test_matmul_grad_sums_broadcast_batch_dims():
    a = T(np.ones((2, 2, 3)), rg=True)
    b = T(np.ones((3, 4)), rg=True)
    backward([run_op("aten::matmul", a, b)])
    np.testing.assert_allclose(b.grad, np.full((3, 4), 4.0))  # summed over 2 batches x 2 rows
    np.testing.assert_allclose(a.grad, np.full((2, 2, 3), 4.0))


def test_product_errors():
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(3x4 and 5x6\)"):
        run_op("aten::mm", T(np.ones((3, 4))), T(np.ones((5, 6))))
    with pytest.raises(RuntimeError, match="expected m1 and m2 to have the same dtype, but got: float != double"):
        run_op("aten::mm", T(np.ones((3, 4), np.float32)), T(np.ones((4, 2))))
    with pytest.raises(RuntimeError, match=r"size mismatch, got input \(3\), mat \(3x4\), vec \(5\)"):
        run_op("aten::matmul", T(np.ones((3, 4))), T(np.ones(5)))
    with pytest.raises(RuntimeError, match=r"inconsistent tensor size, expected tensor \[3\] and src \[4\]"):
        run_op("aten::dot", T(np.ones(3)), T(np.ones(4)))
    with pytest.raises(RuntimeError, match="batch1 must be a 3D tensor"):
        run_op("aten::bmm", T(np.ones((3, 4))), T(np.ones((3, 4, 2))))
    with pytest.raises(RuntimeError, match=r"Expected size for first two dimensions of batch2 tensor to be: \[2, 4\] "
                                           r"but got: \[2, 5\]"):
        run_op("aten::bmm", T(np.ones((2, 3, 4))), T(np.ones((2, 5, 6))))


def test_integer_mm_keeps_dtype():
    res = run_op("aten::mm", T(np.arange(6).reshape(2, 3)), T(np.arange(6).reshape(3, 2)))
    assert res.dtype == np.int64 and res.data.tolist() == [[10, 13], [28, 40]]


def test_addmm_beta_alpha_and_beta_zero_ignores_nan():
    a, b = np.arange(6.0).reshape(2, 3), np.ones((3, 2))
    np.testing.assert_allclose(run_op("aten::addmm", T(np.ones(2)), T(a), T(b), 0.5, 2).data, 0.5 + 2 * a @ b)
    res = run_op("aten::addmm", T(np.full((2, 2), np.nan)), T(a), T(b), 0, 1)
    np.testing.assert_allclose(res.data, a @ b)


def test_fused_batched_forms():
    b1, b2 = r.standard_normal((3, 2, 4)), r.standard_normal((3, 4, 5))
    np.testing.assert_allclose(run_op("aten::baddbmm", T(np.ones((2, 5))), T(b1), T(b2), 2, 1).data, 2 + b1 @ b2)
    np.testing.assert_allclose(run_op("aten::addbmm", T(np.zeros((2, 5))), T(b1), T(b2), 1, 3).data, 3 * (b1 @ b2).sum(0))
    m, v = r.standard_normal((2, 3)), r.standard_normal(3)
    np.testing.assert_allclose(run_op("aten::addmv", T(np.ones(2)), T(m), T(v), 1, 1).data, 1 + m @ v)
    np.testing.assert_allclose(run_op("aten::outer", T(np.arange(2.0)), T(np.arange(3.0))).data, np.outer(range(2), range(3)))


def test_einsum_forms():
    a, b = r.standard_normal((2, 3)), r.standard_normal((3, 4))
    np.testing.assert_allclose(run_op("aten::einsum", "ij, jk -> ik", [T(a), T(b)], None).data, a @ b)
    np.testing.assert_allclose(run_op("aten::einsum", "ij,jk", [T(a), T(b)], None).data, a @ b)  # implicit output
    np.testing.assert_allclose(run_op("aten::einsum", "...j->j", [T(a)], None).data, a.sum(0))
    np.testing.assert_allclose(run_op("aten::einsum", "ii->i", [T(b[:, :3])], None).data, np.diag(b[:, :3]))


def test_einsum_grad_expands_letters_only_in_one_operand():
    a = T(np.ones((2, 3)), rg=True)
    backward([run_op("aten::einsum", "ij->j", [a], None)], [np.array([1.0, 2.0, 3.0])])
    np.testing.assert_allclose(a.grad, [[1, 2, 3], [1, 2, 3]])


def test_tensordot():
    a, b = r.standard_normal((2, 3, 4)), r.standard_normal((4, 3, 5))
    np.testing.assert_allclose(run_op("aten::tensordot", T(a), T(b), [1, 2], [1, 0]).data,
                               np.tensordot(a, b, axes=([1, 2], [1, 0])))


@pytest.mark.parametrize("sa,sb", [((4, 5, 3), (3, 6)), ((2, 3, 5, 3), (3, 2)), ((4, 0, 3), (3, 2))])
def test_a_stack_times_a_matrix_is_one_product(sa, sb):
    from irjit.ops.linalg import fold_matmul
    a = r.standard_normal(sa).astype(np.float32)
    b = r.standard_normal(sb).astype(np.float32)
    strided = np.asfortranarray(a)  # not C-contiguous: reshape copies
    for x in (a, strided, a[..., ::-1, :]):
        got = fold_matmul(x, b)
        assert got.shape == np.matmul(x, b).shape
        np.testing.assert_allclose(got, np.matmul(x, b), rtol=1e-5, atol=1e-5)
    out = run_op("aten::linear", T(a), T(b.T.copy()), None)
    np.testing.assert_allclose(out.data, a @ b, rtol=1e-5, atol=1e-5)
