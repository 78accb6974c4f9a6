"""Indexing: advanced indexing (`index`, `index_put_`), index_select/index_add, gather/scatter,
masked_select/masked_scatter, nonzero, take_along_dim, `copy_`, and the backward ops their
derivatives use (PyTorch's names: index_select_backward, gather_backward, ...)."""

from __future__ import annotations

import numpy as np

from ._common import normalize_dim
from .dtypes import scalar_type_name
from .registry import derivative, op
from .views import broadcast_shapes, expand


def index_tuple(self: np.ndarray, indices: list) -> tuple:
    """A numpy index for PyTorch's `Tensor?[] indices`: None = whole dim, bool/uint8 masks
    (replaced by their nonzero() positions), integer tensors (bounds-checked)."""
    idx: list = []
    dim = 0
    for ind in indices:
        if ind is None:
            idx.append(slice(None))
            dim += 1
            continue
        ind = np.asarray(ind)
        if ind.dtype == np.bool_ or ind.dtype == np.uint8:
            mask = ind.astype(bool, copy=False)
            for j, s in enumerate(mask.shape):
                if dim + j >= self.ndim or self.shape[dim + j] != s:
                    raise IndexError(f"The shape of the mask {list(mask.shape)} at index {j} does not match the "
                                     f"shape of the indexed tensor {list(self.shape)} at index {dim + j}")
            if mask.ndim == 0:
                idx.append(mask)
            else:
                idx.extend(np.nonzero(mask))
            dim += mask.ndim
        elif ind.dtype.kind in "iu":
            if dim >= self.ndim:
                raise IndexError(f"too many indices for tensor of dimension {self.ndim} (got {len(indices)})")
            n = self.shape[dim]
            bad = ind[(ind >= n) | (ind < -n)]
            if bad.size:
                raise IndexError(f"index {int(bad.reshape(-1)[0])} is out of bounds for dimension {dim} with size {n}")
            idx.append(ind.astype(np.int64, copy=False))
            dim += 1
        else:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    if dim > self.ndim:
        raise IndexError(f"too many indices for tensor of dimension {self.ndim} (got {len(indices)})")
    return tuple(idx)


@op("aten::index.Tensor(Tensor self, Tensor?[] indices) -> Tensor")
def index(self, indices):
    return np.array(self[index_tuple(self, indices)])


@derivative("aten::index.Tensor")
def index_grad(e, grads, inputs, outputs):
    self, indices = inputs
    zeros = e.op("aten::new_zeros", grads[0], e.size(self))
    return [e.op("aten::index_put", zeros, indices, grads[0], True), None]


def _index_put(self, indices, values, accumulate):
    """Write (or accumulate) `values` into `self` at `indices`, in place."""
    if values.dtype != self.dtype:
        raise RuntimeError("Index put requires the source and destination dtypes match, got "
                           f"{scalar_type_name(self.dtype)} for the destination and "
                           f"{scalar_type_name(values.dtype)} for the source.")
    idx = index_tuple(self, indices)
    target = self[idx].shape
    try:
        v = np.broadcast_to(values, target)
    except ValueError:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(values.shape)} cannot be broadcast to "
                           f"indexing result of shape {list(target)}") from None
    if accumulate:
        np.add.at(self, idx, v)
    else:
        self[idx] = v
    return self


@op("aten::index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor(a!)")
def index_put_(self, indices, values, accumulate=False):
    return _index_put(self, indices, values, accumulate)


@op("aten::_index_put_impl_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool accumulate=False, bool unsafe=False) -> Tensor(a!)")
def _index_put_impl_(self, indices, values, accumulate=False, unsafe=False):
    return _index_put(self, indices, values, accumulate)


@op("aten::index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor")
def index_put(self, indices, values, accumulate=False):
    return _index_put(self.copy(), indices, values, accumulate)


