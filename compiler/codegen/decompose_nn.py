"""Decompositions of normalization, conv variants and (values, indices) reductions into ops that
have native lowering rules: batch norm (eval with running statistics, and training with its
saved statistics and running-statistic updates) and its backward, layer norm and its backward,
group norm through a grouped view, and max/min over a dim as amax/amin plus argmax/argmin.

Each `decompose_<op>(node) -> bool` rewrites one fully typed node in place, or returns False
(leaving it interpreted) when an argument is not a constant it needs or a layout is unknown."""

from __future__ import annotations

import math

import numpy as np

from irjit.compiler.ir import Node
from irjit.ops.types import SCALAR_TYPES, TensorType

from .decompose_rules import NodeBuilder, constant_of, decomposes, is_none, sizes_of


def _float_tensor(v) -> bool:
    return isinstance(v.type, TensorType) and sizes_of(v) is not None and \
        v.type.scalar_type in ("Float", "Double")


def _optional_tensors(vs, like=None) -> bool:
    """Each of `vs` is None or a float tensor of a known layout (of `like`'s dtype, if given:
    the decompositions compute in the input's dtype, as the interpreter's results are)."""
    return all(is_none(v) or (_float_tensor(v) and (
        like is None or v.type.scalar_type == like.type.scalar_type)) for v in vs)


def _outputs_unused(node: Node, keep) -> bool:
    return all(not o.uses for k, o in enumerate(node.outputs) if k not in keep)


def _finish(node: Node, b: NodeBuilder, results: dict) -> bool:
    for k, new in results.items():
        b.replace(node.outputs[k], new)
    node.destroy()
    return True


# ---- batch norm

def _channel(b: NodeBuilder, v, rank: int):
    """A (C,) vector as (C, 1, ...), broadcastable against (N, C, *)."""
    c = sizes_of(v)[0]
    return v if rank == 2 else b.op("aten::reshape", [v, [c] + [1] * (rank - 2)], [c] + [1] * (rank - 2))


def _batch_norm(node: Node, with_stats: bool, impl_index: bool = False) -> bool:
    """`impl_index`: `_batch_norm_impl_index`, whose statistics may be read in eval mode too
    (symbolic_script's f returns them for df): there they are empty, as the op returns them,
    and so is its reserve; its implementation index is 0."""
    x, w, bias, rm, rv, training, momentum, eps = node.inputs[:8]
    try:
        training, momentum, eps = constant_of(training), constant_of(momentum), constant_of(eps)
    except LookupError:
        return False
    sizes = sizes_of(x)
    if not _float_tensor(x) or not _optional_tensors([w, bias, rm, rv], x) or len(sizes) < 2 or \
            not isinstance(training, bool) or not isinstance(eps, (int, float)) or 0 in sizes:
        return False
    if not training and (is_none(rm) or is_none(rv) or (
            with_stats and not impl_index and not _outputs_unused(node, [0]))):
        return False
    if training and not (isinstance(momentum, (int, float)) or (is_none(rm) and is_none(rv))):
        return False
    rank, c = len(sizes), sizes[1]
    b = NodeBuilder(node, x.type)
    stat = [c] + [1] * (rank - 2)
    dims = [0] + list(range(2, rank))
    if training:
        kept = [1, c] + [1] * (rank - 2)
        mean = b.op("aten::mean", [x, dims, True, None], kept)
        centered = b.op("aten::sub", [x, mean, 1], sizes)
        var = b.op("aten::mean", [b.op("aten::mul", [centered, centered], sizes), dims, True, None], kept)
        invstd = b.op("aten::rsqrt", [b.op("aten::add", [var, eps, 1], kept)], kept)
    else:  # the running statistics get no gradient (as the op's derivative gives them)
        rm, rv = (b.op("aten::detach", [v], [c], like=v.type) for v in (rm, rv))
        centered = b.op("aten::sub", [x, _channel(b, rm, rank), 1], sizes)
        invstd = b.op("aten::rsqrt", [b.op("aten::add", [_channel(b, rv, rank), eps, 1], stat)], stat)
    out = b.op("aten::mul", [centered, invstd], sizes)
    if not is_none(w):
        out = b.op("aten::mul", [out, _channel(b, w, rank)], sizes)
    if not is_none(bias):
        out = b.op("aten::add", [out, _channel(b, bias, rank), 1], sizes)
    results = {0: out}
    if training:
        save_mean = b.op("aten::reshape", [mean, [c]], [c])
        save_invstd = b.op("aten::reshape", [invstd, [c]], [c])
        if with_stats:
            results.update({1: save_mean, 2: save_invstd})
        count = math.prod(sizes) // c
        if not is_none(rm):
            new = b.op("aten::add", [b.op("aten::mul", [rm, 1.0 - momentum], [c]),
                                     b.op("aten::mul", [save_mean, float(momentum)], [c]), 1], [c])
            b.op("aten::copy_", [rm, new, False], [c], like=rm.type)
        if not is_none(rv):
            unbiased = b.op("aten::mul", [b.op("aten::reshape", [var, [c]], [c]),
                                          count / (count - 1) if count > 1 else math.nan], [c])
            new = b.op("aten::add", [b.op("aten::mul", [rv, 1.0 - momentum], [c]),
                                     b.op("aten::mul", [unbiased, float(momentum)], [c]), 1], [c])
            b.op("aten::copy_", [rv, new, False], [c], like=rv.type)
    if impl_index:
        if not training:
            empty = b.value(np.zeros(0, SCALAR_TYPES[x.type.scalar_type]))
            results.update({1: empty, 2: empty})
        results[3] = b.value(np.zeros(0, np.uint8))
        node.outputs[4].replace_all_uses_with(b.value(0))
    return _finish(node, b, results)


