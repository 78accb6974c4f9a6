"""Behaviour of ops/activations*.py: forward values against the defining formulas,
dtype rules, in-place variants, and the backward ops against analytic derivatives."""

import math

import numpy as np
import pytest

import irjit.ops  # noqa: F401  (registers every op)
from irjit.runtime.autograd import run_op
from irjit.ops.tensor import Tensor

X = np.array([-3.5, -1.0, -0.25, 0.5, 2.0, 4.0])


def T(x, dtype=None):
    return Tensor(np.asarray(x, dtype=dtype))


def run(kind, *args):
    out = run_op(kind, *args)
    if isinstance(out, tuple):
        return tuple(o.data for o in out)
    return out.data if isinstance(out, Tensor) else out


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def softplus(x):
    return np.log1p(np.exp(x))


ERF = np.vectorize(math.erf)

FORWARD = [
    ("aten::relu", (), np.maximum(X, 0)),
    ("aten::relu6", (), np.clip(X, 0, 6)),
    ("aten::tanh", (), np.tanh(X)),
    ("aten::sigmoid", (), sigmoid(X)),
    ("aten::gelu", ("none",), 0.5 * X * (1 + ERF(X / math.sqrt(2)))),
    ("aten::gelu", ("tanh",), 0.5 * X * (1 + np.tanh(math.sqrt(2 / math.pi) * (X + 0.044715 * X ** 3)))),
    ("aten::leaky_relu", (0.2,), np.where(X > 0, X, 0.2 * X)),
    ("aten::hardtanh", (-0.5, 1.0), np.clip(X, -0.5, 1.0)),
    ("aten::hardshrink", (0.5,), np.where(np.abs(X) > 0.5, X, 0)),
    ("aten::elu", (0.5, 2.0, 1.5), np.where(X > 0, 2.0 * X, 2.0 * 0.5 * (np.exp(1.5 * X) - 1))),
    ("aten::selu", (), 1.0507009873554805 * np.where(X > 0, X, 1.6732632423543772 * (np.exp(X) - 1))),
    ("aten::celu", (2.0,), np.where(X > 0, X, 2.0 * (np.exp(X / 2.0) - 1))),
    ("aten::silu", (), X * sigmoid(X)),
    ("aten::softplus", (2.0, 4.0), np.where(2 * X > 4, X, softplus(2 * X) / 2)),
    ("aten::threshold", (0.0, -9.0), np.where(X > 0, X, -9.0)),
    ("aten::hardsigmoid", (), np.clip(X + 3, 0, 6) / 6),
    ("aten::hardswish", (), X * np.clip(X + 3, 0, 6) / 6),
    ("aten::mish", (), X * np.tanh(softplus(X))),
    ("aten::log_sigmoid", (), np.log(sigmoid(X))),
]


@pytest.mark.parametrize("kind,args,expected", FORWARD, ids=[f[0] + str(f[1]) for f in FORWARD])
def test_forward_values(kind, args, expected):
    out = run(kind, T(X), *args)
    assert out.dtype == np.float64
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kind", ["aten::relu_", "aten::sigmoid_", "aten::hardtanh_", "aten::silu_",
                                  "aten::elu_", "aten::leaky_relu_", "aten::gelu_", "aten::mish_"])
def test_inplace_variants_alias_self(kind):
    x = T(X.copy())
    expected = run(kind[:-1], T(X))
    assert run_op(kind, x) is x
    np.testing.assert_allclose(x.data, expected)


def test_dtype_rules():
    assert run("aten::relu", T([-3, 2], np.int32)).tolist() == [0, 2]
    assert run("aten::relu", T([-3, 2], np.int32)).dtype == np.int32
    assert run("aten::relu6", T([-1, 9])).tolist() == [0, 6]
    assert run("aten::threshold", T([-1, 2]), 0, 5.5).tolist() == [5, 2]
    assert run("aten::sigmoid", T([-1, 2])).dtype == np.float32
    assert run("aten::sigmoid", T([-1000.0, 1000.0], np.float32)).tolist() == [0.0, 1.0]
    with pytest.raises(RuntimeError, match="Boolean inputs not supported for relu"):
        run("aten::relu", T([True]))
    for kind in ("aten::gelu", "aten::silu", "aten::elu", "aten::leaky_relu", "aten::softplus", "aten::mish"):
        with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
            run(kind, T([1, 2]))
    with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh"):
        run("aten::gelu", T(X), "x")


