"""Gradcheck samples for ops/reductions*.py (no ties for max/min/median; no zero norms)."""

import numpy as np

r = np.random.default_rng(12)


def t(*shape):
    return r.standard_normal(shape)


def distinct(*shape):
    n = int(np.prod(shape))
    return (r.permutation(n) + r.uniform(0.1, 0.4, n)).reshape(shape) - n / 2


SAMPLES = {
    "aten::sum": [[t(2, 3), None]],
    "aten::sum.dim_IntList": [[t(2, 3, 4), [0, -1], False, None], [t(2, 3), [1], True, None], [t(2, 3), None, False, None]],
    "aten::mean": [[t(2, 3), None]],
    "aten::mean.dim": [[t(2, 3, 4), [1], False, None], [t(2, 3), [], True, None]],
    "aten::prod": [[t(2, 3), None], [np.array([[1.5, 0.0], [2.0, -1.0]]), None]],
    "aten::prod.dim_int": [[t(2, 3), 1, False, None], [np.array([[0.0, 2.0], [0.0, 3.0], [1.0, 0.5]]), 0, True, None]],
    "aten::max": [[distinct(2, 3)]],
    "aten::min": [[distinct(2, 3)]],
    "aten::median": [[distinct(2, 3)]],
    "aten::max.dim": [[distinct(2, 3), 1, False], [distinct(2, 3), 0, True]],
    "aten::min.dim": [[distinct(2, 3), -1, False]],
    "aten::median.dim": [[distinct(3, 3), 0, False]],
    "aten::max.other": [[distinct(2, 3), distinct(3)]],
    "aten::min.other": [[distinct(2, 3), distinct(2, 1)]],
    "aten::amax": [[distinct(2, 3, 2), [0, 2], False], [distinct(2, 3), [], True]],
    "aten::amin": [[distinct(2, 3), [1], True]],
    "aten::var": [[t(2, 3), True], [t(4), False]],
    "aten::var.dim": [[t(2, 3), [1], True, False], [t(2, 3), None, False, True]],
    "aten::var.correction": [[t(2, 4), [1], 2, True], [t(3, 2), None, None, False]],
    "aten::std": [[t(2, 3), True]],
    "aten::std.dim": [[t(2, 3), [0], False, True]],
    "aten::std.correction": [[t(2, 4), [-1], 0, False]],
    "aten::var_mean": [[t(2, 3), True]],
    "aten::var_mean.dim": [[t(2, 3), [1], True, True]],
    "aten::var_mean.correction": [[t(2, 3), [0], 1, False]],
    "aten::std_mean": [[t(2, 3), False]],
    "aten::std_mean.dim": [[t(2, 3), [1], True, False]],
    "aten::std_mean.correction": [[t(2, 3), None, 1, True]],
    "aten::norm.Scalar": [[t(2, 3), 2], [t(3), 1], [t(3), 3.0]],
    "aten::norm.ScalarOpt_dim": [[t(2, 3), None, [1], False], [distinct(2, 3), float("inf"), [0], True]],
    "aten::norm.ScalarOpt_dim_dtype": [[t(2, 3), 2, [1], True, 7]],
    "aten::norm.ScalarOpt_dtype": [[t(2, 3), 0.5, 7]],
    "aten::linalg_vector_norm": [[t(2, 3), 2, None, False, None], [t(2, 3), 1.5, [1], True, None]],
    "aten::frobenius_norm.dim": [[t(2, 3), [0, 1], False]],
    "aten::logsumexp": [[t(2, 3), [1], False], [t(2, 3), [0, 1], True]],
    "aten::cumsum": [[t(2, 3), 1, None], [t(3), 0, None]],
    "aten::cumprod": [[t(2, 3), 1, None], [np.array([2.0, 0.0, 3.0, 0.5]), 0, None]],
}
