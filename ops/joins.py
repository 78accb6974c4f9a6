"""Joining and splitting: cat/stack/hstack/vstack (copies, with type promotion across the
inputs) and split/chunk/unbind/tensor_split/meshgrid (views of the input, as in PyTorch)."""

from __future__ import annotations

import numpy as np

from .dtypes import result_type
from ._common import normalize_dim
from .registry import derivative, op
from .types import INT, TENSOR
from .views import exact_op


def _is_legacy_empty(t) -> bool:
    return t.ndim == 1 and t.shape[0] == 0


@op("aten::cat(Tensor[] tensors, int dim=0) -> Tensor",
    "aten::concat(Tensor[] tensors, int dim=0) -> Tensor",
    "aten::concatenate(Tensor[] tensors, int dim=0) -> Tensor")
def cat(tensors, dim=0):
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if t.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    dt = result_type(*tensors)
    used = [(i, t) for i, t in enumerate(tensors) if not _is_legacy_empty(t)]
    if not used:
        return np.zeros((0,), dtype=dt)
    ref = used[0][1]
    d = normalize_dim(dim, ref.ndim)
    for i, t in used[1:]:
        if t.ndim != ref.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ref.ndim} and {t.ndim}")
        for k in range(ref.ndim):
            if k != d and t.shape[k] != ref.shape[k]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size "
                                   f"{ref.shape[k]} but got size {t.shape[k]} for tensor number {i} in the list.")
    return np.concatenate([t.astype(dt, copy=False) for _, t in used], axis=d)


@derivative("aten::cat", "aten::concat", "aten::concatenate")
def cat_grad(e, grads, inputs, outputs):
    tensors, dim = inputs
    g = grads[0]
    if e.symbolic and not isinstance(tensors, list):
        # a list whose length is only known at run time: symbolic_script's cat, which computes
        # the split sizes in the forward graph and splits the gradient with them
        with e.forward():
            size = e.op("aten::len", tensors)
            split_sizes = e.op("aten::mul", e.list(0), size)

            def body(i):
                def record():
                    size = e.op("aten::size", e.op("aten::__getitem__", tensors, i))
                    e.op("aten::_set_item", split_sizes, i, e.op("aten::__getitem__", size, dim))
                nonempty = e.op("aten::ne", e.op("aten::size", e.op("aten::__getitem__", tensors, i)), e.list(0))
                e.if_(nonempty, record)
            e.loop(size, body)
        return [e.op("aten::split_with_sizes", g, split_sizes, dim), None]
    shapes = [e.shape(t) for t in tensors]
    ref = next((s for s in shapes if not (len(s) == 1 and s[0] == 0)), None)
    out, offset = [], 0
    for t, s in zip(tensors, shapes):
        if ref is None or (len(s) == 1 and s[0] == 0):
            out.append(None)
            continue
        d = dim % len(ref)
        out.append(e.cast_like(e.op("aten::narrow", g, d, offset, s[d]), t))
        offset += s[d]
    return [out, None]


@op("aten::stack(Tensor[] tensors, int dim=0) -> Tensor")
def stack(tensors, dim=0):
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, t in enumerate(tensors[1:], 1):
        if t.shape != tensors[0].shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(tensors[0].shape)} at "
                               f"entry 0 and {list(t.shape)} at entry {i}")
    d = normalize_dim(dim, tensors[0].ndim + 1)
    dt = result_type(*tensors)
    return np.stack([t.astype(dt, copy=False) for t in tensors], axis=d)


@derivative("aten::stack")
def stack_grad(e, grads, inputs, outputs):
    tensors, dim = inputs
    if e.symbolic and not isinstance(tensors, list):
        # a list whose length is only known at run time: symbolic_script's unbind(grad, dim)
        return [e.op("aten::unbind", grads[0], dim, unpack=False), None]
    d = dim % (len(e.shape(tensors[0])) + 1)
    return [[e.cast_like(e.op("aten::select", grads[0], d, i), t) for i, t in enumerate(tensors)], None]


def _atleast(t, n):
    if t.ndim >= n:
        return t
    if n == 1 or t.ndim == 0:
        return t.reshape((1,) * n)
    return t.reshape((1,) + t.shape)  # 1-D -> (1, N)


@op("aten::hstack(Tensor[] tensors) -> Tensor")
def hstack(tensors):
    ts = [_atleast(t, 1) for t in tensors]
    return cat(ts, 0 if ts and ts[0].ndim == 1 else 1)


