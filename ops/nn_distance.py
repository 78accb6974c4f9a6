"""Cosine similarity and pairwise (p-norm) distance between broadcast tensors."""

from __future__ import annotations

import numpy as np

from ._common import float_result_type, normalize_dim
from .registry import derivative, op


@op("aten::cosine_similarity(Tensor x1, Tensor x2, int dim=1, float eps=1e-08) -> Tensor")
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """sum(x1/max(|x1|, eps) * x2/max(|x2|, eps)) along `dim`, as PyTorch 2.x computes it."""
    dt = float_result_type(x1, x2)
    a, b = np.broadcast_arrays(np.asarray(x1, dt), np.asarray(x2, dt))
    d = normalize_dim(dim, a.ndim)
    n1 = np.maximum(np.sqrt((a * a).sum(axis=d, keepdims=True)), eps)
    n2 = np.maximum(np.sqrt((b * b).sum(axis=d, keepdims=True)), eps)
    return np.asarray(((a / n1) * (b / n2)).sum(axis=d), dtype=dt, order="C")


@derivative("aten::cosine_similarity")
def cosine_similarity_grad(e, grads, inputs, outputs):
    x1_, x2_, dim, eps = inputs
    shape = list(np.broadcast_shapes(tuple(e.shape(x1_)), tuple(e.shape(x2_))))
    x1 = e.op("aten::expand", x1_, shape) if list(e.shape(x1_)) != shape else x1_
    x2 = e.op("aten::expand", x2_, shape) if list(e.shape(x2_)) != shape else x2_
    d = normalize_dim(dim, len(shape))
    g = e.op("aten::unsqueeze", grads[0], d)
    cos = e.op("aten::unsqueeze", outputs[0], d)

    def norm(x):
        return e.op("aten::clamp_min", e.op("aten::linalg_vector_norm", x, 2, [d], True), eps)
    n1, n2 = norm(x1), norm(x2)
    n12 = e.op("aten::mul", n1, n2)
    # d cos / d x1 = x2 / (n1 n2) - cos x1 / n1^2 (and symmetrically)
    g1 = e.op("aten::sub", e.op("aten::div", x2, n12), e.op("aten::div", e.op("aten::mul", cos, x1),
                                                          e.op("aten::mul", n1, n1)))
    g2 = e.op("aten::sub", e.op("aten::div", x1, n12), e.op("aten::div", e.op("aten::mul", cos, x2),
                                                          e.op("aten::mul", n2, n2)))
    return [e.sum_to(e.op("aten::mul", g1, g), x1_), e.sum_to(e.op("aten::mul", g2, g), x2_), None, None]


@op("aten::pairwise_distance(Tensor x1, Tensor x2, float p=2., float eps=9.9999999999999995e-07, bool keepdim=False) -> Tensor")
def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    dt = float_result_type(x1, x2)
    diff = np.asarray(x1, dt) - np.asarray(x2, dt) + eps
    ax = max(diff.ndim - 1, 0)
    a = np.abs(diff)
    if diff.ndim == 0:
        a = a.reshape(1)
    if p == 0:
        r = (a != 0).sum(axis=ax, keepdims=keepdim)
    elif np.isinf(p):
        r = a.max(axis=ax, keepdims=keepdim) if p > 0 else a.min(axis=ax, keepdims=keepdim)
    else:
        r = (a ** p).sum(axis=ax, keepdims=keepdim) ** (1.0 / p)
    return np.asarray(r, dtype=dt, order="C")


@derivative("aten::pairwise_distance")
def pairwise_distance_grad(e, grads, inputs, outputs):
    x1, x2, p, eps, keepdim = inputs
    diff = e.op("aten::sub", x1, x2)
    ax = max(len(e.shape(diff)) - 1, 0)
    dist = outputs[0] if keepdim else e.op("aten::unsqueeze", outputs[0], ax)
    g = grads[0] if keepdim else e.op("aten::unsqueeze", grads[0], ax)
    d = e.op("aten::add", diff, eps)
    if p == 2:
        gd = e.op("aten::div", d, dist)
    elif p == 1:
        gd = e.op("aten::sign", d)
    else:  # sign(d) |d|^(p-1) / dist^(p-1)
        gd = e.op("aten::mul", e.op("aten::sign", d),
                  e.op("aten::pow", e.op("aten::div", e.op("aten::abs", d), dist), p - 1))
    gd = e.op("aten::mul", gd, g)
    return [e.sum_to(gd, x1), e.sum_to(e.op("aten::neg", gd), x2), None, None, None]
