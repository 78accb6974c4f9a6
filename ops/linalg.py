"""Linear algebra: mm/bmm/mv/dot/outer, matmul over every rank combination (with batch
broadcasting), the fused add-multiply ops (addmm, addmv, addbmm, baddbmm), einsum and
tensordot. Like PyTorch, the matrix products require both operands to have the same dtype.
"""

from __future__ import annotations

import numpy as np

from ._common import promoted
from .dtypes import c_type_name, scalar_type_name
from .registry import derivative, op
from .views import broadcast_shapes, expand


def _same_dtype(a, b, what="expected m1 and m2 to have the same dtype, but got: {} != {}"):
    if a.dtype != b.dtype:
        raise RuntimeError(what.format(c_type_name(a.dtype), c_type_name(b.dtype)))


def _shape_str(shape) -> str:
    return "x".join(str(s) for s in shape)


def _mm_check(a, b, as_mm=True):
    if a.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if b.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({_shape_str(a.shape)} and "
                           f"{_shape_str(b.shape)})")
    _same_dtype(a, b)


def _matmul_raw(a, b):
    with np.errstate(all="ignore"):
        return np.asarray(fold_matmul(a, b))


def fold_matmul(a, b):
    """`np.matmul(a, b)`, with a stack of matrices times one matrix as a single GEMM over the
    stacked rows (numpy multiplies the stack matrix by matrix, up to ~100x slower)."""
    if a.ndim > 2 and b.ndim == 2:
        return np.matmul(a.reshape(-1, a.shape[-1]), b).reshape(*a.shape[:-1], b.shape[-1])
    return np.matmul(a, b)


@op("aten::mm(Tensor self, Tensor mat2) -> Tensor")
def mm(self, mat2):
    _mm_check(self, mat2)
    return _matmul_raw(self, mat2)


def _dot_check(a, b):
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    if a.shape[0] != b.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src [{b.shape[0]}] to "
                           f"have the same number of elements, but got {a.shape[0]} and {b.shape[0]} elements "
                           "respectively")
    if a.dtype != b.dtype:
        raise RuntimeError("dot : expected both vectors to have same dtype, but found "
                           f"{scalar_type_name(a.dtype)} and {scalar_type_name(b.dtype)}")


@op("aten::dot(Tensor self, Tensor tensor) -> Tensor")
def dot(self, tensor):
    _dot_check(self, tensor)
    return _matmul_raw(self, tensor)


def _mv_check(m, v, input_shape=None):
    if m.ndim != 2 or v.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {1 if input_shape is None else len(input_shape)}, "
                           f"{m.ndim}, {v.ndim}")
    if m.shape[1] != v.shape[0]:
        inp = f"({m.shape[0]})" if input_shape is None else f"({_shape_str(input_shape)})"
        raise RuntimeError(f"size mismatch, got input {inp}, mat ({_shape_str(m.shape)}), vec ({v.shape[0]})")
    _same_dtype(m, v)


@op("aten::mv(Tensor self, Tensor vec) -> Tensor")
def mv(self, vec):
    _mv_check(self, vec)
    return _matmul_raw(self, vec)


@op("aten::outer(Tensor self, Tensor vec2) -> Tensor",
    "aten::ger(Tensor self, Tensor vec2) -> Tensor")
def outer(self, vec2):
    if self.ndim != 1 or vec2.ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument self, but got {self.ndim}-D")
    dt, (a, b) = promoted(self, vec2)
    return np.multiply.outer(a, b)


def _bmm_check(a, b, name1="batch1", name2="batch2"):
    if a.ndim != 3:
        raise RuntimeError(f"{name1} must be a 3D tensor")
    if b.ndim != 3:
        raise RuntimeError(f"{name2} must be a 3D tensor")
    if b.shape[:2] != (a.shape[0], a.shape[2]):
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{a.shape[0]}, {a.shape[2]}] but got: [{b.shape[0]}, {b.shape[1]}].")
    _same_dtype(a, b)


@op("aten::bmm(Tensor self, Tensor mat2) -> Tensor")
def bmm(self, mat2):
    _bmm_check(self, mat2)
    return _matmul_raw(self, mat2)


