"""Tensor comparisons (eq/ne/lt/le/gt/ge), logical ops and bitwise ops (~, &, |, ^).

Comparisons promote their operands first and return bool tensors; their in-place variants
write the result in self's dtype. None of these ops is differentiable.
"""

from __future__ import annotations

import numpy as np

from .dtypes import result_type
from .pointwise import not_implemented, store
from .registry import op

_COMPARE = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
            "gt": np.greater, "ge": np.greater_equal}


def _comparison(fn):
    def impl(self, other):
        dt = result_type(self, other)
        with np.errstate(invalid="ignore"):
            return np.asarray(fn(np.asarray(self, dtype=dt), np.asarray(other, dtype=dt)))
    return impl


def _inplace_cast(fn):
    """In-place comparison/logical ops store their bool result in self's dtype."""
    def impl(self, other):
        out = fn(self, other)
        if np.broadcast_shapes(out.shape, self.shape) != self.shape:
            return store(self, out)  # raises the shape error
        self[...] = out.astype(self.dtype)
        return self
    return impl


for _name, _fn in _COMPARE.items():
    _impl = _comparison(_fn)
    op(f"aten::{_name}.Tensor(Tensor self, Tensor other) -> Tensor",
       f"aten::{_name}.Scalar(Tensor self, Scalar other) -> Tensor")(_impl)
    op(f"aten::{_name}_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
       f"aten::{_name}_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)")(_inplace_cast(_impl))


# ---- logical


def _logical(fn):
    def impl(self, other):
        return np.asarray(fn(self != 0, other != 0))
    return impl


for _name, _fn in (("and", np.logical_and), ("or", np.logical_or), ("xor", np.logical_xor)):
    _impl = _logical(_fn)
    op(f"aten::logical_{_name}(Tensor self, Tensor other) -> Tensor")(_impl)
    op(f"aten::logical_{_name}_(Tensor(a!) self, Tensor other) -> Tensor(a!)")(_inplace_cast(_impl))


@op("aten::logical_not(Tensor self) -> Tensor")
def logical_not(self):
    return np.asarray(self == 0)


@op("aten::logical_not_(Tensor(a!) self) -> Tensor(a!)")
def logical_not_(self):
    self[...] = (self == 0).astype(self.dtype)
    return self


# ---- bitwise


@op("aten::bitwise_not(Tensor self) -> Tensor")
def bitwise_not(self):
    if self.dtype.kind not in "biu":
        raise not_implemented("bitwise_not_cpu", self.dtype)
    return np.asarray(np.invert(self))


@op("aten::bitwise_not_(Tensor(a!) self) -> Tensor(a!)")
def bitwise_not_(self):
    self[...] = bitwise_not(self)
    return self


def _bitwise(name, fn):
    def impl(self, other):
        dt = result_type(self, other)
        if dt.kind not in "biu":
            raise not_implemented(f"bitwise_{name}_cpu", dt)
        return np.asarray(fn(np.asarray(self, dtype=dt), np.asarray(other, dtype=dt)), dtype=dt)
    return impl


for _name, _fn in (("and", np.bitwise_and), ("or", np.bitwise_or), ("xor", np.bitwise_xor)):
    _impl = _bitwise(_name, _fn)
    op(f"aten::__{_name}__.Tensor(Tensor self, Tensor other) -> Tensor",
       f"aten::__{_name}__.Scalar(Tensor self, Scalar other) -> Tensor")(_impl)

    def _inplace(self, other, _impl=_impl):
        return store(self, _impl(self, other))
    op(f"aten::__i{_name}__.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
       f"aten::__i{_name}__.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)")(_inplace)