def _in_eval_mode(node: Node) -> bool:
    """Under grad mode only batch norm in eval mode decomposes: in training the running
    statistics are written in place, which the tape must not record."""
    try:
        return constant_of(node.inputs[5]) is False
    except LookupError:
        return False


def _never(node: Node) -> bool:
    return False


@decomposes("aten::batch_norm", under_grad=_in_eval_mode)
def decompose_batch_norm(node: Node) -> bool:
    return _batch_norm(node, with_stats=False)


@decomposes("aten::native_batch_norm", "aten::_native_batch_norm_legit", under_grad=_in_eval_mode)
def decompose_native_batch_norm(node: Node) -> bool:
    return _batch_norm(node, with_stats=True)


@decomposes("aten::_batch_norm_impl_index", under_grad=_in_eval_mode)
def decompose_batch_norm_impl_index(node: Node) -> bool:
    return _batch_norm(node, with_stats=True, impl_index=True)


@decomposes("aten::native_batch_norm_backward", under_grad=_never)
def decompose_native_batch_norm_backward(node: Node) -> bool:
    return _batch_norm_backward(node, *node.inputs)


@decomposes("aten::_batch_norm_impl_index_backward", under_grad=_never)
def decompose_batch_norm_impl_index_backward(node: Node) -> bool:
    """symbolic_script's batch_norm backward (implementation 0, the reserve unused)."""
    _impl, x, g, w, rm, rv, save_mean, save_invstd, train, eps, mask, _reserve = node.inputs
    return _batch_norm_backward(node, g, x, w, rm, rv, save_mean, save_invstd, train, eps, mask)


