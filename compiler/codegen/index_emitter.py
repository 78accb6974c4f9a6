"""The emitter lowering rules get (ops/lowering_common.py): the scalar emitter plus the
data-dependent indexing that pooling windows, embedding, index_select and gather need: loop
positions, run-time indices checked against their dimension, and loads at computed offsets."""

from __future__ import annotations

from typing import Optional

import numpy as np

from irjit.ops.lowering_common import NotLowerable

from .kernel import CheckedIndex, Const, Gather, Position
from .scalar_emitter import DIMENSIONED, ExprEmitter, Val, View

INT64 = np.dtype(np.int64)


class LoweringEmitter(ExprEmitter):
    """ExprEmitter with indexing: every offset it loads at is in range by construction."""

    def position(self, dim: int, sizes: Optional[tuple] = None) -> Val:
        """The int64 index along `dim` of the current node's output, or, given `sizes`, of a
        value of those sizes in the iteration space (a reduction's input)."""
        if sizes is None:
            sizes, axes = tuple(self.node_sizes), self.node_axes
            if axes is None:
                raise NotLowerable("the node's output has no kernel axes")
        else:
            axes = self.space.full_axes(tuple(sizes))
        rank = len(sizes)
        dim %= rank
        if sizes[dim] == 1:
            return self.cast(0, INT64)
        if axes[dim] is None:
            raise NotLowerable("a position along a broadcast dimension")
        return Val(Position(axes[dim]), INT64, DIMENSIONED,
                   tuple(n if k == dim else 1 for k, n in enumerate(sizes)),
                   tuple(axes[dim] if k == dim else None for k in range(rank)))

    def aligned(self, x, dims) -> Val:
        """`x` read with its dimensions along the current node's output dims `dims` (not
        right-aligned: embedding's indices are the leading dims of its output)."""
        rank, dims = len(self.node_sizes), [d % len(self.node_sizes) for d in dims]
        if not isinstance(x, (Val, View)):
            return self.value(x)
        if len(dims) != len(x.sizes) or any(x.sizes[k] not in (1, self.node_sizes[d]) for k, d in enumerate(dims)):
            raise NotLowerable("an operand does not align with the result")
        if self.node_axes is None:
            raise NotLowerable("the node's output has no kernel axes")
        want = tuple(self.node_axes[d] if n != 1 else None for n, d in zip(x.sizes, dims))
        if isinstance(x, View):
            x = self.load(x, want)
        elif any(a is not None and a != w for a, w in zip(x.axes, want)):
            raise NotLowerable("an operand runs along other kernel axes")
        sizes, axes = [1] * rank, [None] * rank
        for k, d in enumerate(dims):
            sizes[d], axes[d] = x.sizes[k], x.axes[k]
        return Val(x.expr, x.dtype, DIMENSIONED, tuple(sizes), tuple(axes))

    def checked_index(self, x, size: int, wrap: bool) -> Val:
        """Integer `x` as an index into a dimension of `size`, negative ones counted from the end
        when `wrap`; out of range at run time, the kernel bails out."""
        if isinstance(x, (bool, float)) or (isinstance(x, (Val, View)) and x.dtype.kind not in "iu"):
            raise NotLowerable("indices must be integers")
        if isinstance(x, int):
            if not (-size if wrap else 0) <= x < size:
                raise NotLowerable("index out of range")
            return self.cast(x % size, INT64)
        v = self.cast(x, INT64)
        if size == 0:
            raise NotLowerable("index into an empty dimension")
        return Val(CheckedIndex(v.expr, size, wrap), INT64, v.priority, v.sizes, v.axes)

    def load_at(self, x, indices: list) -> Val:
        """`x[indices]` (one int64 index per dimension, each already in range) from an input view."""
        if not isinstance(x, View) or x.dynamic:
            raise NotLowerable("indexed loads read input views")
        if len(indices) != len(x.sizes) or any(n == 0 for n in x.sizes):
            raise NotLowerable("indexed load of an empty or mismatched view")
        offset = self.cast(x.offset, INT64)
        for idx, stride, n in zip(indices, x.strides, x.sizes):
            if n != 1 and stride:
                offset = self.add(offset, self.mul(idx, stride))
            else:  # size 1: the only valid index is 0; keep the index's shape
                offset = self.add(offset, self.mul(idx, 0))
        if isinstance(offset.expr, Const):
            raise NotLowerable("indexed load at a constant offset")
        return Val(Gather(x.buffer, offset.expr, x.dtype), x.dtype, DIMENSIONED, offset.sizes, offset.axes)
