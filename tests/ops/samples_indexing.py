"""Gradcheck samples for ops/indexing*.py (distinct values for sort/topk)."""

import numpy as np

r = np.random.default_rng(14)


def t(*shape):
    return r.standard_normal(shape)


def i64(*values):
    return np.array(values, dtype=np.int64)


def distinct(*shape):
    n = int(np.prod(shape))
    return (r.permutation(n) + r.uniform(0.1, 0.4, n)).reshape(shape)


SAMPLES = {
    "aten::index.Tensor": [[t(4, 3), [i64(0, 2, 0)]], [t(3, 4), [None, i64(1, 3)]],
                           [t(2, 3), [np.array([[True, False, True], [False, True, True]])]]],
    "aten::index_put": [[t(4, 3), [i64(0, 2)], t(2, 3), False], [t(4, 3), [i64(0, 0)], t(3), True]],
    "aten::index_select": [[t(4, 3), 0, i64(3, 0, 3)], [t(2, 3), -1, i64(2)]],
    "aten::index_add": [[t(4, 2), 0, i64(1, 1, 3), t(3, 2), 2.0]],
    "aten::gather": [[t(3, 4), 1, i64(0, 3, 3, 1, 2, 0).reshape(3, 2), False]],
    "aten::scatter.src": [[t(3, 4), 1, i64(0, 3, 1, 2).reshape(2, 2), t(2, 2)]],
    "aten::scatter.value": [[t(3, 4), 0, i64(2, 0).reshape(1, 2), 1.5]],
    "aten::scatter_add": [[t(3, 4), 0, i64(2, 0, 2, 2).reshape(2, 2), t(2, 2)]],
    "aten::masked_select": [[t(2, 3), np.array([True, False, True])]],
    "aten::masked_scatter": [[t(2, 3), np.array([[True, False, True], [False, False, True]]), t(5)]],
    "aten::take_along_dim": [[t(3, 4), i64(0, 3, 1).reshape(3, 1), 1], [t(2, 3), i64(5, 0), None]],
    "aten::sort": [[distinct(2, 4), -1, False], [distinct(3, 2), 0, True]],
    "aten::sort.stable": [[distinct(2, 4), True, 1, True]],
    "aten::topk": [[distinct(2, 5), 2, -1, True, True], [distinct(4, 2), 3, 0, False, True]],
}
