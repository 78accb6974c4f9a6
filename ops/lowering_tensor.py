"""Native lowering rules of tensor ops that move or select elements by their position: detach,
flip, roll, repeat, tril, triu, slice_backward, advanced indexing by integer tensors and its
derivative (index_put with accumulation). Each output element is a load from an input view at
an index computed from the output position (or a select on that position), so they fuse with
the ops that read them; every computed index is in range by construction or checked."""

from __future__ import annotations

import math

from . import indexing, views  # noqa: F401
from .lowering_common import NotLowerable
from .registry import lowering


@lowering("aten::detach")
def _detach(e, x):
    return e.alias(x)


def _dims(dims, rank: int) -> list:
    dims = dims if isinstance(dims, (list, tuple)) else [dims]
    if any(not isinstance(d, int) or not -rank <= d < rank for d in dims):
        raise NotLowerable("a dim out of range")  # the interpreter raises IndexError
    return [d % rank for d in dims]


def _nonempty(x):
    if 0 in x.sizes:
        raise NotLowerable("an empty tensor")
    return x


def _gather(e, x, indices: list):
    """`x` at `indices` (one per dim of x, each in range)."""
    if not e.is_view(x):
        raise NotLowerable("positional loads read input views")
    return e.load_at(x, indices)


@lowering("aten::flip")
def _flip(e, x, dims):
    _nonempty(x)
    rank = len(x.sizes)
    axes = _dims(dims, rank) if rank else []
    if len(set(axes)) != len(axes):
        raise NotLowerable("flip dims have duplicates")  # an error in the interpreter
    if all(x.sizes[d] == 1 for d in axes):
        return e.value(x)
    return _gather(e, x, [e.sub(x.sizes[d] - 1, e.position(d)) if d in axes else e.position(d)
                          for d in range(rank)])


def _rolled(e, position, size: int, shift: int):
    """The source index of `position` along a dim of `size` rolled by `shift`."""
    back = -shift % size
    return position if back == 0 else e.index_rem(e.add(position, back), size)


@lowering("aten::roll")
def _roll(e, x, shifts, dims=()):
    shifts = shifts if isinstance(shifts, (list, tuple)) else [shifts]
    dims = dims if isinstance(dims, (list, tuple)) else [dims]
    sizes, rank = tuple(_nonempty(x).sizes), len(x.sizes)
    if not all(isinstance(s, int) for s in shifts) or not rank:
        raise NotLowerable("roll by run-time shifts or of a 0-dim tensor")
    if not dims:
        if len(shifts) != 1:
            raise NotLowerable("shifts and dims must align")
        total, strides = 1, []
        for n in reversed(sizes):
            strides.insert(0, total)
            total *= n
        flat = e.cast(0, "int64")
        for d in range(rank):
            flat = e.add(flat, e.mul(e.position(d), strides[d]))
        source = _rolled(e, flat, total, shifts[0])
        return _gather(e, x, [e.index_rem(e.index_div(source, strides[d]), sizes[d]) for d in range(rank)])
    if len(shifts) != len(dims):
        raise NotLowerable("shifts and dims must align")
    total_shift = [0] * rank
    for s, d in zip(shifts, _dims(dims, rank)):
        total_shift[d] += s
    return _gather(e, x, [_rolled(e, e.position(d), sizes[d], total_shift[d]) for d in range(rank)])


@lowering("aten::repeat")
def _repeat(e, x, repeats):
    sizes = tuple(_nonempty(x).sizes)
    if not isinstance(repeats, (list, tuple)) or len(repeats) < len(sizes) or \
            not all(isinstance(r, int) and r > 0 for r in repeats):
        raise NotLowerable("repeat counts")
    lead = len(repeats) - len(sizes)
    if all(r == 1 for r in repeats) and not lead:
        return e.value(x)
    if not sizes:
        raise NotLowerable("repeat of a 0-dim tensor")
    # a size-1 dim reads index 0 (load_at keeps its position's shape); the new leading dims
    # join the first index times 0, so the load runs along every output dim
    indices = [e.index_rem(e.position(lead + k), n) if n != 1 else e.position(lead + k)
               for k, n in enumerate(sizes)]
    for d in range(lead):
        indices[0] = e.add(indices[0], e.mul(e.position(d), 0))
    return _gather(e, x, indices)


def _triangle(e, x, diagonal, lower: bool):
    if len(x.sizes) < 2 or not isinstance(diagonal, int):
        raise NotLowerable("tril/triu of fewer than 2 dims or by a run-time diagonal")
    offset = e.sub(e.position(-1), e.position(-2))  # column - row
    keep = e.le(offset, diagonal) if lower else e.ge(offset, diagonal)
    return e.where(keep, x, 0)


@lowering("aten::tril")
def _tril(e, x, diagonal=0):
    return _triangle(e, x, diagonal, lower=True)


@lowering("aten::triu")
def _triu(e, x, diagonal=0):
    return _triangle(e, x, diagonal, lower=False)