@op("aten::vstack(Tensor[] tensors) -> Tensor")
def vstack(tensors):
    return cat([_atleast(t, 2) for t in tensors], 0)


def _stack_like_grad(e, g, tensors, dim, min_ndim):
    out, offset = [], 0
    for t in tensors:
        shape = e.shape(t)
        shown = shape if len(shape) >= min_ndim else ((1,) * min_ndim if not shape else (1,) + shape)
        piece = e.op("aten::narrow", g, dim, offset, shown[dim])
        offset += shown[dim]
        out.append(e.cast_like(e.op("aten::reshape", piece, list(shape)), t))
    return out


@derivative("aten::hstack")
def hstack_grad(e, grads, inputs, outputs):
    tensors = inputs[0]
    first = e.shape(tensors[0])
    dim = 0 if len(first) <= 1 else 1
    return [_stack_like_grad(e, grads[0], tensors, dim, 1)]


@derivative("aten::vstack")
def vstack_grad(e, grads, inputs, outputs):
    return [_stack_like_grad(e, grads[0], inputs[0], 0, 2)]


# ---- splitting (views)

def _split_at(self, d, sizes):
    out, start = [], 0
    for s in sizes:
        out.append(self[(slice(None),) * d + (slice(start, start + s), Ellipsis)])
        start += s
    return out


def _check_splittable(self, dim):
    if self.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    return normalize_dim(dim, self.ndim)


@exact_op("aten::split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]",
          "aten::unsafe_split.Tensor(Tensor self, SymInt split_size, int dim=0) -> Tensor[]")