def test_nan_propagates():
    for kind in ("aten::relu", "aten::hardtanh"):
        assert np.isnan(run(kind, T([math.nan]))).all()
    assert np.isnan(run("aten::threshold", T([math.nan]), 0.0, 1.0)).all()


def test_prelu_and_glu():
    x = -np.ones((2, 3, 2))
    out = run("aten::prelu", T(x), T([0.1, 0.2, 0.3]))
    np.testing.assert_allclose(out[:, :, 0], [[-0.1, -0.2, -0.3]] * 2)
    assert run("aten::prelu", T([-2.0, 3.0]), T([0.5])).tolist() == [-1.0, 3.0]
    with pytest.raises(RuntimeError, match="Found parameter numbers = 3 and channel size = 1"):
        run("aten::prelu", T([-1.0, 1.0, 2.0]), T([0.1, 0.2, 0.3]))
    g = run("aten::glu", T([[0.0, 1.0], [2.0, 3.0]]), -1)
    np.testing.assert_allclose(g, [[0.0], [2.0 * sigmoid(3.0)]])
    with pytest.raises(RuntimeError, match="Halving dimension must be even, but dimension 0 is size 3"):
        run("aten::glu", T([1.0, 2.0, 3.0]), 0)


def numeric_derivative(f, x, eps=1e-6):
    return (f(x + eps) - f(x - eps)) / (2 * eps)


G = np.array([1.0, -2.0, 0.5, 1.5, 1.0, 3.0])


@pytest.mark.parametrize("kind,args,fn", [
    ("aten::silu_backward", (), lambda x: x * sigmoid(x)),
    ("aten::mish_backward", (), lambda x: x * np.tanh(softplus(x))),
    ("aten::hardswish_backward", (), lambda x: x * np.clip(x + 3, 0, 6) / 6),
    ("aten::hardsigmoid_backward", (), lambda x: np.clip(x + 3, 0, 6) / 6),
    ("aten::softplus_backward", (1.0, 20.0), lambda x: softplus(x)),
    ("aten::gelu_backward", ("none",), lambda x: 0.5 * x * (1 + ERF(x / math.sqrt(2)))),
    ("aten::gelu_backward", ("tanh",),
     lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))),
    ("aten::leaky_relu_backward", (0.1, False), lambda x: np.where(x > 0, x, 0.1 * x)),
    ("aten::hardtanh_backward", (-2.0, 1.0), lambda x: np.clip(x, -2.0, 1.0)),
    ("aten::threshold_backward", (0.0,), lambda x: np.maximum(x, 0)),
])
def test_backward_ops_match_numeric_derivatives(kind, args, fn):
    out = run(kind, T(G), T(X), *args)
    np.testing.assert_allclose(out, G * numeric_derivative(fn, X), rtol=1e-6, atol=1e-8)


def test_backward_ops_from_outputs():
    y = np.tanh(X)
    np.testing.assert_allclose(run("aten::tanh_backward", T(G), T(y)), G * (1 - y * y))
    s = sigmoid(X)
    np.testing.assert_allclose(run("aten::sigmoid_backward", T(G), T(s)), G * s * (1 - s))
    out = run("aten::elu_backward", T([1.0, 1.0]), 1.0, 1.0, 1.0, True, T([-0.5, 1.0]))
    assert out.tolist() == [0.5, 1.0]
    y, buf = run("aten::log_sigmoid_forward", T(X))
    np.testing.assert_allclose(buf, np.exp(-np.abs(X)))
    np.testing.assert_allclose(run("aten::log_sigmoid_backward", T(G), T(X), T(buf)), G * sigmoid(-X))
    # hardshrink's passes the gradient outside [-lambd, lambd] only (0 at the bounds, as PyTorch)
    assert run("aten::hardshrink_backward", T([1.0] * 5), T([-1.0, -0.5, 0.0, 0.5, 0.7]), 0.5).tolist() == \
        [1.0, 0.0, 0.0, 0.0, 1.0]
    # hardswish's backward at the ends follows PyTorch: 0 at -3, 1 at 3
    assert run("aten::hardswish_backward", T([1.0, 1.0]), T([-3.0, 3.0])).tolist() == [0.0, 1.0]