@lowering("aten::slice_backward")
def _slice_backward(e, grad, input_sizes, dim, start, end, step):
    """Zeros of `input_sizes` holding `grad` at the sliced positions: each output position
    loads the gradient at its (clamped) slice index and keeps it only where it was sliced."""
    sizes = tuple(input_sizes) if isinstance(input_sizes, (list, tuple)) else None
    if sizes is None or tuple(e.node_sizes) != sizes or not sizes or \
            not all(isinstance(v, int) for v in (dim, start, step)) or step < 1:
        raise NotLowerable("slice_backward with run-time geometry")
    dim = _dims(dim, len(sizes))[0]
    n, count = sizes[dim], grad.sizes[dim]
    start = min(max(start + n if start < 0 else start, 0), n)
    if count == 0 or 0 in grad.sizes:
        raise NotLowerable("slice_backward of an empty slice")
    rel = e.sub(e.position(dim), start)
    inside = e.logical_and(e.ge(rel, 0), e.lt(rel, count * step))
    if step != 1:
        inside = e.logical_and(inside, e.eq(e.index_rem(e.maximum(rel, 0), step), 0))
    index = e.minimum(e.maximum(e.index_div(e.maximum(rel, 0), step), 0), count - 1)
    value = _gather(e, grad, [index if d == dim else e.position(d) for d in range(len(sizes))])
    return e.where(inside, value, 0)


def _is_index_tensor(v) -> bool:
    return hasattr(v, "sizes") and hasattr(v, "dtype")


class _Indexing:
    """The geometry of advanced indexing of a tensor of `sizes` by integer tensors (None: a
    whole dim): the indexed dims, the broadcast shape of the index tensors and where it sits in
    the result (at the first indexed dim when those are adjacent, else in front)."""

    def __init__(self, sizes: tuple, indices: list):
        indices = list(indices) + [None] * (len(sizes) - len(indices))
        if len(indices) > len(sizes) or not any(v is not None for v in indices) or any(
                v is not None and not (_is_index_tensor(v) and v.dtype.kind in "iu") for v in indices):
            raise NotLowerable("indices other than integer tensors")
        self.sizes, self.indices = sizes, indices
        self.indexed = [d for d, v in enumerate(indices) if v is not None]
        self.broadcast = _broadcast([tuple(indices[d].sizes) for d in self.indexed])
        adjacent = self.indexed == list(range(self.indexed[0], self.indexed[-1] + 1))
        self.first = self.indexed[0] if adjacent else 0
        rest = [sizes[d] for d in range(len(sizes)) if d not in self.indexed]
        self.result = tuple(rest[:self.first]) + self.broadcast + tuple(rest[self.first:])

    def index_dims(self, v) -> range:
        """The result dims an index tensor's dims run along (right-aligned in the broadcast)."""
        end = self.first + len(self.broadcast)
        return range(end - len(v.sizes), end)

    def other_dims(self) -> list:
        """The result dim of each dim that is not indexed, in order."""
        return [d for d in range(len(self.result)) if not self.first <= d < self.first + len(self.broadcast)]


def _broadcast(shapes: list) -> tuple:
    rank = max(len(s) for s in shapes)
    out = []
    for k in range(rank):
        dims = {s[len(s) - rank + k] for s in shapes if len(s) - rank + k >= 0} - {1}
        if len(dims) > 1:
            raise NotLowerable("index tensors that do not broadcast")
        out.append(dims.pop() if dims else 1)
    return tuple(out)


@lowering("aten::index.Tensor")
def _index(e, x, indices):
    """Advanced indexing by integer tensors: each output element loads x at the index tensors'
    entries (each checked against its dim: out of range, the kernel bails out and the
    interpreter raises IndexError) and at its own position along the other dims. Masks stay
    interpreted."""
    geometry = _Indexing(tuple(_nonempty(x).sizes), indices)
    if tuple(e.node_sizes) != geometry.result or 0 in geometry.result:
        raise NotLowerable("index result sizes")
    others = geometry.other_dims()
    at = []
    for d, v in enumerate(geometry.indices):
        if v is None:
            at.append(e.position(others.pop(0)))
        else:
            at.append(e.checked_index(e.aligned(v, geometry.index_dims(v)), geometry.sizes[d], wrap=True))
    return _gather(e, x, at)


MAX_SCATTER_WORK = 1 << 22  # output elements times index entries above which index_put stays interpreted


@lowering("aten::index_put")
def _index_put(e, x, indices, values, accumulate=False):
    """With `accumulate` (index's derivative): x plus, at each position, the sum of the values
    whose index entries name it, a reduction over the index entries (no store goes through an
    index); each entry is checked against its dim."""
    sizes = tuple(_nonempty(x).sizes)
    if accumulate is not True or not (e.is_view(x) and e.is_view(values)) or x.dtype != values.dtype:
        raise NotLowerable("index_put without accumulation or of computed operands")
    geometry = _Indexing(sizes, indices)
    count = math.prod(geometry.broadcast)
    if tuple(values.sizes) != geometry.result or count == 0 or \
            any(not e.is_view(geometry.indices[d]) for d in geometry.indexed) or \
            math.prod(sizes) * count > MAX_SCATTER_WORK:
        raise NotLowerable("index_put shapes")
    rank = len(sizes)
    space = sizes + (count,)
    e.reduction_space(space, [rank])
    entry, coords = e.position(rank, space), []
    for n in reversed(geometry.broadcast):
        coords.insert(0, e.index_rem(entry, n))
        entry = e.index_div(entry, n)
    hit, others = None, [d for d in range(rank) if d not in geometry.indexed]
    for d in geometry.indexed:
        v = geometry.indices[d]
        at = coords[len(coords) - len(v.sizes):]
        target = e.checked_index(e.load_at(v, at), sizes[d], wrap=True)
        same = e.eq(target, e.position(d, space))
        hit = same if hit is None else e.logical_and(hit, same)
    value_at = [e.position(d, space) for d in others]
    value_at[geometry.first:geometry.first] = coords
    total = e.reduce("sum", e.where(hit, e.load_at(values, value_at), 0), [rank], False)
    kept = e.load_at(x, [e.position(d, space) for d in range(rank)])
    return e.add(e.squeeze(kept, [rank]), total)
