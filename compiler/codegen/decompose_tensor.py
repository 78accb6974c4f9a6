"""Decompositions of tensor ops into natively lowered ones: the LSTM and GRU cells as two
linear layers whose gate slices go through pointwise ops; max/min over a dim under grad mode
as argmax/argmin and a gather at that index (whose derivative, like the op's, sends a tied
maximum's gradient to the returned index only); sort and topk as ranks and a gather; a copy
into a fresh `empty_like` tensor as a clone."""

from __future__ import annotations

import numpy as np

from irjit.compiler.ir import Node
from irjit.ops.tensor import Tensor
from irjit.ops.types import TensorType

from .decompose_rules import NodeBuilder, constant_of, decomposes, is_none, sizes_of
from .lower import contiguous_strides


def _always(node: Node) -> bool:
    return True


def _float_2d(v) -> bool:
    sizes = sizes_of(v)
    return isinstance(v.type, TensorType) and sizes is not None and len(sizes) == 2 and \
        v.type.scalar_type in ("Float", "Double")


class _Cell:
    """The operands of an RNN cell node of 2-D input and state, weights of (gates * hidden,
    features) and optional biases, one dtype; its gates are slices of one pre-activation."""

    def __init__(self, node: Node, states: list, gates: int):
        x, _, w_ih, w_hh, b_ih, b_hh = node.inputs
        self.ok = False
        tensors = [x, *states, w_ih, w_hh] + [b for b in (b_ih, b_hh) if not is_none(b)]
        if not all(_float_2d(v) for v in [x, *states, w_ih, w_hh]) or \
                len({v.type.scalar_type for v in tensors}) != 1 or \
                any(sizes_of(v) is None for v in tensors):
            return
        (n, features), (_, hidden) = sizes_of(x), sizes_of(states[0])
        if sizes_of(w_ih) != (gates * hidden, features) or sizes_of(w_hh) != (gates * hidden, hidden) or \
                any(sizes_of(s) != (n, hidden) for s in states) or \
                any(not is_none(b) and sizes_of(b) != (gates * hidden,) for b in (b_ih, b_hh)) or \
                0 in (n, features, hidden):
            return
        self.ok = True
        self.n, self.hidden, self.gates = n, hidden, gates
        self.b = NodeBuilder(node, x.type)
        self.size = (n, hidden)
        wide = (n, gates * hidden)
        self.input_side = self.b.op("aten::linear", [x, w_ih, b_ih], wide)
        self.state_side = self.b.op("aten::linear", [states[0], w_hh, b_hh], wide)

    def gate(self, v, k: int):
        """Gate k of the (n, gates * hidden) pre-activation `v`."""
        h = self.hidden
        return self.b.op("aten::slice", [v, 1, k * h, (k + 1) * h, 1], self.size)

    def gates_of_sum(self) -> list:
        total = self.b.op("aten::add", [self.input_side, self.state_side, 1], (self.n, self.gates * self.hidden))
        return [self.gate(total, k) for k in range(self.gates)]


def _cell_states(node: Node):
    hx = node.inputs[1]
    if hx.node.kind != "prim::ListConstruct" or len(hx.node.inputs) != 2:
        return None
    return list(hx.node.inputs)


@decomposes("aten::lstm_cell", under_grad=_always)
def decompose_lstm_cell(node: Node) -> bool:
    """i, f, g, o = σ, σ, tanh, σ of the four gates; c' = f c + i g; h' = o tanh(c')."""
    states = _cell_states(node)
    if states is None:
        return False
    cell = _Cell(node, states, 4)
    if not cell.ok:
        return False
    c = states[1]
    b, size = cell.b, cell.size
    i, f, g, o = cell.gates_of_sum()
    i, f, o = (b.op("aten::sigmoid", [v], size) for v in (i, f, o))
    g = b.op("aten::tanh", [g], size)
    cy = b.op("aten::add", [b.op("aten::mul", [f, c], size), b.op("aten::mul", [i, g], size), 1], size)
    hy = b.op("aten::mul", [o, b.op("aten::tanh", [cy], size)], size)
    b.replace(node.outputs[0], hy)
    b.replace(node.outputs[1], cy)
    node.destroy()
    return True