def _batch_norm_backward(node: Node, g, x, w, rm, rv, save_mean, save_invstd, train, eps, mask) -> bool:
    try:
        train, eps, mask = constant_of(train), constant_of(eps), constant_of(mask)
    except LookupError:
        return False
    sizes = sizes_of(x)
    if not (_float_tensor(x) and _float_tensor(g)) or sizes_of(g) != sizes or len(sizes) < 2 or \
            0 in sizes or not _optional_tensors([w, rm, rv, save_mean, save_invstd, g], x) or \
            not _outputs_unused(node, [k for k in range(3) if mask[k]]):
        return False
    mean_v, invstd_v = (save_mean, save_invstd) if train else (rm, rv)
    if is_none(mean_v) or is_none(invstd_v):
        return False
    rank, c = len(sizes), sizes[1]
    b = NodeBuilder(node, x.type)
    stat, kept = [c] + [1] * (rank - 2), [1, c] + [1] * (rank - 2)
    dims = [0] + list(range(2, rank))
    invstd = _channel(b, invstd_v, rank)
    if not train:
        invstd = b.op("aten::rsqrt", [b.op("aten::add", [invstd, eps, 1], stat)], stat)
    xhat = b.op("aten::mul", [b.op("aten::sub", [x, _channel(b, mean_v, rank), 1], sizes), invstd], sizes)
    gb = b.op("aten::sum", [g, dims, True, None], kept)
    gw = b.op("aten::sum", [b.op("aten::mul", [g, xhat], sizes), dims, True, None], kept)
    results = {}
    if mask[0]:
        scale = invstd if is_none(w) else b.op("aten::mul", [_channel(b, w, rank), invstd], stat)
        if train:
            m = math.prod(sizes) // c
            scaled = b.op("aten::mul", [g, float(m)], sizes)
            inner = b.op("aten::sub", [b.op("aten::sub", [scaled, gb, 1], sizes),
                                       b.op("aten::mul", [xhat, gw], sizes), 1], sizes)
            results[0] = b.op("aten::mul", [b.op("aten::div", [scale, float(m)], stat), inner], sizes)
        else:
            results[0] = b.op("aten::mul", [g, scale], sizes)
    if mask[1]:
        results[1] = b.op("aten::reshape", [gw, [c]], [c])
    if mask[2]:
        results[2] = b.op("aten::reshape", [gb, [c]], [c])
    return _finish(node, b, results)


# ---- layer norm and group norm

def _normalized(b: NodeBuilder, x, dims, eps, sizes, kept):
    """((x - mean) * rstd, mean, rstd) over `dims`, statistics kept as size-1 dims."""
    mean = b.op("aten::mean", [x, dims, True, None], kept)
    centered = b.op("aten::sub", [x, mean, 1], sizes)
    var = b.op("aten::mean", [b.op("aten::mul", [centered, centered], sizes), dims, True, None], kept)
    rstd = b.op("aten::rsqrt", [b.op("aten::add", [var, eps, 1], kept)], kept)
    return b.op("aten::mul", [centered, rstd], sizes), mean, rstd


def _layer_norm(node: Node, with_stats: bool) -> bool:
    x, shape, w, bias, eps = node.inputs[:5]
    try:
        shape, eps = constant_of(shape), constant_of(eps)
    except LookupError:
        return False
    sizes = sizes_of(x)
    k = len(shape) if isinstance(shape, list) else -1
    if not _float_tensor(x) or not _optional_tensors([w, bias], x) or not 0 < k <= len(sizes) or \
            list(sizes[len(sizes) - k:]) != list(shape) or 0 in sizes or \
            not isinstance(eps, (int, float)) or any(not is_none(v) and list(sizes_of(v)) != list(shape)
                                                     for v in (w, bias)):
        return False
    b = NodeBuilder(node, x.type)
    dims = list(range(len(sizes) - k, len(sizes)))
    kept = list(sizes[:len(sizes) - k]) + [1] * k
    out, mean, rstd = _normalized(b, x, dims, eps, sizes, kept)
    if not is_none(w):
        out = b.op("aten::mul", [out, w], sizes)
    if not is_none(bias):
        out = b.op("aten::add", [out, bias, 1], sizes)
    return _finish(node, b, {0: out, 1: mean, 2: rstd} if with_stats else {0: out})


@decomposes("aten::layer_norm")
def decompose_layer_norm(node: Node) -> bool:
    return _layer_norm(node, with_stats=False)


@decomposes("aten::native_layer_norm")
def decompose_native_layer_norm(node: Node) -> bool:
    return _layer_norm(node, with_stats=True)


