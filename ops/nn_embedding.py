"""Embedding lookups (`embedding`, `embedding_bag` in sum/mean/max mode) and their dense
backward ops. `sparse=True` still yields a dense weight gradient."""

from __future__ import annotations

import numpy as np

from .registry import derivative, op


def _check_indices(indices, n):
    if indices.dtype.kind not in "iu":
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar "
                           f"types: Long, Int; but got {indices.dtype} instead")
    if indices.size and (indices.min() < 0 or indices.max() >= n):
        raise IndexError("index out of range in self")


@op("aten::embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, bool sparse=False) -> Tensor")
def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    _check_indices(indices, weight.shape[0])
    return np.asarray(weight[indices], order="C")


@op("aten::embedding_dense_backward(Tensor grad_output, Tensor indices, SymInt num_weights, SymInt padding_idx, bool scale_grad_by_freq) -> Tensor")
def embedding_dense_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq):
    idx = indices.reshape(-1).astype(np.int64)
    g = grad_output.reshape(idx.size, -1)
    if scale_grad_by_freq:
        counts = np.bincount(idx, minlength=num_weights)
        g = g / counts[idx][:, None]
    if padding_idx >= 0:
        g = g * (idx != padding_idx)[:, None]
    out = np.zeros((num_weights, g.shape[1]), dtype=grad_output.dtype)
    np.add.at(out, idx, g.astype(grad_output.dtype))
    return out


@op("aten::embedding_backward(Tensor grad, Tensor indices, SymInt num_weights, SymInt padding_idx, bool scale_grad_by_freq, bool sparse) -> Tensor")
def embedding_backward(grad, indices, num_weights, padding_idx, scale_grad_by_freq, sparse):
    """What symbolic_script's embedding backward calls: the dense backward (irjit has no
    sparse tensors, so `sparse=True` yields the dense gradient too)."""
    return embedding_dense_backward(grad, indices, num_weights, padding_idx, scale_grad_by_freq)


@derivative("aten::embedding")
def embedding_grad(e, grads, inputs, outputs):
    weight, indices, padding_idx, scale_grad_by_freq = inputs[:4]
    if e.symbolic:
        # symbolic_script: weight.size()[0] taken in the forward, embedding_backward in df
        w = e.node.inputs[0]
        with e.forward(before_result=True):
            rows = e.op("aten::__getitem__", e.op("aten::size", w), 0)
        return [e.op("aten::embedding_backward", grads[0], indices, rows, *e.node.inputs[2:5]),
                None, None, None, None]
    gw = e.op("aten::embedding_dense_backward", grads[0], indices, e.size(weight)[0], padding_idx,
              scale_grad_by_freq)
    return [gw, None, None, None, None]


# ---- embedding_bag

_MODES = ("sum", "mean", "max")


def _bags(indices, offsets, include_last_offset):
    """(looked-up indices, offset2bag, number of bags, their positions in `indices`) for 1-D
    indices + offsets or 2-D indices."""
    if indices.ndim == 2:
        b, l = indices.shape
        return indices.reshape(-1), np.repeat(np.arange(b), l), b, np.arange(b * l)
    offs = offsets.astype(np.int64)
    nb = offs.size - 1 if include_last_offset else offs.size
    ends = np.append(offs[1:], indices.size) if not include_last_offset else offs[1:]
    starts = offs[:nb]
    ends = ends[:nb]
    o2b = np.repeat(np.arange(nb), ends - starts)
    sel = np.concatenate([np.arange(s, t) for s, t in zip(starts, ends)]) if nb else np.zeros(0, np.int64)
    return indices[sel], o2b, nb, sel


def embedding_bag_impl(weight, indices, offsets, mode, per_sample_weights, include_last_offset, padding_idx):
    _check_indices(indices, weight.shape[0])
    flat, o2b, nb, sel = _bags(indices, offsets, include_last_offset)
    keep = flat != padding_idx if padding_idx is not None and padding_idx >= 0 else np.ones(flat.size, bool)
    rows = weight[flat]
    if per_sample_weights is not None:
        if mode != 0:
            raise NotImplementedError("embedding_bag: per_sample_weights was not None. per_sample_weights is "
                                      "only supported for mode='sum'")
        rows = rows * per_sample_weights.reshape(-1)[sel][:, None]
    d = weight.shape[1]
    bag_size = np.bincount(o2b[keep], minlength=nb).astype(np.int64)
    max_idx = np.zeros((nb, d), np.int64) if mode == 2 else np.zeros(0, np.int64)
    if mode == 2:
        ob, rk, fk = o2b[keep], rows[keep], flat[keep]
        out = np.full((nb, d), -np.inf, weight.dtype)
        np.maximum.at(out, ob, rk)
        # the first lookup of each bag reaching the maximum, per feature
        pos = np.where(rk == out[ob], np.arange(rk.shape[0])[:, None], rk.shape[0])
        first = np.full((nb, d), rk.shape[0])
        np.minimum.at(first, ob, pos)
        empty = bag_size == 0
        max_idx = np.where(empty[:, None], 0, np.append(fk, 0)[first])
        out[empty] = 0
    else:
        out = np.zeros((nb, d), weight.dtype)
        np.add.at(out, o2b[keep], rows[keep])
        if mode == 1:
            out = out / np.maximum(bag_size, 1)[:, None]
    return (np.asarray(out, dtype=weight.dtype, order="C"), o2b.astype(np.int64), bag_size, max_idx)


