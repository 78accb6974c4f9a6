"""Behaviour of the neural-network ops: numpy reference loops, and literal values obtained
from PyTorch 2.13 (float64) where a reference would be long."""

import numpy as np
import pytest

import irjit.ops  # noqa: F401  (registers every op)
from irjit.ops import random as rt_random
from irjit.runtime.autograd import backward, run_op
from irjit.ops.tensor import Tensor

r = np.random.default_rng(3)


def T(a, grad=False):
    return Tensor(np.array(a), grad)


def naive_conv2d(x, w, b, stride, padding, dilation, groups):
    n, cin, h, wd = x.shape
    cout, cg, kh, kw = w.shape
    xp = np.pad(x, [(0, 0), (0, 0), (padding[0],) * 2, (padding[1],) * 2])
    oh = (h + 2 * padding[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd + 2 * padding[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, cout, oh, ow))
    og = cout // groups
    for co in range(cout):
        g = co // og
        for i in range(oh):
            for j in range(ow):
                patch = xp[:, g * cg:(g + 1) * cg,
                           i * stride[0]:i * stride[0] + dilation[0] * (kh - 1) + 1:dilation[0],
                           j * stride[1]:j * stride[1] + dilation[1] * (kw - 1) + 1:dilation[1]]
                out[:, co, i, j] = (patch * w[co]).sum(axis=(1, 2, 3)) + (b[co] if b is not None else 0)
    return out


# ---- convolution

@pytest.mark.parametrize("stride,padding,dilation,groups", [
    ((1, 1), (0, 0), (1, 1), 1), ((2, 1), (1, 2), (1, 1), 1), ((2, 2), (1, 1), (2, 1), 2), ((1, 3), (0, 1), (1, 2), 4)])
def test_conv2d_matches_reference(stride, padding, dilation, groups):
    x = r.standard_normal((2, 4, 7, 6))
    w = r.standard_normal((8, 4 // groups, 3, 2))
    b = r.standard_normal(8)
    out = run_op("aten::conv2d", T(x), T(w), T(b), list(stride), list(padding), list(dilation), groups)
    np.testing.assert_allclose(out.data, naive_conv2d(x, w, b, stride, padding, dilation, groups), atol=1e-10)


@pytest.mark.parametrize("x_shape,w_shape,stride,padding,dilation", [
    ((2, 4, 9, 7), (4, 1, 3, 3), (1, 1), (1, 1), (1, 1)),    # depthwise
    ((2, 3, 8, 8), (6, 1, 3, 2), (2, 1), (1, 0), (1, 2)),    # two filters per channel
    ((3, 5, 11), (5, 1, 4), (2,), (2,), (2,)),               # 1-D
])
def test_depthwise_convolution_and_its_gradients(x_shape, w_shape, stride, padding, dilation):
    """One input channel a group runs tap by tap (no im2col): the output matches the loops, and
    the input and weight gradients are the adjoints of the (bilinear) convolution."""
    groups = x_shape[1]
    x, w = r.standard_normal(x_shape), r.standard_normal(w_shape)
    conv = lambda a, b: run_op("aten::convolution", T(a), T(b), None, list(stride), list(padding),  # noqa: E731
                               list(dilation), False, [0] * len(stride), groups).data
    out = conv(x, w)
    if len(stride) == 2:
        np.testing.assert_allclose(out, naive_conv2d(x, w, None, stride, padding, dilation, groups), atol=1e-10)
    g = r.standard_normal(out.shape)
    gi, gw, _ = run_op("aten::convolution_backward", T(g), T(x), T(w), None, list(stride), list(padding),
                       list(dilation), False, [0] * len(stride), groups, [True, True, False])
    dx, dw = r.standard_normal(x_shape), r.standard_normal(w_shape)
    np.testing.assert_allclose((gi.data * dx).sum(), (g * conv(dx, w)).sum(), rtol=1e-10)
    np.testing.assert_allclose((gw.data * dw).sum(), (g * conv(x, dw)).sum(), rtol=1e-10)
    assert gi.shape == x_shape and gw.shape == w_shape


def test_conv_unbatched_and_float32():
    x = r.standard_normal((3, 5, 5)).astype(np.float32)
    w = r.standard_normal((2, 3, 3, 3)).astype(np.float32)
    out = run_op("aten::conv2d", T(x), T(w), None, 1, 1, 1, 1)
    assert out.shape == (2, 5, 5) and out.dtype == np.float32


def test_conv_same_padding_and_errors():
    x = r.standard_normal((1, 2, 6, 5))
    w = r.standard_normal((3, 2, 4, 3))
    out = run_op("aten::conv2d", T(x), T(w), None, 1, "same", 1, 1)
    assert out.shape == (1, 3, 6, 5)
    # even kernels pad one more on the right/bottom
    ref = naive_conv2d(np.pad(x, [(0, 0), (0, 0), (1, 2), (1, 1)]), w, None, (1, 1), (0, 0), (1, 1), 1)
    np.testing.assert_allclose(out.data, ref, atol=1e-10)
    with pytest.raises(RuntimeError, match="padding='same' is not supported for strided convolutions"):
        run_op("aten::conv2d", T(x), T(w), None, 2, "same", 1, 1)
    with pytest.raises(RuntimeError, match=r"Given groups=1, weight of size \[32, 3, 3, 3\], expected "
                                           r"input\[1, 4, 8, 8\] to have 3 channels, but got 4 channels instead"):
        run_op("aten::conv2d", T(np.zeros((1, 4, 8, 8))), T(np.zeros((32, 3, 3, 3))))
    with pytest.raises(RuntimeError, match="Kernel size can't be greater than actual input size"):
        run_op("aten::conv2d", T(np.zeros((1, 3, 2, 2))), T(np.zeros((4, 3, 3, 3))))
    with pytest.raises(RuntimeError, match="Expected 3D \\(unbatched\\) or 4D \\(batched\\) input to conv2d"):
        run_op("aten::conv2d", T(np.zeros((8, 8))), T(np.zeros((4, 3, 3, 3))))


def test_conv_transpose_is_adjoint_of_conv():
    x = r.standard_normal((2, 4, 5, 5))
    w = r.standard_normal((6, 2, 3, 3))  # conv: 4 -> 6 channels, groups 2
    y = r.standard_normal((2, 6, 3, 3))
    conv = run_op("aten::conv2d", T(x), T(w), None, 2, 1, 1, 2).data
    # output_padding makes the transposed conv give back the input's size (5 = (3-1)*2 - 2 + 3 + 0)
    convt = run_op("aten::conv_transpose2d", T(y), T(w), None, 2, 1, 0, 2, 1).data
    assert convt.shape == x.shape
    np.testing.assert_allclose((conv * y).sum(), (x * convt).sum(), rtol=1e-10)
    out = run_op("aten::conv_transpose2d", T(y), T(w), None, 2, 1, 1, 2, 1)
    assert out.shape == (2, 4, 6, 6)
    with pytest.raises(RuntimeError, match="Given transposed=1, weight of size"):
        run_op("aten::conv_transpose2d", T(np.zeros((1, 3, 5, 5))), T(np.zeros((4, 2, 3, 3))))


def test_convolution_forms_agree():
    x, w, b = r.standard_normal((1, 2, 6)), r.standard_normal((4, 2, 3)), r.standard_normal(4)
    ref = run_op("aten::conv1d", T(x), T(w), T(b), [2], [1], [1], 1).data
    a = run_op("aten::_convolution", T(x), T(w), T(b), [2], [1], [1], False, [0], 1, False, False, True, True)
    d = run_op("aten::_convolution", T(x), T(w), T(b), [2], [1], [1], False, [0], 1, False, False, True)
    c = run_op("aten::convolution", T(x), T(w), T(b), [2], [1], [1], False, [0], 1)
    for v in (a, d, c):
        np.testing.assert_allclose(v.data, ref)


# ---- pooling

def test_max_pool_shapes_and_indices():
    x = r.standard_normal((1, 1, 5, 5))
    out, idx = run_op("aten::max_pool2d_with_indices", T(x), [2, 2], [2, 2], [0, 0], [1, 1], True)
    assert out.shape == (1, 1, 3, 3)
    np.testing.assert_array_equal(out.data.ravel(), x.ravel()[idx.data.ravel()])
    assert run_op("aten::max_pool2d", T(x), [2, 2], [2, 2], 0, 1, False).shape == (1, 1, 2, 2)
    assert run_op("aten::max_pool2d", T(np.zeros((1, 1, 6, 6))), [3, 3], [2, 2], [1, 1], [1, 1], True).shape == \
        (1, 1, 4, 4)
    assert run_op("aten::max_pool1d", T(np.zeros((2, 9))), [3], [], [1], [2], False).shape == (2, 3)
    with pytest.raises(RuntimeError, match="pad should be at most half of effective kernel size"):
        run_op("aten::max_pool2d", T(np.zeros((1, 1, 5, 5))), [3, 3], [], [2, 2])
    with pytest.raises(RuntimeError, match=r"Given input size: \(1x2x2\). Calculated output size: \(1x0x0\)"):
        run_op("aten::max_pool2d", T(np.zeros((1, 1, 2, 2))), [3, 3])


def test_max_pool_gradient_goes_to_argmax():
    x = T(np.array([[[[1.0, 5.0], [3.0, 2.0]]]]), True)
    y = run_op("aten::max_pool2d", x, [2, 2])
    backward([y], [np.ones((1, 1, 1, 1))])
    np.testing.assert_array_equal(x.grad, [[[[0, 1], [0, 0]]]])


def test_avg_pool_matches_pytorch():
    x = T(np.arange(49.0).reshape(1, 1, 7, 7))
    exclude = run_op("aten::avg_pool2d", x, [3, 3], [2, 2], [1, 1], True, False).data
    np.testing.assert_allclose(exclude[0, 0, 0], [4.0, 5.5, 7.5, 9.0])
    include = run_op("aten::avg_pool2d", x, [3, 3], [2, 2], [1, 1], True, True).data
    np.testing.assert_allclose(include[0, 0, 0], [16 / 9, 33 / 9, 5.0, 4.0])
    np.testing.assert_allclose(include[0, 0, 3], [17 + 1 / 3, 27.0, 28 + 1 / 3, 19 + 5 / 9])
    div = run_op("aten::avg_pool2d", x, [3, 2], [2, 3], [1, 1], True, True, 5).data
    np.testing.assert_allclose(div[0, 0, :, 0], [1.4, 8.4, 16.8, 15.4])


def test_adaptive_pools():
    x = r.standard_normal((2, 3, 7, 5))
    out = run_op("aten::adaptive_avg_pool2d", T(x), [3, 2]).data
    # window of output (i, j): rows floor(i*7/3)..ceil((i+1)*7/3), cols floor(j*5/2)..ceil((j+1)*5/2)
    np.testing.assert_allclose(out[..., 1, 1], x[..., 2:5, 2:5].mean(axis=(-1, -2)))
    vals, idx = run_op("aten::adaptive_max_pool2d", T(x), [3, 2])
    np.testing.assert_allclose(vals.data[..., 2, 0], x[..., 4:7, 0:3].max(axis=(-1, -2)))
    np.testing.assert_allclose(run_op("aten::adaptive_avg_pool2d", T(x), [1, 1]).data[..., 0, 0],
                               x.mean(axis=(-1, -2)))


# ---- normalization

def test_batch_norm_training_updates_running_stats():
    x = r.standard_normal((4, 3, 5))
    rm, rv = Tensor(np.zeros(3)), Tensor(np.ones(3))
    w, b = r.standard_normal(3), r.standard_normal(3)
    out = run_op("aten::batch_norm", T(x), T(w), T(b), rm, rv, True, 0.1, 1e-5, True).data
    mean, var = x.mean(axis=(0, 2)), x.var(axis=(0, 2))
    ref = (x - mean[None, :, None]) / np.sqrt(var[None, :, None] + 1e-5) * w[None, :, None] + b[None, :, None]
    np.testing.assert_allclose(out, ref, atol=1e-12)
    np.testing.assert_allclose(rm.data, 0.1 * mean)
    np.testing.assert_allclose(rv.data, 0.9 + 0.1 * x.var(axis=(0, 2), ddof=1))
    # eval: running statistics, which stay unchanged
    before = rm.data.copy()
    out = run_op("aten::batch_norm", T(x), None, None, rm, rv, False, 0.1, 1e-5, True).data
    np.testing.assert_allclose(out, (x - rm.data[None, :, None]) / np.sqrt(rv.data[None, :, None] + 1e-5))
    np.testing.assert_array_equal(rm.data, before)


def test_native_batch_norm_outputs_and_eval_gradient():
    x = r.standard_normal((3, 2))
    out, mean, invstd = run_op("aten::native_batch_norm", T(x), None, None, None, None, True, 0.1, 1e-5)
    np.testing.assert_allclose(mean.data, x.mean(0))
    np.testing.assert_allclose(invstd.data, 1 / np.sqrt(x.var(0) + 1e-5))
    # eval-mode input gradient: weight / sqrt(running_var + eps)
    xt = T(x, True)
    y = run_op("aten::batch_norm", xt, T([2.0, 3.0]), None, T([0.5, 0.0]), T([4.0, 1.0]), False, 0.1, 0.0, True)
    backward([y], [np.ones((3, 2))])
    np.testing.assert_allclose(xt.grad, np.tile([1.0, 3.0], (3, 1)))


def test_instance_norm_updates_averaged_running_stats():
    x = r.standard_normal((2, 3, 4))
    rm, rv = Tensor(np.zeros(3)), Tensor(np.ones(3))
    out = run_op("aten::instance_norm", T(x), None, None, rm, rv, True, 0.5, 1e-5, True).data
    np.testing.assert_allclose(out, (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5))
    np.testing.assert_allclose(rm.data, 0.5 * x.mean(-1).mean(0))
    np.testing.assert_allclose(rv.data, 0.5 + 0.5 * x.var(-1, ddof=1).mean(0))


def test_layer_and_group_norm():
    x = r.standard_normal((2, 6, 3))
    w, b = r.standard_normal(3), r.standard_normal(3)
    out = run_op("aten::layer_norm", T(x), [3], T(w), T(b), 1e-5, True).data
    ref = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5) * w + b
    np.testing.assert_allclose(out, ref, atol=1e-12)
    g = run_op("aten::group_norm", T(x), 2, None, None, 1e-5, True).data
    xg = x.reshape(2, 2, -1)
    ref = ((xg - xg.mean(-1, keepdims=True)) / np.sqrt(xg.var(-1, keepdims=True) + 1e-5)).reshape(x.shape)
    np.testing.assert_allclose(g, ref, atol=1e-12)
    with pytest.raises(RuntimeError, match=r"Given normalized_shape=\[4\], expected input with shape \[\*, 4\], "
                                           r"but got input of size\[2, 3\]"):
        run_op("aten::layer_norm", T(np.zeros((2, 3))), [4])
    with pytest.raises(RuntimeError, match="divisible by num_groups"):
        run_op("aten::group_norm", T(np.zeros((2, 6, 3))), 4)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_norms_compute_the_textbook_formula_in_the_input_dtype(dtype):
    """Layer and (eval) batch norm reuse their centered values and write in place; the results
    are those of the formula step by step, bit for bit, with float32 weights on a float16 input."""
    x = r.standard_normal((4, 6, 5)).astype(dtype)
    w, b = r.standard_normal(5).astype(np.float32), r.standard_normal(5).astype(np.float32)
    out, mean, rstd = run_op("aten::native_layer_norm", T(x), [5], T(w), T(b), 1e-5)
    m = x.mean(-1, keepdims=True)
    want = (x - m) * (1.0 / np.sqrt(x.var(-1, keepdims=True) + 1e-5)) * w + b
    assert out.dtype == dtype and np.array_equal(out.data, want.astype(dtype))
    w6, b6, rm, rv = (r.standard_normal(6).astype(dtype) for _ in range(4))
    rv = np.abs(rv) + 1
    y = run_op("aten::batch_norm", T(x), T(w6), T(b6), T(rm), T(rv), False, 0.1, 1e-5, True).data
    c = lambda v: v.reshape(1, -1, 1)  # noqa: E731
    want = (x - c(rm)) * c((1.0 / np.sqrt(rv + 1e-5)).astype(dtype)) * c(w6) + c(b6)
    assert y.dtype == dtype and np.array_equal(y, want.astype(dtype))


# ---- dropout

def test_dropout_deterministic_under_seed_and_scaled():
    x = np.ones((200, 50))
    rt_random.manual_seed(5)
    a = run_op("aten::dropout", T(x), 0.3, True).data
    rt_random.manual_seed(5)
    b = run_op("aten::dropout", T(x), 0.3, True).data
    np.testing.assert_array_equal(a, b)
    assert set(np.unique(a)) <= {0.0, 1 / 0.7}
    assert abs((a == 0).mean() - 0.3) < 0.02
    xt = Tensor(x)
    assert run_op("aten::dropout", xt, 0.3, False).data is x  # eval: the input itself
    assert run_op("aten::dropout", xt, 0.0, True).data is x
    with pytest.raises(RuntimeError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        run_op("aten::dropout", xt, 1.5, True)


def test_dropout_gradient_uses_the_mask_and_feature_dropout_drops_channels():
    rt_random.manual_seed(1)
    x = T(r.standard_normal((4, 6)) + 5, True)
    y = run_op("aten::dropout", x, 0.5, True)
    backward([y], [np.ones((4, 6))])
    np.testing.assert_allclose(x.grad, (y.data != 0) * 2.0)
    out, mask = run_op("aten::native_dropout", T(np.ones((3, 3))), 0.5, True)
    np.testing.assert_allclose(out.data, mask.data * 2.0)
    f = run_op("aten::feature_dropout", T(np.ones((8, 10, 4))), 0.5, True).data
    assert np.all((f == 0).all(-1) | (f != 0).all(-1))


def test_dropout_inplace():
    rt_random.manual_seed(2)
    x = Tensor(np.ones((10, 10)))
    y = run_op("aten::dropout_", x, 0.5, True)
    assert y is x and set(np.unique(x.data)) <= {0.0, 2.0}


# ---- embedding and softmax

def test_embedding_padding_idx_and_frequency_scaling():
    w = T(np.arange(8.0).reshape(4, 2), True)
    out = run_op("aten::embedding", w, T(np.array([0, 1, 1, 3])), 3, True, False)
    np.testing.assert_array_equal(out.data[3], [6.0, 7.0])  # padding_idx only affects the gradient
    backward([out], [np.ones((4, 2))])
    np.testing.assert_allclose(w.grad, [[1, 1], [1, 1], [0, 0], [0, 0]])  # from PyTorch
    with pytest.raises(IndexError, match="index out of range in self"):
        run_op("aten::embedding", w, T(np.array([4])))


def test_embedding_bag_modes():
    w = np.arange(30.0).reshape(10, 3)
    idx, offs = np.array([1, 2, 4, 4, 3, 9, 2]), np.array([0, 3, 3, 5])
    out = run_op("aten::embedding_bag", T(w), T(idx), T(offs), False, 1)[0].data
    np.testing.assert_allclose(out, [w[[1, 2, 4]].mean(0), np.zeros(3), w[[4, 3]].mean(0), w[[9, 2]].mean(0)])
    out = run_op("aten::embedding_bag", T(w), T(idx), T(offs), False, 2)[0].data
    np.testing.assert_allclose(out[3], w[9])


def test_softmax_dtype_and_values():
    x = r.standard_normal((3, 4))
    s = run_op("aten::softmax", T(x), 1, 6)
    assert s.dtype == np.float32
    np.testing.assert_allclose(s.data, np.exp(x) / np.exp(x).sum(1, keepdims=True), rtol=1e-6)
    ls = run_op("aten::log_softmax", T(x), 0, None).data
    np.testing.assert_allclose(ls, x - np.log(np.exp(x).sum(0, keepdims=True)))
    big = run_op("aten::softmax", T(np.array([1000.0, 1000.0])), 0).data
    np.testing.assert_allclose(big, [0.5, 0.5])


# ---- losses

X = np.array([[1.0, 2.0, 0.5], [0.1, -1.0, 3.0], [0.0, 0.0, 0.0]])
TG = np.array([2, 0, 1])


def test_cross_entropy_matches_pytorch():
    assert run_op("aten::cross_entropy_loss", T(X), T(TG)).data == pytest.approx(2.011251763912182)
    v = run_op("aten::cross_entropy_loss", T(X), T(TG), T([1.0, 2.0, 3.0]), 1, -100, 0.1).data
    assert v == pytest.approx(1.8047353931287444)
    none = run_op("aten::cross_entropy_loss", T(X), T(TG), None, 0, 0).data
    np.testing.assert_allclose(none, [1.964368784107945, 0.0, 1.0986122886681098])
    with pytest.raises(IndexError, match="Target 3 is out of bounds."):
        run_op("aten::nll_loss", T(X), T(np.array([0, 3, 1])))


def test_nll_loss_weights_and_ignore_index():
    lp = r.standard_normal((4, 3))
    t = np.array([0, 2, 1, 2])
    w = np.array([1.0, 2.0, 3.0])
    v = run_op("aten::nll_loss_nd", T(lp), T(t), T(w), 1, 1).data
    keep = t != 1
    ref = -(lp[np.arange(4), t] * w[t])[keep].sum() / w[t][keep].sum()
    assert v == pytest.approx(ref)
    out, total = run_op("aten::nll_loss_forward", T(lp), T(t), T(w), 2, -100)
    assert total.data == pytest.approx(w[t].sum())
    x4 = r.standard_normal((2, 3, 2, 2))
    t4 = r.integers(0, 3, (2, 2, 2))
    ref = -np.take_along_axis(x4, t4[:, None], 1)[:, 0]
    np.testing.assert_allclose(run_op("aten::nll_loss2d", T(x4), T(t4), None, 0).data, ref)


def test_regression_losses():
    a, b = r.standard_normal((3, 4)), r.standard_normal((3, 4))
    d = a - b
    assert run_op("aten::mse_loss", T(a), T(b)).data == pytest.approx((d * d).mean())
    assert run_op("aten::l1_loss", T(a), T(b), 2).data == pytest.approx(np.abs(d).sum())
    sl1 = np.where(np.abs(d) < 0.5, 0.5 * d * d / 0.5, np.abs(d) - 0.25)
    assert run_op("aten::smooth_l1_loss", T(a), T(b), 1, 0.5).data == pytest.approx(sl1.mean())
    hub = np.where(np.abs(d) < 0.5, 0.5 * d * d, 0.5 * (np.abs(d) - 0.25))
    np.testing.assert_allclose(run_op("aten::huber_loss", T(a), T(b), 0, 0.5).data, hub)
    p, q = 1 / (1 + np.exp(-a)), r.random((3, 4))
    bce = -(q * np.log(p) + (1 - q) * np.log(1 - p))
    assert run_op("aten::binary_cross_entropy", T(p), T(q)).data == pytest.approx(bce.mean())
    assert run_op("aten::binary_cross_entropy_with_logits", T(a), T(q)).data == pytest.approx(bce.mean())
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        run_op("aten::binary_cross_entropy", T(a + 5), T(q))


# ---- padding, upsampling

@pytest.mark.parametrize("mode,np_mode", [("reflect", "reflect"), ("replicate", "edge"), ("circular", "wrap")])
def test_pad_modes_match_numpy(mode, np_mode):
    x = r.standard_normal((1, 2, 4, 5))
    out = run_op("aten::pad", T(x), [1, 2, 3, 0], mode, None).data
    np.testing.assert_allclose(out, np.pad(x, [(0, 0), (0, 0), (3, 0), (1, 2)], mode=np_mode))


def test_constant_pad_and_errors():
    x = np.arange(6.0).reshape(2, 3)
    out = run_op("aten::constant_pad_nd", T(x), [1, -1, 0, 1], 9.0).data
    np.testing.assert_allclose(out, [[9, 0, 1], [9, 3, 4], [9, 9, 9]])
    with pytest.raises(RuntimeError, match="Padding size should be less than the corresponding input dimension"):
        run_op("aten::pad", T(np.zeros((1, 2, 3))), [3, 3], "reflect", None)


def test_upsample_matches_pytorch():
    x = T(np.arange(6.0).reshape(1, 1, 2, 3))
    out = run_op("aten::upsample_bilinear2d", x, [3, 4], False, None, None).data.ravel()
    np.testing.assert_allclose(out, [0.0, 0.625, 1.375, 2.0, 1.5, 2.125, 2.875, 3.5, 3.0, 3.625, 4.375, 5.0])
    out = run_op("aten::upsample_bilinear2d", x, [3, 4], True, None, None).data.ravel()
    np.testing.assert_allclose(out, [0, 2 / 3, 4 / 3, 2, 1.5, 13 / 6, 17 / 6, 3.5, 3, 11 / 3, 13 / 3, 5])
    out = run_op("aten::upsample_nearest2d", x, None, [1.5, 1.5]).data.ravel()
    np.testing.assert_allclose(out, [0, 0, 1, 2, 0, 0, 1, 2, 3, 3, 4, 5])


def test_pixel_shuffle_roundtrip():
    x = r.standard_normal((2, 8, 3, 2))
    y = run_op("aten::pixel_shuffle", T(x), 2)
    assert y.shape == (2, 2, 6, 4)
    assert y.data[0, 1, 1, 0] == x[0, 4 + 2, 0, 0]  # channel c*r*r + i*r + j -> (c, h*r + i, w*r + j)
    np.testing.assert_allclose(run_op("aten::pixel_unshuffle", y, 2).data, x)


# ---- recurrent, attention

def _lstm_params():
    shapes = [(8, 2), (8, 2), (8,), (8,)]
    return [np.arange(int(np.prod(s)), dtype=np.float64).reshape(s) * 0.1 - 0.3 for s in shapes]


def test_lstm_matches_pytorch_and_cells():
    ps = _lstm_params()
    x = np.array([[[1.0, -1.0]], [[0.5, 2.0]]])
    h0 = np.zeros((1, 1, 2))
    out, h, c = run_op("aten::lstm", T(x), [T(h0), T(h0)], [T(p) for p in ps], True, 1, 0.0, False, False, False)
    np.testing.assert_allclose(out.data.ravel(), [0.02057788804834924, 0.07319398379035708,
                                                  0.22598664728672932, 0.42352124998887614])
    np.testing.assert_allclose(c.data.ravel(), [0.2402704981045507, 0.4628938204617577])
    hc = [T(h0[0]), T(h0[0])]
    for t in range(2):
        hc = list(run_op("aten::lstm_cell", T(x[t]), hc, *[T(p) for p in ps]))
    np.testing.assert_allclose(hc[0].data, h.data[0])
    bf, _, _ = run_op("aten::lstm", T(x.swapaxes(0, 1)), [T(h0), T(h0)], [T(p) for p in ps], True, 1, 0.0, False,
                      False, True)
    np.testing.assert_allclose(bf.data.swapaxes(0, 1), out.data)


def test_gru_bidirectional_shapes():
    ps = []
    for l in range(2):
        for _ in range(2):
            ps += [r.standard_normal((9, 4 if l == 0 else 6)), r.standard_normal((9, 3)), r.standard_normal(9),
                   r.standard_normal(9)]
    out, h = run_op("aten::gru", T(r.standard_normal((5, 2, 4))), T(np.zeros((4, 2, 3))), [T(p) for p in ps],
                    True, 2, 0.0, False, True, False)
    assert out.shape == (5, 2, 6) and h.shape == (4, 2, 3)
    np.testing.assert_allclose(out.data[-1, :, :3], h.data[2])  # last layer, forward direction
    np.testing.assert_allclose(out.data[0, :, 3:], h.data[3])  # last layer, reverse direction


def test_scaled_dot_product_attention_reference():
    q, k, v = r.standard_normal((2, 3, 4)), r.standard_normal((2, 5, 4)), r.standard_normal((2, 5, 2))
    mask = r.random((3, 5)) > 0.3
    mask[:, 0] = True
    s = q @ k.swapaxes(-1, -2) / 2.0
    s = np.where(mask, s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    out = run_op("aten::scaled_dot_product_attention", T(q), T(k), T(v), T(mask)).data
    np.testing.assert_allclose(out, p @ v, atol=1e-12)
    causal = run_op("aten::scaled_dot_product_attention", T(q), T(k[:, :3]), T(v[:, :3]), None, 0.0, True).data
    np.testing.assert_allclose(causal[:, 0], v[:, 0], atol=1e-12)  # the first query sees only the first key