@op("aten::matmul(Tensor self, Tensor other) -> Tensor")
def matmul(self, other):
    a, b = self, other
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {a.ndim}D and {b.ndim}D")
    if a.ndim == 1 and b.ndim == 1:
        return dot(a, b)
    if a.ndim == 2 and b.ndim == 1:
        return mv(a, b)
    if a.ndim == 1 and b.ndim == 2:
        return mm(a[None, :], b)[0]
    if a.ndim == 2 and b.ndim == 2:
        return mm(a, b)
    _same_dtype(a, b)
    a2 = a[None, :] if a.ndim == 1 else a
    b2 = b[:, None] if b.ndim == 1 else b
    batch = broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    if a2.shape[-1] != b2.shape[-2]:
        n = int(np.prod(batch))
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{n}, "
                           f"{a2.shape[-1]}] but got: [{n}, {b2.shape[-2]}].")
    return _matmul_raw(a, b)


# ---- fused forms

def _scaled_sum(self, prod, beta, alpha):
    """beta * self + alpha * prod; beta == 0 ignores self (NaNs included) as PyTorch does."""
    s = expand(self, prod.shape)  # self must broadcast to the product's shape
    out = prod if alpha == 1 else prod * alpha
    if beta != 0:
        out = out + (s if beta == 1 else s * beta)
    return np.asarray(out, dtype=prod.dtype)


@op("aten::addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor")
def addmm(self, mat1, mat2, beta=1, alpha=1):
    _mm_check(mat1, mat2)
    _same_dtype(self, mat1, "self and mat2 must have the same dtype, but got {} and {}")
    p = _matmul_raw(mat1, mat2)
    return _scaled_sum(self, p, beta, alpha)


@op("aten::addmv(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1) -> Tensor")
def addmv(self, mat, vec, beta=1, alpha=1):
    _mv_check(mat, vec, self.shape)
    p = _matmul_raw(mat, vec)
    return _scaled_sum(self, p, beta, alpha)


@op("aten::baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor")
def baddbmm(self, batch1, batch2, beta=1, alpha=1):
    _bmm_check(batch1, batch2)
    p = _matmul_raw(batch1, batch2)
    return _scaled_sum(self, p, beta, alpha)


@op("aten::addbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor")
def addbmm(self, batch1, batch2, beta=1, alpha=1):
    _bmm_check(batch1, batch2)
    p = np.asarray(_matmul_raw(batch1, batch2).sum(axis=0))
    return _scaled_sum(self, p, beta, alpha)


# ---- derivatives

def _scale(e, x, s):
    return x if s == 1 else e.op("aten::mul", x, s)


def _mT(e, x):
    return e.op("aten::transpose", x, -1, -2)


def _mm_grad(helper: str):
    def formula(e, grads, inputs, outputs):
        g = grads[0]
        a, b = inputs[0], inputs[1]
        if e.symbolic:  # symbolic_script: AD_mm_backward_self(grad, mat2), AD_mm_backward_mat2(grad, self)
            return [e.call(f"AD_{helper}_backward_self", g, b), e.call(f"AD_{helper}_backward_mat2", g, a)]
        return [e.op("aten::matmul", g, _mT(e, b)), e.op("aten::matmul", _mT(e, a), g)]
    formula.__name__ = f"{helper}_grad"
    return formula


derivative("aten::mm")(_mm_grad("mm"))
derivative("aten::bmm")(_mm_grad("bmm"))


@derivative("aten::mv")
def mv_grad(e, grads, inputs, outputs):
    g = grads[0]
    m, v = inputs
    return [e.op("aten::outer", g, v), e.op("aten::mv", e.op("aten::t", m), g)]


@derivative("aten::dot")
def dot_grad(e, grads, inputs, outputs):
    g = grads[0]
    return [e.op("aten::mul", g, inputs[1]), e.op("aten::mul", g, inputs[0])]


@derivative("aten::outer", "aten::ger")
def outer_grad(e, grads, inputs, outputs):
    g = grads[0]
    return [e.op("aten::mv", g, inputs[1]), e.op("aten::mv", e.op("aten::t", g), inputs[0])]


