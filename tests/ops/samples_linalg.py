"""Gradcheck samples for ops/linalg*.py."""

import numpy as np

r = np.random.default_rng(13)


def t(*shape):
    return r.standard_normal(shape)


SAMPLES = {
    "aten::mm": [[t(2, 3), t(3, 4)]],
    "aten::bmm": [[t(2, 2, 3), t(2, 3, 2)]],
    "aten::mv": [[t(2, 3), t(3)]],
    "aten::dot": [[t(3), t(3)]],
    "aten::outer": [[t(2), t(3)]],
    "aten::ger": [[t(3), t(2)]],
    "aten::matmul": [[t(3), t(3)], [t(2, 3), t(3)], [t(3), t(3, 2)], [t(2, 3), t(3, 2)],
                     [t(2, 2, 3), t(3)], [t(3), t(2, 3, 2)], [t(2, 1, 2, 3), t(3, 3, 2)]],
    "aten::addmm": [[t(3), t(2, 4), t(4, 3), 0.5, 2.0], [t(2, 3), t(2, 4), t(4, 3), 1, 1]],
    "aten::addmv": [[t(2), t(2, 3), t(3), 2, 0.5]],
    "aten::baddbmm": [[t(1, 2, 2), t(3, 2, 4), t(3, 4, 2), 1, -1]],
    "aten::addbmm": [[t(2, 2), t(3, 2, 4), t(3, 4, 2), 0.5, 1]],
    "aten::einsum": [["ij,jk->ik", [t(2, 3), t(3, 2)], None], ["bij,bjk", [t(2, 2, 3), t(2, 3, 2)], None],
                     ["...i,i->...", [t(2, 3), t(3)], None], ["ij->j", [t(2, 3)], None],
                     ["i,j->ij", [t(2), t(3)], None]],
    "aten::tensordot": [[t(2, 3, 4), t(4, 3, 2), [1, 2], [1, 0]]],
}