@derivative("aten::index_put", "aten::index_put_", "aten::_index_put_impl_")
def index_put_grad(e, grads, inputs, outputs):
    g = grads[0]
    self, indices, values, accumulate = inputs[:4]
    g_self = g if accumulate else e.op("aten::index_put", g, indices, e.zeros_like(values), False)
    g_values = e.sum_to(e.op("aten::index", g, indices), e.size(values))
    return [g_self, None, g_values] + [None] * (len(inputs) - 3)


# ---- index_select / index_add

def _check_index_vector(name, index):
    if index.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector")
    if index.dtype.kind not in "iu":
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")
    return index.reshape(-1)


@op("aten::index_select(Tensor self, int dim, Tensor index) -> Tensor")
def index_select(self, dim, index):
    idx = _check_index_vector("index_select", index)
    a = self.reshape(1) if self.ndim == 0 else self
    d = normalize_dim(dim, a.ndim)
    if idx.size and (idx.min() < 0 or idx.max() >= a.shape[d]):
        raise IndexError("index out of range in self")
    out = np.take(a, idx, axis=d)
    return out.reshape(index.shape) if self.ndim == 0 else out


@op("aten::index_select_backward(Tensor grad, SymInt[] self_sizes, int dim, Tensor index) -> Tensor")
def index_select_backward(grad, self_sizes, dim, index):
    out = np.zeros(tuple(self_sizes), dtype=grad.dtype)
    if not self_sizes:
        out[...] = grad.sum()
        return out
    d = normalize_dim(dim, len(self_sizes))
    np.add.at(np.moveaxis(out, d, 0), index.reshape(-1), np.moveaxis(grad, d, 0))
    return out


@derivative("aten::index_select")
def index_select_grad(e, grads, inputs, outputs):
    self, dim, index = inputs
    return [e.op("aten::index_select_backward", grads[0], e.size(self), dim, index), None, None]


@op("aten::index_add(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor")
def index_add(self, dim, index, source, alpha=1):
    idx = _check_index_vector("index_add", index)
    out = self.copy()
    if self.ndim == 0:
        out[...] += (source * alpha).sum().astype(self.dtype)
        return out
    d = normalize_dim(dim, self.ndim)
    if idx.size and (idx.min() < 0 or idx.max() >= self.shape[d]):
        raise IndexError("index out of range in self")
    src = source if alpha == 1 else source * alpha
    np.add.at(np.moveaxis(out, d, 0), idx, np.moveaxis(src.astype(self.dtype, copy=False), d, 0))
    return out


@derivative("aten::index_add")
def index_add_grad(e, grads, inputs, outputs):
    self, dim, index, source, alpha = inputs
    g_src = e.op("aten::index_select", grads[0], dim, index)
    if alpha != 1:
        g_src = e.op("aten::mul", g_src, alpha)
    return [grads[0], None, None, e.op("aten::reshape", g_src, e.size(source)), None]


# ---- gather / scatter