def matmul_backward(e, g, a, b):
    """Gradients of matmul(a, b) for every rank combination (batch dims summed back)."""
    if e.symbolic:
        return _matmul_backward_at_run_time(e, g, a, b)
    na, nb = len(e.shape(a)), len(e.shape(b))
    if na == 1 and nb == 1:
        return e.op("aten::mul", g, b), e.op("aten::mul", g, a)
    if nb == 1:
        ga = e.op("aten::mul", e.op("aten::unsqueeze", g, -1), b)
        gb = e.op("aten::matmul", _mT(e, a), e.op("aten::unsqueeze", g, -1))
        gb = e.op("aten::squeeze", gb, -1)
        return e.sum_to(ga, e.size(a)), e.sum_to(gb, e.size(b))
    if na == 1:
        ga = e.op("aten::matmul", e.op("aten::unsqueeze", g, -2), _mT(e, b))
        ga = e.op("aten::squeeze", ga, -2)
        gb = e.op("aten::mul", e.op("aten::unsqueeze", a, -1), e.op("aten::unsqueeze", g, -2))
        return e.sum_to(ga, e.size(a)), e.sum_to(gb, e.size(b))
    ga = e.op("aten::matmul", g, _mT(e, b))
    gb = e.op("aten::matmul", _mT(e, a), g)
    return e.sum_to(ga, e.size(a)), e.sum_to(gb, e.size(b))


def _matmul_backward_at_run_time(e, g, a, b):
    """symbolic_script's matmul backward: the TorchScript helpers `AD_mat_transpose` and
    `AD_matmul_bw_size` pick the product for the ranks the tensors have when the backward
    runs (native code inlines them, and the plan's ranks fold their branches)."""
    a_size, b_size = e.op("aten::size", a), e.op("aten::size", b)
    ga = e.op("aten::_grad_sum_to_size",
              e.call("AD_matmul_bw_size", g, e.call("AD_mat_transpose", b), a_size), a_size)
    gb = e.op("aten::_grad_sum_to_size",
              e.call("AD_matmul_bw_size", e.call("AD_mat_transpose", a), g, b_size), b_size)
    return ga, gb


@derivative("aten::matmul")
def matmul_grad(e, grads, inputs, outputs):
    return list(matmul_backward(e, grads[0], inputs[0], inputs[1]))


@derivative("aten::addmm", "aten::addmv", "aten::baddbmm")
def addmm_grad(e, grads, inputs, outputs):
    g = grads[0]
    self, m1, m2, beta, alpha = inputs
    if e.symbolic and e.node.kind == "aten::addmm":
        # symbolic_script: (g * beta)._grad_sum_to_size(self_size), g.mm(mat2.t()) * alpha,
        # mat1.t().mm(g) * alpha
        g_self = e.sum_to(e.op("aten::mul", g, beta), self)
        g1 = e.op("aten::mul", e.op("aten::mm", g, e.op("aten::t", m2)), alpha)
        g2 = e.op("aten::mul", e.op("aten::mm", e.op("aten::t", m1), g), alpha)
        return [g_self, g1, g2, None, None]
    g_self = e.sum_to(_scale(e, g, beta), e.size(self)) if beta != 0 else e.zeros_like(self)
    ga, gb = matmul_backward(e, g, m1, m2)
    return [g_self, _scale(e, ga, alpha), _scale(e, gb, alpha), None, None]


@derivative("aten::addbmm")
def addbmm_grad(e, grads, inputs, outputs):
    g = grads[0]
    self, b1, b2, beta, alpha = inputs
    g_self = e.sum_to(_scale(e, g, beta), e.size(self)) if beta != 0 else e.zeros_like(self)
    nb = e.shape(b1)[0]
    gexp = e.op("aten::expand", e.op("aten::unsqueeze", g, 0), [nb] + e.size(g))
    ga = e.op("aten::bmm", gexp, _mT(e, b2))
    gb = e.op("aten::bmm", _mT(e, b1), gexp)
    return [g_self, _scale(e, ga, alpha), _scale(e, gb, alpha), None, None]
