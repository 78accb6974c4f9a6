"""Gradcheck samples for ops/arith.py: full overload name -> argument lists."""

import numpy as np

r = np.random.default_rng(1)


def t(*shape):
    return r.standard_normal(shape)


SAMPLES = {
    "aten::add.Tensor": [[t(3, 4), t(4), 1], [t(2, 1), t(1, 3), 2.5]],
    "aten::add.Scalar": [[t(3), 2.0, 1]],
    "aten::sub.Tensor": [[t(3, 4), t(3, 4), 1], [t(1), t(2, 3), -2]],
    "aten::sub.Scalar": [[t(3), 2.0, 1]],
    "aten::rsub.Tensor": [[t(3, 4), t(4), 1]],
    "aten::rsub.Scalar": [[t(3), 2.0, 1]],
    "aten::mul.Tensor": [[t(3, 4), t(3, 1)]],
    "aten::mul.Scalar": [[t(3), 3.0]],
    "aten::div.Tensor": [[t(3, 4), t(4) + 3.0]],
    "aten::div.Scalar": [[t(3), 3.0]],
    "aten::neg": [[t(2, 3)]],
}