def _gather_check(name, self, d, index):
    if max(index.ndim, 1) != max(self.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    if index.dtype != np.int64:
        raise RuntimeError(f"{name}(): Expected dtype int64 for index")
    for k in range(index.ndim):
        if k != d and index.shape[k] > self.shape[k]:
            raise RuntimeError(f"Size does not match at dimension {k} expected index {list(index.shape)} to be "
                               f"no larger than self {list(self.shape)} apart from dimension {d}")
    n = self.shape[d] if self.ndim else 1
    bad = index[(index < 0) | (index >= n)]
    if bad.size:
        raise RuntimeError(f"index {int(bad.reshape(-1)[0])} is out of bounds for dimension {d} with size {n}")


def _scatter_index(index, d):
    """The numpy index addressing `index`'s positions with dim d replaced by index values."""
    return tuple(index if k == d else
                 np.arange(index.shape[k]).reshape([-1 if j == k else 1 for j in range(index.ndim)])
                 for k in range(index.ndim))


@op("aten::gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor")
def gather(self, dim, index, sparse_grad=False):
    d = normalize_dim(dim, self.ndim)
    _gather_check("gather", self, d, index)
    if self.ndim == 0:
        return np.broadcast_to(self, index.shape).copy()
    return np.array(self[_scatter_index(index, d)])


@op("aten::gather_backward(Tensor grad, Tensor self, int dim, Tensor index, bool sparse_grad) -> Tensor")
def gather_backward(grad, self, dim, index, sparse_grad):
    return scatter_add(np.zeros(self.shape, dtype=grad.dtype), dim, index, grad)


@derivative("aten::gather")
def gather_grad(e, grads, inputs, outputs):
    self, dim, index, sparse = inputs
    return [e.op("aten::gather_backward", grads[0], self, dim, index, sparse), None, None, None]


def _scatter_prepare(self, dim, index, src):
    d = normalize_dim(dim, self.ndim)
    _gather_check("scatter", self, d, index)
    if isinstance(src, np.ndarray) and src.ndim:
        for k in range(index.ndim):
            if index.shape[k] > src.shape[k]:
                raise RuntimeError(f"Expected index {list(index.shape)} to be smaller than self {list(self.shape)} "
                                   f"apart from dimension {d} and to be smaller size than src {list(src.shape)}")
        src = src[tuple(slice(0, s) for s in index.shape)]
    out = self.copy()
    if self.ndim == 0:
        return out, (), src
    return out, _scatter_index(index, d), src


@op("aten::scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor",
    "aten::scatter.value(Tensor self, int dim, Tensor index, Scalar value) -> Tensor")
def scatter(self, dim, index, src):
    out, idx, src = _scatter_prepare(self, dim, index, src)
    if index.size:
        out[idx] = src
    return out


@op("aten::scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor")
def scatter_add(self, dim, index, src):
    out, idx, src = _scatter_prepare(self, dim, index, src)
    if index.size:
        np.add.at(out, idx, src.astype(out.dtype, copy=False))
    return out


@derivative("aten::scatter.src", "aten::scatter.value")
def scatter_grad(e, grads, inputs, outputs):
    self, dim, index, src = inputs
    g_self = e.op("aten::scatter", grads[0], dim, index, 0)
    g_src = e.op("aten::gather", grads[0], dim, index, False) if e.is_tensor(src) else None
    return [g_self, None, None, g_src]


@derivative("aten::scatter_add")
def scatter_add_grad(e, grads, inputs, outputs):
    self, dim, index, src = inputs
    return [grads[0], None, None, e.op("aten::gather", grads[0], dim, index, False)]


# ---- masks

def _check_mask(name, mask):
    if mask.dtype not in (np.bool_, np.uint8):
        raise RuntimeError(f"{name}: expected BoolTensor for mask")
    return mask.astype(bool, copy=False)


@op("aten::masked_select(Tensor self, Tensor mask) -> Tensor")
def masked_select(self, mask):
    m = _check_mask("masked_select", mask)
    shape = broadcast_shapes(self.shape, m.shape)
    return np.array(np.broadcast_to(self, shape)[np.broadcast_to(m, shape)])


@op("aten::masked_select_backward(Tensor grad, Tensor input, Tensor mask) -> Tensor")
def masked_select_backward(grad, input, mask):
    shape = broadcast_shapes(input.shape, mask.shape)
    out = np.zeros(shape, dtype=grad.dtype)
    out[np.broadcast_to(mask.astype(bool), shape)] = grad
    return out


@derivative("aten::masked_select")
def masked_select_grad(e, grads, inputs, outputs):
    self, mask = inputs
    return [e.sum_to(e.op("aten::masked_select_backward", grads[0], self, mask), e.size(self)), None]


@op("aten::masked_scatter(Tensor self, Tensor mask, Tensor source) -> Tensor")
def masked_scatter(self, mask, source):
    m = _check_mask("masked_scatter_", mask)
    shape = broadcast_shapes(self.shape, m.shape)
    out = np.array(np.broadcast_to(self, shape))
    mb = np.broadcast_to(m, shape)
    count = int(mb.sum())
    if source.size < count:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    out[mb] = source.reshape(-1)[:count]
    return out


@op("aten::masked_scatter_backward(Tensor grad_output, Tensor mask, SymInt[] sizes) -> Tensor")
def masked_scatter_backward(grad_output, mask, sizes):
    sel = grad_output[np.broadcast_to(mask.astype(bool), grad_output.shape)]
    n = int(np.prod(sizes))
    flat = np.zeros(n, dtype=grad_output.dtype)
    flat[:sel.size] = sel
    return flat.reshape(tuple(sizes))


@derivative("aten::masked_scatter")
def masked_scatter_grad(e, grads, inputs, outputs):
    self, mask, source = inputs
    g_self = e.sum_to(e.op("aten::masked_fill", grads[0], mask, 0), e.size(self))
    return [g_self, None, e.op("aten::masked_scatter_backward", grads[0], mask, e.size(source))]


@op("aten::nonzero(Tensor self) -> Tensor")
def nonzero(self):
    return np.argwhere(self).astype(np.int64)


@op("aten::take_along_dim(Tensor self, Tensor indices, int? dim=None) -> Tensor")
def take_along_dim(self, indices, dim=None):
    if indices.dtype.kind not in "iu":
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{scalar_type_name(indices.dtype)}")
    if dim is None:
        return gather(self.reshape(-1), 0, indices.reshape(-1).astype(np.int64))
    self_b, idx_b = _take_along_broadcast(self.shape, indices.shape, dim)
    return gather(expand(self, self_b), dim, expand(indices.astype(np.int64), idx_b))


def _take_along_broadcast(self_shape, idx_shape, dim):
    d = normalize_dim(dim, len(self_shape))
    sizes = list(self_shape)
    sizes[d] = idx_shape[d] if len(idx_shape) > d else 1
    bshape = list(broadcast_shapes(sizes, idx_shape))
    self_sizes = list(bshape)
    self_sizes[d] = self_shape[d]
    return self_sizes, bshape


@derivative("aten::take_along_dim")
def take_along_dim_grad(e, grads, inputs, outputs):
    self, indices, dim = inputs
    if dim is None:
        flat_self = e.op("aten::reshape", self, [-1])
        g = e.op("aten::gather_backward", e.op("aten::reshape", grads[0], [-1]), flat_self, 0,
                 e.op("aten::reshape", indices, [-1]), False)
        return [e.op("aten::reshape", g, e.size(self)), None, None]
    self_sizes, bshape = _take_along_broadcast(e.shape(self), e.shape(indices), dim)
    g = e.op("aten::gather_backward", grads[0], e.op("aten::expand", self, self_sizes), dim,
             e.op("aten::expand", indices, bshape), False)
    return [e.sum_to(g, e.size(self)), None, None]


# ---- copy_

@op("aten::copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)",
    "aten::copy_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)")
def copy_(self, src, non_blocking=False):
    broadcast_shapes(self.shape, src.shape)
    self[...] = expand(src, self.shape)
    return self


@op("aten::copy_.int(Tensor(a!) self, int other) -> Tensor(a!)",
    "aten::copy_.float(Tensor(a!) self, float other) -> Tensor(a!)")
def copy_scalar_(self, other):
    self[...] = other
    return self


@derivative("aten::copy_", "aten::copy_.Tensor", "aten::copy_.int", "aten::copy_.float")
def copy_grad(e, grads, inputs, outputs):
    src = inputs[1]
    g_src = e.cast_like(e.sum_to(grads[0], e.size(src)), src) if e.is_tensor(src) else None
    return [e.zeros_like(grads[0]), g_src] + [None] * (len(inputs) - 2)
