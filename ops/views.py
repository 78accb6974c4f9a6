"""Shapes and views: view/reshape/squeeze/expand/transpose/permute/select/slice/diagonal and
friends, returning numpy views exactly where PyTorch returns views, plus the size queries and
the sum-to-size helpers of PyTorch's autodiff graphs.
"""

from __future__ import annotations

import math

import numpy as np

from ._common import normalize_dim
from .registry import derivative, op, parse_schema
from .dtypes import scalar_type_name
from .types import INT, ListType

INT_MAX = 9223372036854775807


def exact_op(*schema_texts: str, nondeterministic: bool = False):
    """`op` for schema texts the registry's parser does not read yet (`Tensor(a -> *) self`,
    `-> Tensor(b|a)`): registered with the alias annotation reduced to `(a)` until it does."""
    def fix(text: str) -> str:
        try:
            s = parse_schema(text)
            if all("(" not in a.type for a in s.arguments + s.returns):
                return text
        except ValueError:
            pass
        return text.replace("(a -> *)", "(a)").replace("(b|a)", "(a)")
    return op(*[fix(t) for t in schema_texts], nondeterministic=nondeterministic)


# ---- helpers shared with other families

def infer_size(shape, numel: int) -> tuple:
    """`shape` with a -1 entry inferred, as `view`/`reshape` do."""
    shape = [int(s) for s in shape]
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = math.prod(s for s in shape if s != -1)
    if neg:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape[neg[0]] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


def sum_to_shape(x: np.ndarray, shape) -> np.ndarray:
    """Sum `x` down to `shape` (which must broadcast to x's shape)."""
    shape = tuple(shape)
    lead = x.ndim - len(shape)
    ok = lead >= 0 and all(s in (1, xs) for s, xs in zip(shape, x.shape[lead:]))
    if not ok:
        raise RuntimeError(f"size {{{list(shape)}}} is not expandable to size {{{list(x.shape)}}}.")
    if lead:
        x = x.sum(axis=tuple(range(lead)))
    axes = tuple(i for i, s in enumerate(shape) if s == 1 and x.shape[i] != 1)
    if axes:
        x = x.sum(axis=axes, keepdims=True)
    return np.asarray(x)


def _dim_slice(ndim: int, dim: int, index) -> tuple:
    return (slice(None),) * dim + (index, Ellipsis)


# ---- view / reshape family

@op("aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)")
def view(self, size):
    shape = infer_size(size, self.size)
    try:
        return np.reshape(self, shape, copy=False)
    except ValueError:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one "
                           "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")


@op("aten::view_as(Tensor(a) self, Tensor other) -> Tensor(a)")
def view_as(self, other):
    return view(self, other.shape)


@op("aten::reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)")
def reshape(self, shape):
    return np.reshape(self, infer_size(shape, self.size))


@op("aten::reshape_as(Tensor(a) self, Tensor other) -> Tensor(a)")
def reshape_as(self, other):
    return reshape(self, other.shape)


@op("aten::_unsafe_view(Tensor self, SymInt[] size) -> Tensor")
def _unsafe_view(self, size):
    return reshape(self, size)


@op("aten::flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)")
def flatten(self, start_dim=0, end_dim=-1):
    if self.ndim == 0:
        normalize_dim(start_dim, 0), normalize_dim(end_dim, 0)
        return self.reshape(1)
    s, e = normalize_dim(start_dim, self.ndim), normalize_dim(end_dim, self.ndim)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shape = self.shape[:s] + (math.prod(self.shape[s:e + 1]),) + self.shape[e + 1:]
    return np.reshape(self, shape)


@op("aten::unflatten.int(Tensor(a) self, int dim, SymInt[] sizes) -> Tensor(a)")
def unflatten(self, dim, sizes):
    d = normalize_dim(dim, self.ndim)
    sizes = infer_size(sizes, self.shape[d]) if self.ndim else tuple(sizes)
    return view(self, self.shape[:d] + sizes + self.shape[d + 1:])


@op("aten::squeeze(Tensor(a) self) -> Tensor(a)")
def squeeze(self):
    return np.reshape(self, tuple(s for s in self.shape if s != 1))


@op("aten::squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)",
    "aten::squeeze.dims(Tensor(a) self, int[] dim) -> Tensor(a)")
def squeeze_dims(self, dim):
    dims = {normalize_dim(d, self.ndim) for d in (dim if isinstance(dim, (list, tuple)) else [dim])}
    return np.reshape(self, tuple(s for i, s in enumerate(self.shape) if not (i in dims and s == 1)))


