"""Gradcheck samples for ops/views.py."""

import numpy as np

r = np.random.default_rng(11)


def t(*shape):
    return r.standard_normal(shape)


SAMPLES = {
    "aten::view": [[t(2, 3), [3, 2]], [t(2, 3), [-1]]],
    "aten::view_as": [[t(2, 3), np.zeros((6,), np.int64)]],
    "aten::reshape": [[t(2, 3).T, [6]]],
    "aten::reshape_as": [[t(2, 3), np.zeros((3, 2), np.int64)]],
    "aten::_unsafe_view": [[t(2, 3), [3, 2]]],
    "aten::flatten.using_ints": [[t(2, 3, 2), 1, -1], [t(2, 3), 0, -1]],
    "aten::unflatten.int": [[t(2, 6), 1, [3, -1]]],
    "aten::squeeze": [[t(2, 1, 3, 1)]],
    "aten::squeeze.dim": [[t(2, 1, 3), -2]],
    "aten::squeeze.dims": [[t(1, 2, 1), [0, 2]]],
    "aten::unsqueeze": [[t(2, 3), -1]],
    "aten::expand": [[t(3, 1), [2, 3, 4]], [t(3), [-1]]],
    "aten::expand_as": [[t(1, 3), np.zeros((2, 3), np.int64)]],
    "aten::broadcast_tensors": [[[t(3, 1), t(4)]]],
    "aten::sum_to_size": [[t(2, 3, 4), [3, 1]]],
    "aten::_grad_sum_to_size": [[t(2, 3), [1, 3]], [t(2, 3), None]],
    "aten::transpose.int": [[t(2, 3, 4), 0, -1]],
    "aten::t": [[t(2, 3)], [t(3)]],
    "aten::numpy_T": [[t(2, 3, 4)]],
    "aten::mT": [[t(2, 3, 4)]],
    "aten::permute": [[t(2, 3, 4), [2, 0, 1]]],
    "aten::movedim.int": [[t(2, 3, 4), 0, 2]],
    "aten::movedim.intlist": [[t(2, 3, 4), [0, 1], [2, 0]]],
    "aten::select.int": [[t(3, 4), 1, -1]],
    "aten::narrow": [[t(3, 5), 1, -4, 2]],
    "aten::slice.Tensor": [[t(5, 3), 0, 1, None, 2], [t(3, 6), 1, None, -2, 1]],
    "aten::diagonal": [[t(3, 4), 1, 0, 1], [t(2, 3, 3), -1, 1, 2]],
    "aten::contiguous": [[t(3, 2).T, 0]],
    "aten::clone": [[t(2, 3), None]],
    "aten::repeat": [[t(2, 3), [2, 1, 2]]],
    "aten::tile": [[t(2, 3), [2]]],
    "aten::flip": [[t(2, 3), [0, -1]]],
    "aten::roll": [[t(2, 3), [1], [1]], [t(2, 3), [2], []]],
    "aten::tril": [[t(3, 4), 0], [t(2, 3, 3), -1]],
    "aten::triu": [[t(3, 4), 1]],
}
