"""Gradcheck samples for the neural-network ops (ops/nn_*.py): full overload name ->
argument lists. Running statistics and class weights are integer arrays so that gradcheck
perturbs only the differentiable inputs; dropout samples are deterministic (eval or p=0)."""

import numpy as np

r = np.random.default_rng(7)


def t(*shape):
    return r.standard_normal(shape)


def u(*shape):  # in (0.1, 0.9)
    return r.random(shape) * 0.8 + 0.1


def idx(high, *shape):
    return r.integers(0, high, shape)


IRM, IRV = np.array([0, 1, -1]), np.array([1, 2, 3])  # integer running stats (not gradchecked)


def _rnn_params(mult, layers, dirs, inp, hid, bias=True):
    ps = []
    for l in range(layers):
        for _ in range(dirs):
            ps += [t(mult * hid, inp if l == 0 else hid * dirs) * 0.5, t(mult * hid, hid) * 0.5]
            if bias:
                ps += [t(mult * hid) * 0.5, t(mult * hid) * 0.5]
    return ps


SAMPLES = {
    # convolution
    "aten::conv1d": [[t(2, 2, 5), t(4, 1, 3), t(4), [2], [1], [1], 2]],
    "aten::conv2d": [[t(1, 2, 5, 4), t(3, 2, 3, 2), t(3), [2, 1], [1, 0], [1, 2], 1],
                     [t(4, 3, 3), t(2, 2, 2, 2), None, 1, 1, 1, 2]],
    "aten::conv3d": [[t(1, 2, 3, 3, 3), t(2, 2, 2, 2, 2), t(2), 1, 0, 1, 1]],
    "aten::conv1d.padding": [[t(1, 2, 5), t(3, 2, 4), t(3), [1], "same", [1], 1]],
    "aten::conv2d.padding": [[t(1, 2, 4, 4), t(2, 2, 2, 3), None, [1, 1], "same", [1, 1], 1],
                             [t(1, 2, 4, 4), t(2, 2, 2, 3), t(2), [1, 1], "valid", [1, 1], 1]],
    "aten::conv3d.padding": [[t(1, 1, 3, 3, 3), t(1, 1, 2, 2, 2), None, 1, "same", 1, 1]],
    "aten::conv_transpose1d": [[t(1, 2, 4), t(2, 3, 3), t(3), [2], [1], [1], 1, [1]]],
    "aten::conv_transpose2d.input": [[t(1, 4, 3, 3), t(4, 1, 2, 3), t(2), [2, 1], [0, 1], [1, 0], 2, [1, 1]]],
    "aten::conv_transpose3d.input": [[t(1, 2, 2, 2, 2), t(2, 1, 2, 2, 2), None, 2, 0, 0, 1, 1]],
    "aten::convolution": [[t(1, 2, 4, 4), t(2, 2, 3, 3), t(2), [1, 1], [1, 1], [1, 1], False, [0, 0], 1],
                          [t(1, 2, 3, 3), t(2, 2, 2, 2), t(2), [2, 2], [0, 0], [1, 1], True, [1, 1], 1]],
    "aten::_convolution": [[t(1, 2, 5), t(2, 2, 3), t(2), [1], [1], [1], False, [0], 1, False, False, True, True]],
    "aten::_convolution.deprecated": [[t(1, 2, 4), t(2, 2, 2), None, [2], [0], [1], True, [1], 1, False, False,
                                       True]],
    # linear
    "aten::linear": [[t(2, 3, 4), t(5, 4), t(5)], [t(4), t(3, 4), None]],
    # pooling
    "aten::max_pool1d": [[t(1, 2, 7), [3], [2], [1], [1], True]],
    "aten::max_pool1d_with_indices": [[t(2, 5), [2], [], [0], [1], False]],
    "aten::max_pool2d": [[t(1, 2, 5, 5), [3, 2], [2, 2], [1, 0], [1, 1], False]],
    "aten::max_pool2d_with_indices": [[t(1, 5, 5), [2, 2], [2, 2], [1, 1], [2, 1], True]],
    "aten::max_pool3d": [[t(1, 1, 4, 4, 4), [2, 2, 2], [], [0, 0, 0], [1, 1, 1], False]],
    "aten::max_pool3d_with_indices": [[t(1, 1, 3, 4, 4), [2, 2, 2], [1, 2, 2], [1, 0, 0], [1, 1, 1], True]],
    "aten::avg_pool1d": [[t(1, 2, 7), [3], [2], [1], True, False]],
    "aten::avg_pool2d": [[t(1, 2, 5, 5), [3, 3], [2, 2], [1, 1], True, True, None],
                         [t(1, 4, 5), [2, 3], [1, 2], [0, 1], False, False, 5]],
    "aten::avg_pool3d": [[t(1, 1, 3, 4, 4), [2, 2, 2], [], [0, 1, 1], False, True, None]],
    "aten::adaptive_avg_pool1d": [[t(1, 2, 7), [3]]],
    "aten::adaptive_avg_pool2d": [[t(1, 2, 5, 7), [3, 4]]],
    "aten::_adaptive_avg_pool2d": [[t(2, 5, 5), [2, 3]]],
    "aten::adaptive_avg_pool3d": [[t(1, 1, 3, 4, 5), [2, 3, 2]]],
    "aten::_adaptive_avg_pool3d": [[t(1, 3, 4, 5), [1, 2, 3]]],
    "aten::adaptive_max_pool1d": [[t(1, 2, 7), [3]]],
    "aten::adaptive_max_pool2d": [[t(1, 2, 5, 7), [3, 4]]],
    # normalization
    "aten::native_batch_norm": [[t(4, 3, 2), t(3), t(3), None, None, True, 0.1, 1e-5],
                                [t(4, 3), t(3), t(3), IRM, IRV, False, 0.1, 1e-5]],
    "aten::_native_batch_norm_legit": [[t(3, 3, 2), None, t(3), IRM.astype(np.float32),
                                        IRV.astype(np.float32), True, 0.1, 1e-3]],
    "aten::_native_batch_norm_legit.no_stats": [[t(3, 3, 2, 2), t(3), None, True, 0.1, 1e-5]],
    "aten::_native_batch_norm_legit_no_training": [[t(2, 3, 2), t(3), t(3), IRM, IRV, 0.1, 1e-5]],
    "aten::batch_norm": [[t(4, 3, 2), t(3), t(3), None, None, True, 0.1, 1e-5, True],
                         [t(2, 3, 2, 2), t(3), t(3), IRM, IRV, False, 0.1, 1e-5, True]],
    "aten::instance_norm": [[t(2, 3, 4), t(3), t(3), None, None, True, 0.1, 1e-5, True],
                            [t(2, 3, 4), t(3), None, IRM, IRV, False, 0.1, 1e-5, True]],
    "aten::native_layer_norm": [[t(2, 3, 4), [3, 4], t(3, 4), t(3, 4), 1e-5]],
    "aten::layer_norm": [[t(3, 5), [5], t(5), t(5), 1e-5, True], [t(2, 2, 3), [3], None, None, 1e-5, True]],
    "aten::native_group_norm": [[t(2, 4, 3), t(4), t(4), 2, 4, 3, 2, 1e-5]],
    "aten::group_norm": [[t(2, 6, 2, 2), 3, t(6), t(6), 1e-5, True], [t(2, 4, 3), 4, None, None, 1e-5, True]],
    # dropout (deterministic settings)
    "aten::dropout": [[t(3, 4), 0.5, False], [t(3), 0.0, True]],
    "aten::feature_dropout": [[t(2, 3, 2), 0.3, False]],
    "aten::alpha_dropout": [[t(3, 4), 0.5, False]],
    "aten::feature_alpha_dropout": [[t(2, 3, 2), 0.0, True]],
    "aten::native_dropout": [[t(3, 4), 0.5, False]],
    # embedding
    # padding_idx and scale_grad_by_freq change the gradient on purpose: tested in test_nn_ops.py
    "aten::embedding": [[t(6, 3), idx(6, 2, 4), -1, False, False], [t(5, 2), np.array([1, 2, 1, 4]), -1, False, True]],
    "aten::embedding_bag": [[t(6, 3), np.array([1, 2, 4, 4, 3, 5]), np.array([0, 2, 2, 4]), False, 0, False,
                             t(6), False]],
    "aten::embedding_bag.padding_idx": [[t(6, 3), np.array([1, 2, 4, 4, 3, 5]), np.array([0, 2, 2, 6]), False, 1,
                                         False, None, True, 4]],
    "aten::_embedding_bag": [[t(6, 3), np.array([1, 2, 4, 4, 3, 5]), np.array([0, 3]), False, 2, False, None,
                              False, -1]],
    # softmax
    "aten::softmax.int": [[t(3, 4), 1, None], [t(2, 3, 2), 0, 7]],
    "aten::log_softmax.int": [[t(3, 4), -1, None]],
    "aten::_softmax": [[t(2, 3, 2), 1, False]],
    "aten::_log_softmax": [[t(4, 3), 0, False]],
    # losses
    "aten::mse_loss": [[t(3, 4), t(3, 4), 1], [t(3, 4), t(4), 0]],
    "aten::l1_loss": [[t(3, 4), t(3, 4), 2]],
    "aten::smooth_l1_loss": [[t(3, 4), t(3, 4), 1, 0.8], [t(5), t(5), 0, 0.0]],
    "aten::huber_loss": [[t(3, 4), t(3, 4), 2, 0.7]],
    "aten::binary_cross_entropy": [[u(3, 4), u(3, 4), np.array([1, 2, 3, 1]), 1], [u(5), u(5), None, 0]],
    "aten::binary_cross_entropy_with_logits": [[t(3, 4), u(3, 4), None, None, 1],
                                               [t(3, 4), u(3, 4), np.array([1, 2, 1, 3]), np.array([2, 1, 3, 1]), 2]],
    "aten::kl_div": [[t(3, 4), u(3, 4), 1, False], [t(3, 4), t(3, 4), 0, True]],
    "aten::nll_loss_forward": [[t(4, 3), np.array([0, 2, -100, 1]), None, 1, -100],
                               [t(3), np.array(2), np.array([1, 2, 3]), 0, -100]],
    "aten::nll_loss2d_forward": [[t(2, 3, 2, 2), idx(3, 2, 2, 2), np.array([1, 2, 3]), 1, -100]],
    "aten::nll_loss": [[t(4, 3), np.array([0, 2, 1, 1]), None, 2, -100]],
    "aten::nll_loss_nd": [[t(2, 3, 4), np.array([[0, 2, 1, 1], [2, 0, 5, 1]]), np.array([1, 3, 2]), 1, 5]],
    "aten::nll_loss2d": [[t(1, 3, 2, 2), idx(3, 1, 2, 2), None, 0, -100]],
    "aten::cross_entropy_loss": [[t(4, 3), np.array([0, 2, -100, 1]), None, 1, -100, 0.0],
                                 [t(2, 3, 2), np.array([[0, 2], [1, 1]]), np.array([1, 2, 3]), 1, -100, 0.2],
                                 [t(4, 3), u(4, 3), None, 1, -100, 0.1],
                                 [t(3), np.array(1), None, 0, -100, 0.3]],
    "aten::cosine_similarity": [[t(3, 4), t(3, 4), 1, 1e-8], [t(2, 3), t(3), 0, 1e-8]],
    "aten::pairwise_distance": [[t(3, 4), t(3, 4), 2.0, 1e-6, False], [t(3, 4), t(4), 3.0, 1e-6, True]],
    # padding
    "aten::constant_pad_nd": [[t(2, 3), [1, 2, -1, 1], 0.5]],
    "aten::reflection_pad1d": [[t(2, 4), [2, 1]]],
    "aten::reflection_pad2d": [[t(1, 3, 4), [1, 2, 2, 0]]],
    "aten::reflection_pad3d": [[t(1, 1, 2, 3, 3), [1, 1, 2, 0, 1, 0]]],
    "aten::replication_pad1d": [[t(1, 2, 3), [3, 1]]],
    "aten::replication_pad2d": [[t(1, 2, 3), [1, 0, 2, 1]]],
    "aten::replication_pad3d": [[t(1, 2, 2, 2), [1, 0, 0, 1, 1, 1]]],
    "aten::_pad_circular": [[t(1, 2, 3, 4), [1, 2, 2, -1]]],
    "aten::pad": [[t(1, 2, 4), [1, 2], "reflect", None], [t(1, 2, 3, 3), [1, 1, 2, 0], "circular", None],
                  [t(2, 3), [1, 1], "constant", 2.0], [t(1, 2, 3), [2, 1], "replicate", None]],
    "aten::_pad_enum": [[t(1, 2, 4), [1, 2], 1, None]],
    # upsampling
    "aten::upsample_nearest1d": [[t(1, 2, 3), [7], None]],
    "aten::upsample_nearest1d.vec": [[t(1, 2, 3), None, [2.5]]],
    "aten::_upsample_nearest_exact1d": [[t(1, 2, 3), [5], None]],
    "aten::_upsample_nearest_exact1d.vec": [[t(1, 2, 3), None, [1.5]]],
    "aten::upsample_nearest2d": [[t(1, 2, 2, 3), [4, 5], None, None]],
    "aten::upsample_nearest2d.vec": [[t(1, 1, 2, 3), None, [2.0, 1.5]]],
    "aten::_upsample_nearest_exact2d": [[t(1, 1, 3, 2), [5, 3], None, None]],
    "aten::_upsample_nearest_exact2d.vec": [[t(1, 1, 3, 2), [2, 4], None]],
    "aten::upsample_nearest3d": [[t(1, 1, 2, 2, 2), [3, 3, 4], None, None, None]],
    "aten::upsample_nearest3d.vec": [[t(1, 1, 2, 2, 2), None, [2.0, 1.0, 1.5]]],
    "aten::_upsample_nearest_exact3d": [[t(1, 1, 2, 2, 2), [3, 2, 3], None, None, None]],
    "aten::_upsample_nearest_exact3d.vec": [[t(1, 1, 2, 2, 2), None, [1.5]]],
    "aten::upsample_linear1d": [[t(1, 2, 3), [7], False, None], [t(1, 2, 4), [3], True, None]],
    "aten::upsample_linear1d.vec": [[t(1, 2, 3), None, True, [2.0]]],
    "aten::upsample_bilinear2d": [[t(1, 2, 3, 3), [5, 4], False, None, None], [t(1, 1, 3, 3), [4, 6], True, None, None]],
    "aten::upsample_bilinear2d.vec": [[t(1, 1, 2, 3), None, False, [1.7, 2.0]]],
    "aten::upsample_trilinear3d": [[t(1, 1, 2, 2, 3), [3, 3, 4], False, None, None, None]],
    "aten::upsample_trilinear3d.vec": [[t(1, 1, 2, 2, 2), None, True, [2.0, 1.5, 1.0]]],
    "aten::pixel_shuffle": [[t(1, 8, 2, 2), 2]],
    "aten::pixel_unshuffle": [[t(1, 2, 4, 2), 2]],
    # recurrent
    "aten::lstm_cell": [[t(2, 3), [t(2, 2), t(2, 2)], t(8, 3), t(8, 2), t(8), t(8)],
                        [t(2, 3), [t(2, 2), t(2, 2)], t(8, 3), t(8, 2), None, None]],
    "aten::gru_cell": [[t(2, 3), t(2, 2), t(6, 3), t(6, 2), t(6), t(6)]],
    "aten::rnn_tanh_cell": [[t(2, 3), t(2, 2), t(2, 3), t(2, 2), t(2), t(2)]],
    "aten::rnn_relu_cell": [[t(2, 3), t(2, 2), t(2, 3), t(2, 2), None, None]],
    "aten::lstm.input": [[t(3, 1, 2), [t(2, 1, 2), t(2, 1, 2)], _rnn_params(4, 1, 2, 2, 2), True, 1, 0.0, False,
                          True, False]],
    "aten::gru.input": [[t(1, 3, 2), t(2, 1, 2), _rnn_params(3, 2, 1, 2, 2, False), False, 2, 0.0, True, False,
                         True]],
    "aten::rnn_tanh.input": [[t(3, 2, 2), t(1, 2, 3), _rnn_params(1, 1, 1, 2, 3), True, 1, 0.0, False, False, False]],
    "aten::rnn_relu.input": [[t(2, 2, 3), t(2, 2, 2), _rnn_params(1, 1, 2, 3, 2) , True, 1, 0.0, False, True, False]],
    # attention
    "aten::scaled_dot_product_attention": [
        [t(1, 2, 3, 4), t(1, 2, 4, 4), t(1, 2, 4, 3), None, 0.0, False, None, False],
        [t(2, 3, 4), t(2, 3, 4), t(2, 3, 2), None, 0.0, True, 0.5, False],
        [t(1, 2, 3, 2), t(1, 1, 4, 2), t(1, 1, 4, 2), np.array([[1, 1, 0, 1], [0, 1, 1, 1], [1, 0, 0, 0]], bool),
         0.0, False, None, True]],
}