@op("aten::unsqueeze(Tensor(a) self, int dim) -> Tensor(a)")
def unsqueeze(self, dim):
    return np.expand_dims(self, normalize_dim(dim, self.ndim + 1))


@derivative("aten::view", "aten::view_as", "aten::reshape", "aten::reshape_as", "aten::_unsafe_view",
            "aten::flatten.using_ints", "aten::unflatten.int", "aten::squeeze", "aten::squeeze.dim",
            "aten::squeeze.dims", "aten::unsqueeze")
def reshape_grad(e, grads, inputs, outputs):
    if e.symbolic:
        spelled = _spelled_reshape_grad(e, grads[0], inputs)
        if spelled is not None:
            return [spelled] + [None] * (len(inputs) - 1)
    return [e.op("aten::reshape", grads[0], e.size(inputs[0]))] + [None] * (len(inputs) - 1)


def _spelled_reshape_grad(e, g, inputs):
    """symbolic_script's view / reshape (`grad.reshape(self.size())`, the size taken in the
    forward before the result), unsqueeze (`grad.squeeze(dim)`) and squeeze (its `AD_unsqueeze_to`
    helpers); None for the ops it has no formula for."""
    kind, x = e.node.kind, inputs[0]
    if kind in ("aten::view", "aten::reshape"):
        with e.forward(before_result=True):
            size = e.op("aten::size", x)
        return e.op("aten::reshape", g, size)
    if kind == "aten::unsqueeze":
        return e.op("aten::squeeze", g, inputs[1])
    if kind == "aten::squeeze" and len(inputs) in (1, 2) and not isinstance(inputs[-1], list):
        with e.forward(before_result=True):
            size = e.op("aten::size", x)
        if len(inputs) == 1:
            return e.call("AD_unsqueeze_to_0", g, size)
        return e.call("AD_unsqueeze_to_1", g, inputs[1], size)
    return None


# ---- expand / broadcast

@op("aten::expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)")
def expand(self, size, implicit=False):
    size = list(size)
    if len(size) < self.ndim:
        raise RuntimeError(f"expand(torch.{scalar_type_name(self.dtype)}Tensor{{{list(self.shape)}}}, size={size}): "
                           "the number of sizes "
                           f"provided ({len(size)}) must be greater or equal to the number of dimensions "
                           f"in the tensor ({self.ndim})")
    lead = len(size) - self.ndim
    target = []
    for i, s in enumerate(size):
        if i < lead:
            if s < 0:
                raise RuntimeError(f"The expanded size of the tensor ({s}) isn't allowed in a leading, "
                                   f"non-existing dimension {i}")
            target.append(s)
            continue
        cur = self.shape[i - lead]
        if s == -1:
            s = cur
        if cur != s and cur != 1:
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing size ({cur}) at "
                               f"non-singleton dimension {i}.  Target sizes: {list(size)}.  Tensor sizes: "
                               f"{list(self.shape)}")
        target.append(s)
    return np.broadcast_to(self, tuple(target))


@op("aten::expand_as(Tensor(a) self, Tensor other) -> Tensor(a)")
def expand_as(self, other):
    return expand(self, other.shape)


@derivative("aten::expand", "aten::expand_as")
def expand_grad(e, grads, inputs, outputs):
    if e.symbolic:  # symbolic_script: grad._grad_sum_to_size(_size_if_not_equal(self.size(), result.size()))
        return [e.sum_to(grads[0], inputs[0])] + [None] * (len(inputs) - 1)
    return [e.sum_to(grads[0], e.size(inputs[0]))] + [None] * (len(inputs) - 1)


def broadcast_shapes(*shapes) -> tuple:
    """The broadcast of `shapes`, with PyTorch's error message."""
    out: list = []
    for shape in shapes:
        shape = list(shape)
        n = max(len(out), len(shape))
        a, b = [1] * (n - len(out)) + out, [1] * (n - len(shape)) + shape
        for i in range(n):
            if a[i] != b[i] and a[i] != 1 and b[i] != 1:
                raise RuntimeError(f"The size of tensor a ({a[i]}) must match the size of tensor b ({b[i]}) "
                                   f"at non-singleton dimension {i}")
        out = [y if x == 1 else x for x, y in zip(a, b)]
    return tuple(out)