@decomposes("aten::native_layer_norm_backward", under_grad=_never)
def decompose_native_layer_norm_backward(node: Node) -> bool:
    g, x, shape, mean, rstd, w, bias, mask = node.inputs
    try:
        shape, mask = constant_of(shape), constant_of(mask)
    except LookupError:
        return False
    sizes = sizes_of(x)
    k = len(shape) if isinstance(shape, list) else -1
    if not (_float_tensor(x) and _float_tensor(g) and _float_tensor(mean) and _float_tensor(rstd)) or \
            not _optional_tensors([w, bias, g, mean, rstd], x) or sizes_of(g) != sizes or \
            not 0 < k <= len(sizes) or \
            0 in sizes or not _outputs_unused(node, [j for j in range(3) if mask[j]]) or \
            (mask[1] and is_none(w)) or (mask[2] and is_none(bias)):
        return False
    b = NodeBuilder(node, x.type)
    lead, dims = list(range(len(sizes) - k)), list(range(len(sizes) - k, len(sizes)))
    kept = list(sizes[:len(sizes) - k]) + [1] * k
    xhat = b.op("aten::mul", [b.op("aten::sub", [x, mean, 1], sizes), rstd], sizes)
    results = {}
    if mask[0]:
        gxhat = g if is_none(w) else b.op("aten::mul", [g, w], sizes)
        m1 = b.op("aten::mean", [gxhat, dims, True, None], kept)
        m2 = b.op("aten::mean", [b.op("aten::mul", [gxhat, xhat], sizes), dims, True, None], kept)
        inner = b.op("aten::sub", [b.op("aten::sub", [gxhat, m1, 1], sizes),
                                   b.op("aten::mul", [xhat, m2], sizes), 1], sizes)
        results[0] = b.op("aten::mul", [rstd, inner], sizes)
    if mask[1]:
        results[1] = b.op("aten::sum", [b.op("aten::mul", [g, xhat], sizes), lead, False, None], shape,
                          like=w.type)
    if mask[2]:
        results[2] = b.op("aten::sum", [g, lead, False, None], shape, like=bias.type)
    return _finish(node, b, results)


@decomposes("aten::group_norm")
def decompose_group_norm(node: Node) -> bool:
    """Statistics over a (N, groups, C / groups * HxW) view; the affine part per channel."""
    x, groups, w, bias, eps = node.inputs[:5]
    try:
        groups, eps = constant_of(groups), constant_of(eps)
    except LookupError:
        return False
    sizes = sizes_of(x)
    if not _float_tensor(x) or not _optional_tensors([w, bias], x) or len(sizes) < 2 or 0 in sizes or \
            not isinstance(groups, int) or groups < 1 or sizes[1] % groups or \
            not isinstance(eps, (int, float)):
        return False
    n, c = sizes[:2]
    b = NodeBuilder(node, x.type)
    grouped = [n, groups, math.prod(sizes) // (n * groups)]
    xg = b.op("aten::reshape", [x, grouped], grouped)
    out, _, _ = _normalized(b, xg, [2], eps, grouped, [n, groups, 1])
    out = b.op("aten::reshape", [out, list(sizes)], sizes)
    rank = len(sizes)
    if not is_none(w):
        out = b.op("aten::mul", [out, _channel(b, w, rank)], sizes)
    if not is_none(bias):
        out = b.op("aten::add", [out, _channel(b, bias, rank), 1], sizes)
    return _finish(node, b, {0: out})


# ---- values and indices

def _extreme_dim(node: Node, values_kind: str, index_kind: str) -> bool:
    x, dim, keepdim = node.inputs
    try:
        dim, keepdim = constant_of(dim), constant_of(keepdim)
    except LookupError:
        return False
    sizes = sizes_of(x)
    out_sizes = sizes_of(node.outputs[0])
    if sizes is None or not sizes or out_sizes is None or 0 in sizes or not isinstance(dim, int):
        return False
    b = NodeBuilder(node, x.type)
    values = b.op(values_kind, [x, [dim], keepdim], out_sizes)
    indices = b.op(index_kind, [x, dim, keepdim], out_sizes, like=node.outputs[1].type)
    return _finish(node, b, {0: values, 1: indices})


@decomposes("aten::max", outputs=2, under_grad=_never)  # amax shares a tie's gradient
def decompose_max_dim(node: Node) -> bool:
    return _extreme_dim(node, "aten::amax", "aten::argmax")


@decomposes("aten::min", outputs=2, under_grad=_never)
def decompose_min_dim(node: Node) -> bool:
    return _extreme_dim(node, "aten::amin", "aten::argmin")
