"""Conversions and tensor properties: the `aten::to` overloads (returning the very same array
when nothing changes and copy=False, as PyTorch returns `self`), type_as, _to_copy, item,
is_floating_point/is_complex/is_contiguous, element_size and stride (in elements)."""

from __future__ import annotations

import numpy as np

from .dtypes import dtype_from_code
from .registry import derivative, op
from .views import exact_op


def convert(self, dtype, copy=False, memory_format=None):
    """`self` as `dtype` (None = unchanged): the same array unless a change or copy is asked."""
    dt = self.dtype if dtype is None else np.dtype(dtype)
    order = "C" if memory_format == 0 else "K"
    if dt == self.dtype and not copy and (order == "K" or self.flags.c_contiguous):
        return self
    return np.array(self, dtype=dt, copy=True, order=order)


def _code(dtype):
    return None if dtype is None else dtype_from_code(dtype)


@op("aten::to.dtype(Tensor(a) self, ScalarType dtype, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)")
def to_dtype(self, dtype, non_blocking=False, copy=False, memory_format=None):
    return convert(self, _code(dtype), copy, memory_format)


@op("aten::to.device(Tensor(a) self, Device device, ScalarType dtype, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)")
def to_device(self, device, dtype, non_blocking=False, copy=False, memory_format=None):
    return convert(self, _code(dtype), copy, memory_format)


@op("aten::to.other(Tensor(a) self, Tensor other, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)")
def to_other(self, other, non_blocking=False, copy=False, memory_format=None):
    return convert(self, other.dtype, copy, memory_format)


@op("aten::to.dtype_layout(Tensor(a) self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)")
def to_dtype_layout(self, dtype=None, layout=None, device=None, pin_memory=None, non_blocking=False,
                    copy=False, memory_format=None):
    return convert(self, _code(dtype), copy, memory_format)


@exact_op("aten::to.prim_Device(Tensor(a) self, Device? device, int? dtype=None, bool non_blocking=False, bool copy=False) -> Tensor(b|a)")
def to_prim_device(self, device, dtype=None, non_blocking=False, copy=False):
    return convert(self, _code(dtype), copy)


@exact_op("aten::to.prim_dtype(Tensor(a) self, int? dtype=None, bool non_blocking=False, bool copy=False) -> Tensor(b|a)")
def to_prim_dtype(self, dtype=None, non_blocking=False, copy=False):
    return convert(self, _code(dtype), copy)


@exact_op("aten::to.prim_other(Tensor(a) self, bool non_blocking=False, bool copy=False) -> Tensor(b|a)")
def to_prim_other(self, non_blocking=False, copy=False):
    return convert(self, None, copy)


@op("aten::type_as(Tensor self, Tensor other) -> Tensor")
def type_as(self, other):
    return convert(self, other.dtype)


@op("aten::_to_copy(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, MemoryFormat? memory_format=None) -> Tensor")
def _to_copy(self, dtype=None, layout=None, device=None, pin_memory=None, non_blocking=False, memory_format=None):
    return convert(self, _code(dtype), True, memory_format)


@derivative("aten::to.dtype", "aten::to.device", "aten::to.other", "aten::to.dtype_layout", "aten::to.prim_Device",
            "aten::to.prim_dtype", "aten::to.prim_other", "aten::type_as", "aten::_to_copy")
def to_grad(e, grads, inputs, outputs):
    """The gradient goes back in the input's dtype."""
    return [e.cast_like(grads[0], inputs[0])] + [None] * (len(inputs) - 1)


@op("aten::item(Tensor self) -> Scalar")
def item(self):
    if self.size != 1:
        raise RuntimeError(f"a Tensor with {self.size} elements cannot be converted to Scalar")
    return self.reshape(-1)[0].item()


@op("aten::is_floating_point(Tensor self) -> bool")
def is_floating_point(self):
    return self.dtype.kind == "f"


@op("aten::is_complex(Tensor self) -> bool")
def is_complex(self):
    return self.dtype.kind == "c"


@op("aten::is_nonzero(Tensor self) -> bool")
def is_nonzero(self):
    if self.size == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if self.size > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(self.reshape(-1)[0] != 0)


@op("aten::is_same_size(Tensor self, Tensor other) -> bool")
def is_same_size(self, other):
    return tuple(self.shape) == tuple(other.shape)


@op("aten::is_signed(Tensor self) -> bool")
def is_signed(self):
    return self.dtype.kind in "ifc" and self.dtype != np.uint8


@op("aten::is_inference(Tensor self) -> bool", "aten::is_conj(Tensor self) -> bool",
    "aten::is_neg(Tensor self) -> bool")
def never_flagged(self):
    """irjit has no inference tensors and no lazy conjugate/negative views."""
    return False


def _contiguous_strides(shape) -> list[int]:
    out, acc = [], 1
    for s in reversed(shape):
        out.append(acc)
        acc *= max(s, 1)
    return out[::-1]


def strides_of(a: np.ndarray) -> list[int]:
    """PyTorch's strides (in elements) for the array's layout."""
    if a.flags.c_contiguous and a.size > 0:
        return _contiguous_strides(a.shape)
    if a.size == 0:
        return _contiguous_strides(a.shape)
    return [s // a.itemsize for s in a.strides]


@op("aten::is_contiguous(Tensor self) -> bool")
def is_contiguous(self):
    return bool(self.flags.c_contiguous)


@op("aten::is_contiguous.memory_format(Tensor self, MemoryFormat memory_format) -> bool")
def is_contiguous_format(self, memory_format):
    if memory_format in (0, 1):  # contiguous_format, preserve_format
        return bool(self.flags.c_contiguous)
    perm = {2: (0, 2, 3, 1), 3: (0, 2, 3, 4, 1)}.get(memory_format)
    if perm is None or self.ndim != len(perm):
        return False
    return bool(np.transpose(self, perm).flags.c_contiguous)


@op("aten::element_size(Tensor self) -> int")
def element_size(self):
    return int(self.itemsize)


@op("aten::stride(Tensor self) -> int[]")
def stride(self):
    return strides_of(self)


@op("aten::stride.int(Tensor self, int dim) -> int")
def stride_int(self, dim):
    from ._common import normalize_dim
    if self.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return strides_of(self)[normalize_dim(dim, self.ndim)]