@op("aten::broadcast_tensors(Tensor[] tensors) -> Tensor[]")
def broadcast_tensors(tensors):
    shape = broadcast_shapes(*[t.shape for t in tensors])
    return [np.broadcast_to(t, shape) for t in tensors]


@derivative("aten::broadcast_tensors")
def broadcast_tensors_grad(e, grads, inputs, outputs):
    return [[None if g is None else e.sum_to(g, e.size(t)) for g, t in zip(grads, inputs[0])]]


@op("aten::sum_to_size(Tensor self, SymInt[] size) -> Tensor")
def sum_to_size(self, size):
    return sum_to_shape(self, size)


@op("aten::_grad_sum_to_size(Tensor(a) self, int[]? size) -> Tensor(a)")
def _grad_sum_to_size(self, size):
    return self if size is None else sum_to_shape(self, size)


@derivative("aten::sum_to_size", "aten::_grad_sum_to_size")
def sum_to_size_grad(e, grads, inputs, outputs):
    if e.symbolic and e.node.kind == "aten::_grad_sum_to_size":
        # symbolic_script: `self_size = _size_if_not_equal(self.size(), result.size())` in the
        # forward; the backward expands to it unless it is None
        self_size = e.size_if_not_equal(e.node.inputs[0])
        if self_size is not None:
            g = grads[0]
            return [e.if_(e.op("aten::__is__", self_size, None), lambda: g,
                          lambda: e.op("aten::expand", g, e.unchecked_cast(self_size, ListType(INT)), False)),
                    None]
    if inputs[1] is None:
        return [grads[0], None]
    return [e.op("aten::expand", grads[0], e.size(inputs[0])), None]


@op("aten::_size_if_not_equal(int[] self_size, int[] other_size) -> int[]?")
def _size_if_not_equal(self_size, other_size):
    return None if list(self_size) == list(other_size) else list(self_size)


# ---- permutations

@op("aten::transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)")
def transpose(self, dim0, dim1):
    return np.swapaxes(self, normalize_dim(dim0, self.ndim), normalize_dim(dim1, self.ndim)) if self.ndim else self


@derivative("aten::transpose.int")
def transpose_grad(e, grads, inputs, outputs):
    return [e.op("aten::transpose", grads[0], inputs[1], inputs[2]), None, None]


@op("aten::t(Tensor(a) self) -> Tensor(a)")
def t(self):
    if self.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
    return self.T


@derivative("aten::t")
def t_grad(e, grads, inputs, outputs):
    return [e.op("aten::t", grads[0])]


@op("aten::numpy_T(Tensor(a) self) -> Tensor(a)")
def numpy_T(self):
    return self.T


@derivative("aten::numpy_T")
def numpy_T_grad(e, grads, inputs, outputs):
    return [e.op("aten::numpy_T", grads[0])]


@op("aten::mT(Tensor(a) self) -> Tensor(a)")
def mT(self):
    if self.ndim < 2:
        raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. Got {self.ndim}-D tensor.")
    return np.swapaxes(self, -1, -2)


@derivative("aten::mT")
def mT_grad(e, grads, inputs, outputs):
    return [e.op("aten::transpose", grads[0], -1, -2)]


@op("aten::permute(Tensor(a) self, int[] dims) -> Tensor(a)")
def permute(self, dims):
    if len(dims) != self.ndim:
        raise RuntimeError("permute(sparse_coo): number of dimensions in the tensor input does not match the "
                           "length of the desired ordering of dimensions i.e. input.dim() = "
                           f"{self.ndim} is not equal to len(dims) = {len(dims)}")
    perm = [normalize_dim(d, self.ndim) for d in dims]
    if len(set(perm)) != len(perm):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return np.transpose(self, perm) if self.ndim else self


@derivative("aten::permute")
def permute_grad(e, grads, inputs, outputs):
    if e.symbolic:  # symbolic_script: AD_permute_backward(grad, dims), the inverse at run time
        return [e.call("AD_permute_backward", grads[0], inputs[1]), None]
    n = len(e.shape(inputs[0]))
    perm = [d % max(n, 1) for d in inputs[1]]
    inv = [0] * n
    for i, p in enumerate(perm):
        inv[p] = i
    return [e.op("aten::permute", grads[0], inv), None]


@op("aten::movedim.int(Tensor(a) self, int source, int destination) -> Tensor(a)",
    "aten::movedim.intlist(Tensor(a) self, int[] source, int[] destination) -> Tensor(a)")
