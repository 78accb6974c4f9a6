"""The emitter lowering rules get (ops/lowering_common.py): the scalar emitter plus the
data-dependent indexing that pooling windows, embedding, index_select and gather need (loop
positions, run-time indices checked against their dimension, loads at computed offsets) and
transposed convolutions."""

from __future__ import annotations

from typing import Optional

import numpy as np

from irjit.ops.lowering_common import NotLowerable

from .kernel import CheckedIndex, Const, Convolution, Gather, Position
from .scalar_emitter import (DIMENSIONED, ExprEmitter, NeedSpace, Space, Val, View, _contiguous,
                             is_contiguous_view)

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

    def reduction_space(self, sizes, dims) -> None:
        """Make the kernel's iteration space that of a reduction of a value of `sizes` over
        `dims`, for rules that build the reduced value from positions (raises the emitter's
        request for that space until it is the kernel's)."""
        space = Space(tuple(sizes), tuple(sorted({d % len(sizes) for d in dims})))
        if self.space is None or not self.space.reduce_dims:
            raise NeedSpace(space)
        if self.space != space:
            raise NotLowerable("reductions of one kernel must share their input shape and dims")

    def aligned(self, x, dims) -> Val:
        """`x` read with its dimensions along the current node's output dims `dims` (not
        right-aligned: embedding's indices are the leading dims of its output)."""
        rank, dims = len(self.node_sizes), [d % len(self.node_sizes) for d in dims]
        if not isinstance(x, (Val, View)):
            return self.value(x)
        if len(dims) != len(x.sizes) or \
                any(x.sizes[k] not in (1, self.node_sizes[d]) for k, d in enumerate(dims)):
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

    def index_div(self, x, n: int) -> Val:
        """`x // n` for int64 index arithmetic (positive constant `n`; truncating, so callers
        use it on non-negative `x` or select negative ones away)."""
        x = self.cast(x, INT64)
        return x if n == 1 else self._op("idiv", INT64, x, self.cast(n, INT64), priority=x.priority)

    def index_rem(self, x, n: int) -> Val:
        """`x % n` for int64 index arithmetic (positive constant `n`; truncating, as `index_div`)."""
        x = self.cast(x, INT64)
        return self._op("irem", INT64, x, self.cast(n, INT64), priority=x.priority)

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

    def conv_transpose2d(self, x, weight, stride, padding, output_padding, groups, dilation) -> View:
        """conv_transpose2d (no bias) of contiguous input views, run before the loop nest: the
        input gradient of the convolution whose output has `x`'s shape."""
        from .conv import Conv2dShape
        from .conv_algorithm import conv_algorithm, scratch_elems
        if not all(isinstance(v, View) and not v.dynamic and v.offset == 0 and is_contiguous_view(v)
                   for v in (x, weight)) or self.allocate is None:
            raise NotLowerable("conv_transpose2d of computed or non-contiguous values")
        if x.dtype != weight.dtype or x.dtype.name not in ("float32", "float64") or \
                len(x.sizes) != 4 or len(weight.sizes) != 4:
            raise NotLowerable("conv_transpose2d dtypes or ranks")
        params = [list(v) if isinstance(v, (list, tuple)) else [v] * 2
                  for v in (stride, padding, output_padding, dilation)]
        if not all(isinstance(v, int) for p in params for v in p) or not isinstance(groups, int) or \
                any(len(p) != 2 for p in params) or groups < 1:
            raise NotLowerable("conv_transpose2d with run-time geometry")
        (s, p, op, d), (n, c_in, h, w) = params, x.sizes
        if weight.sizes[0] != c_in or any(op[i] >= max(s[i], d[i]) or op[i] < 0 for i in range(2)):
            raise NotLowerable("conv_transpose2d geometry")
        out_hw = [(size - 1) * s[i] - 2 * p[i] + d[i] * (weight.sizes[2 + i] - 1) + op[i] + 1
                  for i, size in enumerate((h, w))]
        try:
            shape = Conv2dShape.of((n, weight.sizes[1] * groups, *out_hw), weight.sizes, s, p, d, groups)
        except (ValueError, RuntimeError) as e:
            raise NotLowerable(str(e)) from None
        if (shape.out_h, shape.out_w) != (h, w) or min(out_hw) < 1:
            raise NotLowerable("conv_transpose2d output size")
        out_sizes = (n, shape.in_channels, *out_hw)
        out = self.allocate(x.dtype, out_sizes)
        algorithm = conv_algorithm(shape, "grad_input", x.dtype.name)
        elems = scratch_elems(shape, "grad_input", x.dtype.name, algorithm)
        scratch = self.allocate(x.dtype, (elems,)) if elems else None
        self.products.append(Convolution(shape, None, weight.buffer, None, out, scratch, x.dtype,
                                         mode="grad_input", grad=x.buffer, algorithm=algorithm))
        return View(out, x.dtype, out_sizes, _contiguous(out_sizes))

    def convolution_backward(self, grad, x, weight, stride, padding, dilation, transposed: bool,
                             groups, mask, sizes) -> tuple:
        """(grad_input, grad_weight) of a batched 2-D convolution of contiguous input views (of
        conv_transpose2d when `transposed`), None where `mask` leaves one out: products run before
        the loop nest (BLAS through conv.py) sharing one im2col scratch, returned as contiguous
        tensors of `sizes` (as many elements: a 1-D convolution's or an unbatched one's)."""
        from .conv import Conv2dShape
        from .conv_algorithm import conv_algorithm, scratch_elems
        if not all(isinstance(v, View) and not v.dynamic and v.offset == 0 and is_contiguous_view(v)
                   for v in (grad, x, weight)) or self.allocate is None:
            raise NotLowerable("convolution_backward of computed or non-contiguous values")
        if not grad.dtype == x.dtype == weight.dtype or x.dtype.name not in ("float32", "float64") or \
                not len(grad.sizes) == len(x.sizes) == len(weight.sizes) == 4 or \
                0 in grad.sizes + x.sizes + weight.sizes:
            raise NotLowerable("convolution_backward dtypes, ranks or empty tensors")
        params = [list(v) if isinstance(v, (list, tuple)) else [v] * 2 for v in (stride, padding, dilation)]
        if not all(isinstance(v, int) for p in params for v in p) or not isinstance(groups, int) or \
                any(len(p) != 2 for p in params) or not isinstance(transposed, bool):
            raise NotLowerable("convolution_backward with run-time geometry")
        conv_in, conv_out = (grad, x) if transposed else (x, grad)  # the convolution's own roles
        try:
            shape = Conv2dShape.of(conv_in.sizes, weight.sizes, *params, groups)
        except (ValueError, RuntimeError) as e:
            raise NotLowerable(str(e)) from None
        if (shape.batch, shape.out_channels, shape.out_h, shape.out_w) != tuple(conv_out.sizes):
            raise NotLowerable("convolution_backward shapes do not match its geometry")
        modes = (["forward" if transposed else "grad_input"] if mask[0] else []) + \
            (["grad_weight"] if mask[1] else [])
        algorithms = {m: conv_algorithm(shape, m, x.dtype.name) for m in modes}
        elems = max([scratch_elems(shape, m, x.dtype.name, a) for m, a in algorithms.items()], default=0)
        scratch = self.allocate(x.dtype, (elems,)) if elems else None  # shared: products run in turn

        def product(out_sizes, mode, **operands) -> View:
            out = self.allocate(x.dtype, out_sizes)
            fields = dict(x=None, weight=None, bias=None, grad=None) | operands
            self.products.append(Convolution(shape, out=out, scratch=scratch, dtype=x.dtype, mode=mode,
                                             algorithm=algorithms[mode], **fields))
            return View(out, x.dtype, tuple(out_sizes), _contiguous(out_sizes))

        grad_input = grad_weight = None
        if mask[0]:
            grad_input = product(sizes[0], "forward", x=grad.buffer, weight=weight.buffer) if transposed \
                else product(sizes[0], "grad_input", grad=grad.buffer, weight=weight.buffer)
        if mask[1]:
            grad_weight = product(sizes[1], "grad_weight", x=conv_in.buffer, grad=conv_out.buffer)
        return grad_input, grad_weight

    def reshape_copy(self, x, sizes) -> Val:
        """`x` (an input view) read in row-major order into the current node's output of
        `sizes`: the copy a reshape makes when no view of `x` has those sizes."""
        if not isinstance(x, View) or x.dynamic:
            raise NotLowerable("a copying reshape reads an input view")
        sizes = tuple(self.node_sizes)
        if int(np.prod(sizes)) != int(np.prod(x.sizes)) or not all(sizes):
            raise NotLowerable("a copying reshape of an empty or mismatched view")
        linear = None
        for k, stride in enumerate(_row_major(sizes)):
            if sizes[k] != 1:
                term = self.mul(self.position(k), stride)
                linear = term if linear is None else self.add(linear, term)
        if linear is None:
            raise NotLowerable("one element: a view")
        indices = [self.cast(0, INT64) if n == 1 else self.index_rem(self.index_div(linear, stride), n)
                   for n, stride in zip(x.sizes, _row_major(x.sizes))]
        return self.load_at(x, indices)


def _row_major(sizes) -> list[int]:
    strides, acc = [], 1
    for n in reversed(sizes):
        strides.append(acc)
        acc *= n
    return strides[::-1]