@decomposes("aten::gru_cell", under_grad=_always)
def decompose_gru_cell(node: Node) -> bool:
    """r, z = σ of their gates; n = tanh(x W_n + b_in + r (h U_n + b_hn)); h' = n + z (h - n)."""
    h = node.inputs[1]
    cell = _Cell(node, [h], 3)
    if not cell.ok:
        return False
    b, size = cell.b, cell.size
    rz = b.op("aten::add", [cell.input_side, cell.state_side, 1], (cell.n, 3 * cell.hidden))
    r = b.op("aten::sigmoid", [cell.gate(rz, 0)], size)
    z = b.op("aten::sigmoid", [cell.gate(rz, 1)], size)
    xn, hn = cell.gate(cell.input_side, 2), cell.gate(cell.state_side, 2)
    n = b.op("aten::tanh", [b.op("aten::add", [xn, b.op("aten::mul", [r, hn], size), 1], size)], size)
    hy = b.op("aten::add", [n, b.op("aten::mul", [z, b.op("aten::sub", [h, n, 1], size)], size), 1], size)
    b.replace(node.output, hy)
    node.destroy()
    return True


def _extreme_at_index(node: Node, index_kind: str) -> bool:
    x, dim, keepdim = node.inputs
    try:
        dim, keepdim = constant_of(dim), constant_of(keepdim)
    except LookupError:
        return False
    sizes, out_sizes = sizes_of(x), sizes_of(node.outputs[0])
    if sizes is None or not sizes or out_sizes is None or 0 in sizes or not isinstance(dim, int) or \
            not isinstance(keepdim, bool) or not -len(sizes) <= dim < len(sizes):
        return False
    dim %= len(sizes)
    kept = tuple(1 if d == dim else n for d, n in enumerate(sizes))
    b = NodeBuilder(node, x.type)
    index = b.op(index_kind, [x, dim, True], kept, like=node.outputs[1].type)
    values = b.op("aten::gather", [x, dim, index, False], kept)
    if not keepdim:
        values = b.op("aten::squeeze", [values, dim], out_sizes)
        index = b.op("aten::squeeze", [index, dim], out_sizes, like=node.outputs[1].type)
    b.replace(node.outputs[0], values)
    b.replace(node.outputs[1], index)
    node.destroy()
    return True


@decomposes("aten::max", outputs=2, under_grad=_always)
def decompose_max_dim_at_index(node: Node) -> bool:
    return _extreme_at_index(node, "aten::argmax")


@decomposes("aten::min", outputs=2, under_grad=_always)
def decompose_min_dim_at_index(node: Node) -> bool:
    return _extreme_at_index(node, "aten::argmin")


# ---- sort and topk

MAX_SORT = 256  # elements along the sorted dim above which sort/topk stay interpreted (quadratic)


class _Ranking:
    """Sorting along `dim` by ranks: element j's rank is the number of elements k that come
    before it (smaller, or larger when descending, NaN counting as the largest; equal ones
    before it in the input, which makes the order stable), and output i takes the element of
    rank i. Comparisons are of (…, n, n) pairs, j along `dim` and k (or i) along the dim after
    it; a computed value keeps its dims on the kernel axes it was computed along."""

    def __init__(self, node: Node, x, dim: int, descending: bool):
        self.b = NodeBuilder(node, x.type)
        self.x, self.sizes, self.dim, self.descending = x, sizes_of(x), dim, descending
        self.n = self.sizes[dim]
        self.long = node.outputs[1].type
        self.bool = x.type.with_(scalar_type="Bool")

    def positions(self, count: int, at: int):
        """0 .. count-1 along the pair dim `at` (dim: j, dim + 1: k), a constant tensor (an
        input of the kernel, read through its strides)."""
        sizes = [1] * (len(self.sizes) + 1)
        sizes[at] = count
        value = Tensor(np.arange(count, dtype=np.int64).reshape(sizes))
        return self.b.graph.insert_constant(value, self.long.with_(
            sizes=tuple(sizes), strides=contiguous_strides(sizes), requires_grad=False))

    def along(self, v, at: int, like):
        """`v` (of the tensor's sizes) with a size-1 dim so that its dim runs along the pair
        dim `at` (dim: j, dim + 1: k)."""
        sizes = list(self.sizes)
        sizes.insert(self.dim + 1, 1)
        if at == self.dim + 1:
            sizes[self.dim], sizes[self.dim + 1] = 1, self.n
            return self.b.op("aten::unsqueeze", [v, self.dim], sizes, like=like)
        return self.b.op("aten::unsqueeze", [v, self.dim + 1], sizes, like=like)

    def cmp(self, kind: str, a, c):
        """`kind` of a and c (broadcast against each other) as a bool tensor."""
        sizes = tuple(max(m, n) for m, n in zip(sizes_of(a), sizes_of(c)))
        return self.b.op(kind, [a, c], sizes, like=self.bool)

    def ranks(self):
        b, bools = self.b, self.bool
        xj, xk = self.along(self.x, self.dim, self.x.type), self.along(self.x, self.dim + 1, self.x.type)
        before = self.cmp("aten::gt" if self.descending else "aten::lt", xk, xj)
        same = self.cmp("aten::eq", xk, xj)
        if self.x.type.scalar_type in ("Float", "Double"):
            nan_j, nan_k = (b.op("aten::isnan", [v], sizes_of(v), like=bools) for v in (xj, xk))
            bigger, smaller = (nan_k, nan_j) if self.descending else (nan_j, nan_k)
            not_smaller = b.op("aten::logical_not", [smaller], sizes_of(smaller), like=bools)
            before = self.cmp("aten::logical_or", before, self.cmp("aten::logical_and", bigger, not_smaller))
            same = self.cmp("aten::logical_or", same, self.cmp("aten::logical_and", nan_j, nan_k))
        earlier = self.cmp("aten::lt", self.positions(self.n, self.dim + 1), self.positions(self.n, self.dim))
        before = self.cmp("aten::logical_or", before, self.cmp("aten::logical_and", same, earlier))
        return b.op("aten::sum", [before, [self.dim + 1], False, None], self.sizes, like=self.long)

    def indices(self, count: int):
        """The input index of the element of each rank below `count`, along dim: the sum over
        j (along dim) of j where j's rank is i (along the dim after it)."""
        b = self.b
        ranks = self.along(self.ranks(), self.dim, self.long)
        hit = self.cmp("aten::eq", ranks, self.positions(count, self.dim + 1))
        where = b.op("aten::mul", [hit, self.positions(self.n, self.dim)], sizes_of(hit), like=self.long)
        out = list(self.sizes)
        out[self.dim] = count
        return b.op("aten::sum", [where, [self.dim], False, None], out, like=self.long)