def movedim(self, source, destination):
    if not self.ndim:
        return self
    src = [normalize_dim(d, self.ndim) for d in (source if isinstance(source, list) else [source])]
    dst = [normalize_dim(d, self.ndim) for d in (destination if isinstance(destination, list) else [destination])]
    return np.moveaxis(self, src, dst)


@derivative("aten::movedim.int", "aten::movedim.intlist")
def movedim_grad(e, grads, inputs, outputs):
    return [e.op("aten::movedim", grads[0], inputs[2], inputs[1]), None, None]


# ---- narrowing views

@op("aten::select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)")
def select(self, dim, index):
    if self.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = normalize_dim(dim, self.ndim)
    n = self.shape[d]
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(self.shape)} "
                         f"at dimension {d}")
    return self[_dim_slice(self.ndim, d, index % n)]


@op("aten::select_backward(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt index) -> Tensor")
def select_backward(grad_output, input_sizes, dim, index):
    out = np.zeros(tuple(input_sizes), dtype=grad_output.dtype)
    select(out, dim, index)[...] = grad_output
    return out


@derivative("aten::select.int")
def select_grad(e, grads, inputs, outputs):
    return [e.op("aten::select_backward", grads[0], e.size(inputs[0]), inputs[1], inputs[2]), None, None]


@op("aten::narrow(Tensor(a) self, int dim, SymInt start, SymInt length) -> Tensor(a)")
def narrow(self, dim, start, length):
    d = normalize_dim(dim, self.ndim)
    n = self.shape[d]
    if not -n <= start <= n:
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but got {start})")
    start = start % n if start < 0 else start
    if length < 0 or start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return self[_dim_slice(self.ndim, d, slice(start, start + length))]


@derivative("aten::narrow")
def narrow_grad(e, grads, inputs, outputs):
    self, dim, start, length = inputs
    shape = e.shape(self)
    n = shape[dim % len(shape)]
    start = start + n if start < 0 else start
    return [e.op("aten::slice_backward", grads[0], list(shape), dim, start, start + length, 1), None, None, None]


@op("aten::slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor(a)")
def slice_(self, dim=0, start=None, end=None, step=1):
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    if self.ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    d = normalize_dim(dim, self.ndim)
    return self[_dim_slice(self.ndim, d, slice(start, end, step))]


@op("aten::slice_backward(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt start, SymInt end, SymInt step) -> Tensor")
def slice_backward(grad_output, input_sizes, dim, start, end, step):
    out = np.zeros(tuple(input_sizes), dtype=grad_output.dtype)
    slice_(out, dim, start, end, step)[...] = grad_output
    return out


@derivative("aten::slice.Tensor")
def slice_grad(e, grads, inputs, outputs):
    self, dim, start, end, step = inputs
    start = 0 if start is None else start
    end = INT_MAX if end is None else end
    return [e.op("aten::slice_backward", grads[0], e.size(self), dim, start, end, step), None, None, None, None]


@op("aten::diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)")
def diagonal(self, offset=0, dim1=0, dim2=1):
    d1, d2 = normalize_dim(dim1, self.ndim), normalize_dim(dim2, self.ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    a = np.moveaxis(self, [d1, d2], [-2, -1])
    n1, n2 = a.shape[-2], a.shape[-1]
    if offset >= 0:
        length = max(0, min(n1, n2 - offset))
        a = a[..., :, min(offset, n2):]
    else:
        length = max(0, min(n1 + offset, n2))
        a = a[..., min(-offset, n1):, :]
    strides = a.strides[:-2] + (a.strides[-2] + a.strides[-1],)
    return np.lib.stride_tricks.as_strided(a, a.shape[:-2] + (length,), strides,
                                           writeable=a.flags.writeable)


@op("aten::diagonal_backward(Tensor grad_output, SymInt[] input_sizes, int offset, int dim1, int dim2) -> Tensor")
def diagonal_backward(grad_output, input_sizes, offset, dim1, dim2):
    out = np.zeros(tuple(input_sizes), dtype=grad_output.dtype)
    diagonal(out, offset, dim1, dim2)[...] = grad_output
    return out


@derivative("aten::diagonal")
def diagonal_grad(e, grads, inputs, outputs):
    self, offset, dim1, dim2 = inputs
    return [e.op("aten::diagonal_backward", grads[0], e.size(self), offset, dim1, dim2), None, None, None]


# ---- copies and identity-like ops

@op("aten::contiguous(Tensor(a) self, *, MemoryFormat memory_format=0) -> Tensor(a)")
def contiguous(self, memory_format=0):
    return self if self.flags.c_contiguous else np.ascontiguousarray(self)


@op("aten::clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor")
def clone(self, memory_format=None):
    return np.array(self, copy=True, order="C" if memory_format == 0 else "K")


@derivative("aten::contiguous", "aten::clone")
def identity_grad(e, grads, inputs, outputs):
    return [grads[0], None]


@op("aten::detach(Tensor(a) self) -> Tensor(a)")
def detach(self):
    return self


@op("aten::repeat(Tensor self, SymInt[] repeats) -> Tensor")
def repeat(self, repeats):
    repeats = list(repeats)
    if len(repeats) < self.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of "
                           "dimensions of tensor")
    a = self.reshape((1,) * (len(repeats) - self.ndim) + self.shape)
    return np.tile(a, repeats)