@op("aten::embedding_bag(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq=False, int mode=0, bool sparse=False, Tensor? per_sample_weights=None, bool include_last_offset=False) -> (Tensor, Tensor, Tensor, Tensor)",
    "aten::embedding_bag.padding_idx(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq, int mode, bool sparse, Tensor? per_sample_weights, bool include_last_offset, int? padding_idx) -> (Tensor, Tensor, Tensor, Tensor)",
    "aten::_embedding_bag(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq=False, int mode=0, bool sparse=False, Tensor? per_sample_weights=None, bool include_last_offset=False, int padding_idx=-1) -> (Tensor, Tensor, Tensor, Tensor)")
def embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                  per_sample_weights=None, include_last_offset=False, padding_idx=-1):
    return embedding_bag_impl(weight, indices, offsets, mode, per_sample_weights, include_last_offset,
                              padding_idx)


@op("aten::_embedding_bag_dense_backward(Tensor grad, Tensor indices, Tensor offset2bag, Tensor bag_size, Tensor maximum_indices, SymInt num_weights, bool scale_grad_by_freq, int mode, Tensor? per_sample_weights, int padding_idx=-1) -> Tensor")
def embedding_bag_dense_backward(grad, indices, offset2bag, bag_size, maximum_indices, num_weights,
                                 scale_grad_by_freq, mode, per_sample_weights, padding_idx=-1):
    out = np.zeros((num_weights, grad.shape[1]), grad.dtype)
    if mode == 2:
        mask = np.broadcast_to((bag_size > 0)[:, None], maximum_indices.shape)
        np.add.at(out, (maximum_indices[mask], np.nonzero(mask)[1]), grad[mask])
        return out
    flat = indices.reshape(-1)[:offset2bag.size]  # offsets start at 0: bags cover a prefix
    rows = grad[offset2bag]
    if mode == 1:
        rows = rows / np.maximum(bag_size[offset2bag], 1)[:, None]
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.reshape(-1)[:flat.size, None]
    if scale_grad_by_freq:
        rows = rows / np.bincount(flat, minlength=num_weights)[flat][:, None]
    keep = flat != padding_idx if padding_idx is not None and padding_idx >= 0 else np.ones(flat.size, bool)
    np.add.at(out, flat[keep], rows[keep].astype(grad.dtype))
    return out


@derivative("aten::embedding_bag", "aten::embedding_bag.padding_idx", "aten::_embedding_bag")
def embedding_bag_grad(e, grads, inputs, outputs):
    weight, indices, offsets, scale_grad_by_freq, mode = inputs[:5]
    psw = inputs[6]
    include_last = inputs[7]
    padding_idx = inputs[8] if len(inputs) > 8 and inputs[8] is not None else -1
    if grads[0] is None:
        return [None] * len(inputs)
    gw = e.op("aten::_embedding_bag_dense_backward", grads[0], indices, outputs[1], outputs[2], outputs[3],
              e.size(weight)[0], scale_grad_by_freq, mode, psw, padding_idx)
    g_psw = None
    if e.is_tensor(psw):
        g_psw = e.op("aten::_embedding_bag_per_sample_weights_backward", grads[0], weight, indices, offsets,
                     outputs[1], mode, padding_idx)
    return [gw, None, None, None, None, None, g_psw, None, None][:len(inputs)]


@op("aten::_embedding_bag_per_sample_weights_backward(Tensor grad, Tensor weight, Tensor indices, Tensor offsets, Tensor offset2bag, int mode, int padding_idx=-1) -> Tensor")
def embedding_bag_per_sample_weights_backward(grad, weight, indices, offsets, offset2bag, mode, padding_idx=-1):
    flat = indices.reshape(-1)[:offset2bag.size]
    out = np.zeros(indices.size, grad.dtype)
    out[:flat.size] = (grad[offset2bag] * weight[flat]).sum(axis=1)
    if padding_idx is not None and padding_idx >= 0:
        out[:flat.size] *= flat != padding_idx
    return out
