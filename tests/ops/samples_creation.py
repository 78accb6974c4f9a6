"""Gradcheck samples for the differentiable ops of ops/conversion.py (creation ops are not
differentiable); float64 -> float64, so the differences are exact."""

import numpy as np

r = np.random.default_rng(16)


def t(*shape):
    return r.standard_normal(shape)


SAMPLES = {
    "aten::to.dtype": [[t(2, 3), 7, False, True, None]],
    "aten::to.device": [[t(2, 3), "cpu", 7, False, False, None]],
    "aten::to.other": [[t(3), np.zeros(1, np.float64), False, True, None]],
    "aten::to.dtype_layout": [[t(3), 7, None, None, None, False, True, None]],
    "aten::to.prim_Device": [[t(3), "cpu", 7, False, True]],
    "aten::to.prim_dtype": [[t(3), 7, False, True]],
    "aten::to.prim_other": [[t(3), False, True]],
    "aten::type_as": [[t(3), np.zeros(1, np.float64)]],
    "aten::_to_copy": [[t(2, 3), None, None, None, None, False, None]],
}
