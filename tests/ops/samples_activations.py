"""Gradcheck samples for ops/activations.py (inputs kept away from the kinks)."""

import numpy as np

from irjit.ops.registry import is_registered

r = np.random.default_rng(11)


def t(*shape):
    """Standard normal values pushed at least 0.1 away from 0."""
    x = r.standard_normal(shape)
    return np.where(np.abs(x) < 0.1, 0.3, x)


WIDE = np.array([-5.0, -2.0, -0.5, 0.5, 2.0, 5.0])

SAMPLES = {
    "aten::relu": [[t(2, 3)]],
    "aten::relu6": [[np.array([-1.0, 0.5, 3.0, 7.0])]],
    "aten::threshold": [[np.array([-1.0, 0.5, 3.0]), 0.2, -4.0]],
    "aten::hardtanh": [[np.array([-2.0, -0.5, 0.5, 3.0]), -1.0, 1.0]],
    "aten::hardshrink": [[np.array([-2.0, -0.3, 0.3, 3.0]), 0.5]],
    "aten::tanh": [[t(2, 3)]],
    "aten::sigmoid": [[t(2, 3)]],
    "aten::gelu": [[t(2, 3), "none"], [t(3), "tanh"]],
    "aten::leaky_relu": [[t(2, 3), 0.1]],
    "aten::elu": [[t(2, 3), 1.0, 1.0, 1.0], [t(4), 0.5, 2.0, 1.5]],
    "aten::selu": [[t(2, 3)]],
    "aten::celu": [[t(2, 3), 0.7]],
    "aten::silu": [[t(2, 3)]],
    "aten::softplus": [[t(2, 3), 1.0, 20.0], [np.array([-1.0, 0.5, 3.0]), 2.0, 2.0]],
    "aten::hardsigmoid": [[WIDE]],
    "aten::hardswish": [[WIDE]],
    "aten::mish": [[t(2, 3)]],
    "aten::log_sigmoid": [[t(2, 3)]],
    "aten::log_sigmoid_forward": [[t(2, 3)]],
    "aten::prelu": [[t(2, 3), np.array([0.25])], [t(3), np.array(0.1)]]
    + ([[t(2, 3, 2), np.array([0.1, 0.2, 0.3])]] if is_registered("aten::reshape") else []),
    "aten::_prelu_kernel": [[t(2, 3), np.array([0.1, 0.2, 0.3])]],
    "aten::glu": [[t(2, 4), -1], [t(4, 3), 0]],
}
