"""Gradcheck samples for ops/pointwise*.py: full overload name -> argument lists.
Inputs keep away from kinks (rounding steps, clamp bounds, ties of maximum)."""

import numpy as np

r = np.random.default_rng(7)


def t(*shape):
    return r.standard_normal(shape)


def pos(*shape):
    """Positive values away from 0 (for log, sqrt, pow bases)."""
    return r.uniform(0.5, 2.0, shape)


def unit(*shape):
    """Values inside (-1, 1) away from the ends (asin, acos)."""
    return r.uniform(-0.8, 0.8, shape)


def off_grid(*shape):
    """Values away from integers and half-integers (rounding ops, remainder)."""
    return r.integers(-3, 3, shape) + r.uniform(0.1, 0.4, shape)


SAMPLES = {
    "aten::exp": [[t(2, 3)]],
    "aten::expm1": [[t(3)]],
    "aten::log": [[pos(2, 3)]],
    "aten::log1p": [[pos(3)]],
    "aten::log2": [[pos(3)]],
    "aten::log10": [[pos(3)]],
    "aten::sqrt": [[pos(2, 2)]],
    "aten::rsqrt": [[pos(3)]],
    "aten::sin": [[t(3)]],
    "aten::cos": [[t(3)]],
    "aten::tan": [[unit(3)]],
    "aten::atan": [[t(3)]],
    "aten::sinh": [[t(3)]],
    "aten::cosh": [[t(3)]],
    "aten::asin": [[unit(3)]],
    "aten::acos": [[unit(3)]],
    "aten::erf": [[t(3)]],
    "aten::erfc": [[t(3)]],
    "aten::reciprocal": [[pos(3)]],
    "aten::abs": [[np.array([-1.5, 0.7, 2.0])]],
    "aten::sign": [[np.array([-1.5, 0.7, 2.0])]],
    "aten::floor": [[off_grid(3)]],
    "aten::ceil": [[off_grid(3)]],
    "aten::round": [[off_grid(3)]],
    "aten::round.decimals": [[off_grid(3), 0]],
    "aten::trunc": [[off_grid(3)]],
    "aten::frac": [[off_grid(3)]],
    "aten::square": [[t(2, 3)]],
    "aten::pow.Tensor_Scalar": [[pos(3), 2.5], [t(2, 2), 3], [t(2), 0]],
    "aten::pow.Tensor_Tensor": [[pos(2, 3), t(3)], [pos(3), t(2, 3)]],
    "aten::pow.Scalar": [[2.0, t(3)], [0.5, t(2, 2)]],
    "aten::clamp": [[np.array([-2.0, -0.3, 0.4, 1.8]), -1.0, 1.0],
                    [np.array([-2.0, 0.4]), None, 0.0], [np.array([-2.0, 0.4]), 0.0, None]],
    "aten::clamp.Tensor": [[np.array([-2.0, -0.3, 0.4, 1.8]), np.array([-1.0]), np.array([0.0, 0.2, 1.0, 1.0])],
                           [np.array([[-2.0, 0.4], [0.6, 3.0]]), np.array([0.5, -1.0]), None],
                           [np.array([-2.0, 0.4]), None, np.array([0.0, 0.0])],
                           [np.array([0.3, 0.9]), np.array([1.0, 0.1]), np.array([0.5, 0.5])]],
    "aten::clip": [[np.array([-2.0, 0.4]), -1.0, 1.0]],
    "aten::clip.Tensor": [[np.array([-2.0, 0.4]), np.array([-1.0, 0.0]), np.array([1.0])]],
    "aten::clamp_min": [[np.array([-2.0, 0.4]), 0.0]],
    "aten::clamp_min.Tensor": [[np.array([-2.0, 0.4]), np.array([0.0, 0.1])]],
    "aten::clamp_max": [[np.array([-2.0, 0.4]), 0.0]],
    "aten::clamp_max.Tensor": [[np.array([-2.0, 0.4]), np.array([[0.0], [1.0]])]],
    "aten::where.self": [[np.array([True, False, True]), t(2, 3), t(3)]],
    "aten::where.ScalarOther": [[np.array([True, False]), t(2), 1.5]],
    "aten::where.ScalarSelf": [[np.array([[True], [False]]), 1.5, t(2, 2)]],
    "aten::masked_fill.Scalar": [[t(2, 3), np.array([True, False, True]), 2.0]],
    "aten::masked_fill.Tensor": [[t(2, 3), np.array([True, False, True]), np.array(0.5)]],
    "aten::nan_to_num": [[t(3), None, None, None]],
    "aten::remainder.Tensor": [[off_grid(3) * 3, np.array([1.0, 2.0, -1.5])]],
    "aten::remainder.Scalar": [[off_grid(3), 1.0]],
    "aten::fmod.Tensor": [[off_grid(3) * 3, np.array([1.0, 2.0, -1.5])]],
    "aten::fmod.Scalar": [[off_grid(3), 1.0]],
    "aten::div.Tensor_mode": [[t(3), pos(3), None], [off_grid(3), np.array([1.0, 1.0, 1.0]), "floor"]],
    "aten::div.Scalar_mode": [[t(3), 2.0, None], [off_grid(3), 1.0, "trunc"]],
    "aten::true_divide.Tensor": [[t(2, 3), pos(3)]],
    "aten::true_divide.Scalar": [[t(3), 4.0]],
    "aten::maximum": [[np.array([1.0, -2.0, 0.5]), np.array([0.0, 3.0, 0.5])], [t(2, 3), t(3)]],
    "aten::minimum": [[np.array([1.0, -2.0, 0.5]), np.array([0.0, 3.0, 0.5])], [t(2, 3), t(3)]],
    "aten::addcmul": [[t(2, 3), t(3), t(2, 1), 0.5]],
    "aten::addcdiv": [[t(2, 3), t(3), pos(2, 1), 2.0]],
    "aten::lerp.Scalar": [[t(2, 3), t(3), 0.3], [t(3), t(3), 0.8]],
    "aten::lerp.Tensor": [[t(2, 3), t(3), t(2, 1)]],
}
