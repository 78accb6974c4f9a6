"""Gradcheck samples for ops/joins.py."""

import numpy as np

r = np.random.default_rng(15)


def t(*shape):
    return r.standard_normal(shape)


SAMPLES = {
    "aten::cat": [[[t(2, 3), t(1, 3)], 0], [[t(2, 1), np.zeros((0,)), t(2, 2)], -1]],
    "aten::concat": [[[t(2), t(3)], 0]],
    "aten::concatenate": [[[t(2, 2), t(2, 1)], 1]],
    "aten::stack": [[[t(2, 3), t(2, 3)], 1]],
    "aten::hstack": [[[t(2), t(3)]], [[t(2, 1), t(2, 2)]]],
    "aten::vstack": [[[t(3), t(2, 3)]]],
    "aten::split.Tensor": [[t(5, 2), 2, 0]],
    "aten::unsafe_split.Tensor": [[t(2, 5), 3, 1]],
    "aten::split.sizes": [[t(5, 2), [1, 4], 0]],
    "aten::split": [[t(2, 5), [2, 3], -1]],
    "aten::split_with_sizes": [[t(4, 2), [3, 1], 0]],
    "aten::chunk": [[t(5, 2), 3, 0]],
    "aten::unsafe_chunk": [[t(2, 4), 2, 1]],
    "aten::tensor_split.sections": [[t(5), 3, 0]],
    "aten::tensor_split.indices": [[t(2, 5), [1, 3], 1]],
    "aten::unbind.int": [[t(3, 2), 0], [t(2, 3), -1]],
    "aten::meshgrid": [[[t(2), t(3)]]],
    "aten::meshgrid.indexing": [[[t(2), t(3), t(4)], "xy"]],
}