@op("aten::tile(Tensor self, SymInt[] dims) -> Tensor")
def tile(self, dims):
    dims = list(dims)
    return repeat(self, [1] * (self.ndim - len(dims)) + dims)


@derivative("aten::repeat", "aten::tile")
def repeat_grad(e, grads, inputs, outputs):
    self, reps = inputs
    shape = e.shape(self)
    reps = list(reps)
    if len(reps) < len(shape):  # tile pads its dims on the left
        reps = [1] * (len(shape) - len(reps)) + reps
    if not reps:
        return [grads[0], None]
    padded = [1] * (len(reps) - len(shape)) + list(shape)
    split = []
    for r, s in zip(reps, padded):
        split += [r, s]
    g = e.op("aten::reshape", grads[0], split)
    g = e.op("aten::sum", g, list(range(0, 2 * len(reps), 2)), False, None)
    return [e.op("aten::reshape", g, list(shape)), None]


@op("aten::flip(Tensor self, int[] dims) -> Tensor")
def flip(self, dims):
    axes = [normalize_dim(d, self.ndim) for d in dims]
    if len(set(axes)) != len(axes):
        raise RuntimeError(f"dims has duplicates, original flip dims size={len(dims)}, but unique flip dims size={len(set(axes))}")
    return np.flip(self, axes).copy() if self.ndim else self.copy()


@derivative("aten::flip")
def flip_grad(e, grads, inputs, outputs):
    return [e.op("aten::flip", grads[0], inputs[1]), None]


@op("aten::roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor")
def roll(self, shifts, dims=[]):
    shifts = shifts if isinstance(shifts, list) else [shifts]
    dims = dims if isinstance(dims, list) else [dims]
    if not dims:
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
        return np.roll(self.reshape(-1), shifts[0]).reshape(self.shape)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    return np.roll(self, shifts, [normalize_dim(d, self.ndim) for d in dims])


@derivative("aten::roll")
def roll_grad(e, grads, inputs, outputs):
    shifts = inputs[1] if isinstance(inputs[1], list) else [inputs[1]]
    return [e.op("aten::roll", grads[0], [-s for s in shifts], inputs[2]), None, None]


@op("aten::tril(Tensor self, SymInt diagonal=0) -> Tensor")
def tril(self, diagonal=0):
    if self.ndim < 2:
        raise RuntimeError("tril: input tensor must have at least 2 dimensions")
    return np.tril(self, diagonal)


@op("aten::triu(Tensor self, SymInt diagonal=0) -> Tensor")
def triu(self, diagonal=0):
    if self.ndim < 2:
        raise RuntimeError("triu: input tensor must have at least 2 dimensions")
    return np.triu(self, diagonal)


@derivative("aten::tril")
def tril_grad(e, grads, inputs, outputs):
    return [e.op("aten::tril", grads[0], inputs[1]), None]


@derivative("aten::triu")
def triu_grad(e, grads, inputs, outputs):
    return [e.op("aten::triu", grads[0], inputs[1]), None]


# ---- size queries

@op("aten::size.int(Tensor self, int dim) -> int")
def size_int(self, dim):
    if self.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return int(self.shape[normalize_dim(dim, self.ndim)])


@op("aten::size(Tensor self) -> int[]")
def size(self):
    return [int(s) for s in self.shape]


@op("aten::dim(Tensor self) -> int")
def dim(self):
    return int(self.ndim)


@op("aten::numel(Tensor self) -> int")
def numel(self):
    return int(self.size)