def split(self, split_size, dim=0):
    d = _check_splittable(self, dim)
    n = self.shape[d]
    if split_size < 0 or (split_size == 0 and n != 0):
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
    if split_size == 0:
        return [self]
    count = max(1, -(-n // split_size))
    return _split_at(self, d, [min(split_size, n - i * split_size) for i in range(count)])


@exact_op("aten::split.sizes(Tensor(a -> *) self, SymInt[] split_size, int dim=0) -> Tensor(a)[]",
          "aten::split(Tensor(a -> *) self, int[] split_sizes, int dim=0) -> Tensor(a)[]",
          "aten::split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) -> Tensor(a)[]")
def split_with_sizes(self, split_sizes, dim=0):
    d = _check_splittable(self, dim)
    sizes = list(split_sizes)
    if sum(sizes) != self.shape[d] or any(s < 0 for s in sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {self.shape[d]} (input "
                           f"tensor's size at dimension {d}), but got split_sizes={sizes}")
    return _split_at(self, d, sizes)


@exact_op("aten::chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]",
          "aten::unsafe_chunk(Tensor self, int chunks, int dim=0) -> Tensor[]")
def chunk(self, chunks, dim=0):
    if self.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = normalize_dim(dim, self.ndim)
    n = self.shape[d]
    size = -(-n // chunks)
    if size == 0:  # empty dim: `chunks` empty pieces
        return _split_at(self, d, [0] * chunks)
    return split(self, size, d)


@exact_op("aten::tensor_split.sections(Tensor(a -> *) self, SymInt sections, int dim=0) -> Tensor(a)[]",
          "aten::tensor_split.indices(Tensor(a -> *) self, SymInt[] indices, int dim=0) -> Tensor(a)[]")
def tensor_split(self, sections_or_indices, dim=0):
    if self.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    d = normalize_dim(dim, self.ndim)
    n = self.shape[d]
    if isinstance(sections_or_indices, list):
        bounds = [0] + [min(max(i + n if i < 0 else i, 0), n) for i in sections_or_indices] + [n]
        sizes = [max(0, b - a) for a, b in zip(bounds, bounds[1:])]
        starts = bounds[:-1]
        return [self[(slice(None),) * d + (slice(s, s + k), Ellipsis)] for s, k in zip(starts, sizes)]
    k = sections_or_indices
    if k <= 0:
        raise RuntimeError(f"number of sections must be larger than 0, got {k}")
    q, r = divmod(n, k)
    return _split_at(self, d, [q + 1 if i < r else q for i in range(k)])


def _whole_list(e, grads) -> bool:
    """Whether the result's gradient came as one `Tensor[]` value (see facts' "list_vjp")."""
    return e.symbolic and len(grads) == 1 and e.is_tensor_list(grads[0])


def _pieces_grad(e, grads, outputs, dim_of):
    pieces = [e.zeros_like(o) if g is None else g for g, o in zip(grads, outputs)]
    return e.op("aten::cat", pieces, dim_of)


@derivative("aten::split.Tensor", "aten::unsafe_split.Tensor", "aten::split.sizes", "aten::split",
            "aten::split_with_sizes", "aten::chunk", "aten::unsafe_chunk", "aten::tensor_split.sections",
            "aten::tensor_split.indices")
def split_grad(e, grads, inputs, outputs):
    self, _, dim = inputs
    if _whole_list(e, grads):  # symbolic_script: `torch.cat(grads, dim)`
        return [e.op("aten::cat", grads[0], dim), None, None]
    d = dim % len(e.shape(self))
    if not outputs:
        return [e.zeros_like(self), None, None]
    return [_pieces_grad(e, grads, outputs, d), None, None]


@exact_op("aten::unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]")
def unbind(self, dim=0):
    if self.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = normalize_dim(dim, self.ndim)
    return [self[(slice(None),) * d + (i, Ellipsis)] for i in range(self.shape[d])]


@derivative("aten::unbind.int")
def unbind_grad(e, grads, inputs, outputs):
    self, dim = inputs
    if _whole_list(e, grads):  # symbolic_script: `torch.stack(grads, dim)`
        return [e.op("aten::stack", grads[0], dim), None]
    d = dim % len(e.shape(self))
    if not outputs:
        return [e.zeros_like(self), None]
    pieces = [e.zeros_like(o) if g is None else g for g, o in zip(grads, outputs)]
    return [e.op("aten::stack", pieces, d), None]


@op("aten::meshgrid(Tensor[] tensors) -> Tensor[]",
    "aten::meshgrid.indexing(Tensor[] tensors, *, str indexing) -> Tensor[]")
def meshgrid(tensors, indexing="ij"):
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError("torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: "
                               + str(t))
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    flat = [t.reshape(-1) for t in tensors]
    return list(np.meshgrid(*flat, indexing=indexing, copy=False, sparse=False))


@derivative("aten::meshgrid", "aten::meshgrid.indexing")
def meshgrid_grad(e, grads, inputs, outputs):
    tensors = inputs[0]
    indexing = inputs[1] if len(inputs) > 1 else "ij"
    if not isinstance(tensors, list) and e.node.kind == "aten::meshgrid" and _whole_list(e, grads):
        return [_meshgrid_grad_at_run_time(e, tensors, grads[0])]
    n = len(tensors)
    out = []
    for i, (g, t) in enumerate(zip(grads, tensors)):
        if g is None:
            out.append(None)
            continue
        pos = i
        if indexing == "xy" and n >= 2 and i < 2:
            pos = 1 - i
        others = [k for k in range(n) if k != pos]
        s = e.op("aten::sum", g, others, False, None) if others else g
        out.append(e.op("aten::reshape", s, e.size(t)))
    return [out] + [None] * (len(inputs) - 1)


def _meshgrid_grad_at_run_time(e, tensors, grad_outputs):
    """symbolic_script's meshgrid, for a list of unknown length: the forward records each
    input's length (0 for a 0-dim one) before meshgrid runs; the backward sums each output's
    gradient to its input's view shape and reshapes it, appending to a list."""
    with e.forward(before_result=True):
        size = e.op("aten::len", tensors)
        sizes = e.op("aten::mul", e.list(0), size)

        def record(i):
            def set_size():
                first = e.op("aten::__getitem__", e.op("aten::size", e.op("aten::__getitem__", tensors, i)), 0)
                e.op("aten::_set_item", sizes, i, first)
            e.if_(e.op("aten::ne", e.op("aten::dim", e.op("aten::__getitem__", tensors, i)), 0), set_size)
        e.loop(size, record)
    grads = e.empty_list(TENSOR)

    def each(i):
        view_shape = e.op("aten::mul", e.list(1), size)
        n = e.op("aten::__getitem__", sizes, i)

        def scalar():
            e.op("aten::_set_item", view_shape, i, 1)
            summed = e.op("aten::_grad_sum_to_size", e.op("aten::__getitem__", grad_outputs, i), view_shape)
            e.op("aten::append", grads, e.op("aten::reshape", summed, e.empty_list(INT)))

        def vector():
            e.op("aten::_set_item", view_shape, i, e.op("aten::__getitem__", sizes, i))
            summed = e.op("aten::_grad_sum_to_size", e.op("aten::__getitem__", grad_outputs, i), view_shape)
            e.op("aten::append", grads, e.op("aten::reshape", summed, e.list(e.op("aten::__getitem__", sizes, i))))
        e.if_(e.op("aten::eq", n, 0), scalar, vector)
    e.loop(size, each)
    e.result_after_forward()
    return grads
