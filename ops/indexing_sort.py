"""Sorting and selection: sort, argsort, topk (stable orders; NaN sorts as the largest value,
as in PyTorch). Gradients scatter back through the indices."""

from __future__ import annotations

import numpy as np

from ._common import normalize_dim
from .registry import derivative, op


def stable_argsort(a: np.ndarray, d: int, descending: bool) -> np.ndarray:
    """Stable argsort along d; descending keeps equal elements in their original order."""
    if a.ndim == 0:
        return np.zeros((), np.int64)
    if not descending:
        return np.argsort(a, axis=d, kind="stable").astype(np.int64)
    idx = np.flip(np.argsort(np.flip(a, d), axis=d, kind="stable"), d)
    return (a.shape[d] - 1 - idx).astype(np.int64)


def _sort(self, dim, descending):
    d = normalize_dim(dim, self.ndim)
    idx = stable_argsort(self, d, descending)
    if self.ndim == 0:
        return self.copy(), idx
    return np.take_along_axis(self, idx, d), idx


@op("aten::sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)")
def sort(self, dim=-1, descending=False):
    return _sort(self, dim, descending)


@op("aten::sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)")
def sort_stable(self, stable, dim=-1, descending=False):
    return _sort(self, dim, descending)


@op("aten::argsort(Tensor self, int dim=-1, bool descending=False) -> Tensor")
def argsort(self, dim=-1, descending=False):
    return stable_argsort(self, normalize_dim(dim, self.ndim), descending)


@op("aten::argsort.stable(Tensor self, *, bool stable, int dim=-1, bool descending=False) -> Tensor")
def argsort_stable(self, stable, dim=-1, descending=False):
    return stable_argsort(self, normalize_dim(dim, self.ndim), descending)


@op("aten::topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor values, Tensor indices)")
def topk(self, k, dim=-1, largest=True, sorted=True):
    d = normalize_dim(dim, self.ndim)
    n = self.shape[d] if self.ndim else 1
    if k < 0 or k > n:
        raise RuntimeError("selected index k out of range")
    if self.ndim == 0:
        return self.copy(), np.zeros((), np.int64)
    idx = np.take(stable_argsort(self, d, largest), np.arange(k), axis=d)
    return np.take_along_axis(self, idx, d), idx


def _selected_grad(e, g, self, dim, indices):
    if g is None:
        return None
    if not e.shape(self):
        return g
    return e.op("aten::value_selecting_reduction_backward", g, dim, indices, e.size(self), True)


@derivative("aten::sort")
def sort_grad(e, grads, inputs, outputs):
    self, dim, _ = inputs
    return [_selected_grad(e, grads[0], self, dim, outputs[1]), None, None]


@derivative("aten::sort.stable")
def sort_stable_grad(e, grads, inputs, outputs):
    self, _, dim, _ = inputs
    return [_selected_grad(e, grads[0], self, dim, outputs[1]), None, None, None]


@derivative("aten::topk")
def topk_grad(e, grads, inputs, outputs):
    self, k, dim = inputs[0], inputs[1], inputs[2]
    return [_selected_grad(e, grads[0], self, dim, outputs[1]), None, None, None, None]