def _select_by_rank(node: Node, x, dim, descending, count) -> bool:
    sizes = sizes_of(x)
    if sizes is None or not sizes or 0 in sizes or not isinstance(dim, int) or \
            not -len(sizes) <= dim < len(sizes) or not isinstance(descending, bool) or \
            x.type.scalar_type not in ("Float", "Double", "Long", "Int") or \
            sizes_of(node.outputs[1]) is None:
        return False
    dim %= len(sizes)
    count = sizes[dim] if count is None else count
    if not 0 < count <= sizes[dim] or sizes[dim] > MAX_SORT:
        return False
    ranking = _Ranking(node, x, dim, descending)
    indices = ranking.indices(count)
    values = ranking.b.op("aten::gather", [x, dim, indices, False], sizes_of(node.outputs[0]))
    ranking.b.replace(node.outputs[0], values)
    ranking.b.replace(node.outputs[1], indices)
    node.destroy()
    return True


@decomposes("aten::sort", under_grad=_always)
def decompose_sort(node: Node) -> bool:
    """sort as ranks and a gather (its derivative, like the op's, scatters to the indices)."""
    x, dim, descending = node.inputs
    try:
        dim, descending = constant_of(dim), constant_of(descending)
    except LookupError:
        return False
    return _select_by_rank(node, x, dim, descending, None)


@decomposes("aten::topk", under_grad=_always)
def decompose_topk(node: Node) -> bool:
    """topk as the first k ranks (largest: descending) and a gather, always sorted (as the
    interpreter returns it)."""
    x, k, dim, largest, _sorted = node.inputs
    try:
        k, dim, largest = constant_of(k), constant_of(dim), constant_of(largest)
    except LookupError:
        return False
    return isinstance(k, int) and _select_by_rank(node, x, dim, largest, k)


# ---- copies into fresh tensors

@decomposes("aten::copy_", under_grad=_always)
def decompose_copy_into_empty_like(node: Node) -> bool:
    """`empty_like(x).copy_(src)` of src's dtype and sizes, the empty tensor read by nothing
    else, is a clone of src (both differentiate to the identity on src)."""
    target, src = node.inputs[0], node.inputs[1]
    if target.node.kind != "aten::empty_like" or len(target.uses) != 1 or \
            not isinstance(src.type, TensorType) or not isinstance(target.type, TensorType) or \
            sizes_of(src) is None or sizes_of(src) != sizes_of(target) or \
            src.type.scalar_type != target.type.scalar_type or \
            tuple(target.type.strides or ()) != contiguous_strides(sizes_of(target)):
        return False
    b = NodeBuilder(node, target.type)
    copy = b.op("aten::clone", [src, None], sizes_of(target))
    copy.type = node.output.type
    node.output.replace_all_uses_with(copy)
    empty = target.node
    node.destroy()
    empty.destroy()
    return True
