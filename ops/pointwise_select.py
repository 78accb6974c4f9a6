"""Pointwise selection ops: clamp/clip (scalar and tensor bounds), where, masked_fill,
nan_to_num, isnan/isinf/isfinite, fill_ and zero_."""

from __future__ import annotations

import numpy as np

from .dtypes import result_type
from .dtypes import c_type_name, scalar_type_name
from .pointwise import store
from .registry import derivative, op
from .types import BOOL, TENSOR, NamedType, OptionalType

# ---- clamp family


def _clamp(self, lo, hi):
    if lo is None and hi is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    dt = result_type(self, lo, hi)
    out = np.asarray(self, dtype=dt)
    with np.errstate(invalid="ignore"):
        if lo is not None:
            out = np.maximum(out, np.asarray(lo, dtype=dt))
        if hi is not None:
            out = np.minimum(out, np.asarray(hi, dtype=dt))
    return np.asarray(out, dtype=dt)


@op("aten::clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor",
    "aten::clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor",
    "aten::clip(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor",
    "aten::clip.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor")
def clamp(self, min=None, max=None):
    return _clamp(self, min, max)


@op("aten::clamp_(Tensor(a!) self, Scalar? min=None, Scalar? max=None) -> Tensor(a!)",
    "aten::clamp_.Tensor(Tensor(a!) self, Tensor? min=None, Tensor? max=None) -> Tensor(a!)",
    "aten::clip_(Tensor(a!) self, Scalar? min=None, Scalar? max=None) -> Tensor(a!)",
    "aten::clip_.Tensor(Tensor(a!) self, Tensor? min=None, Tensor? max=None) -> Tensor(a!)")
def clamp_(self, min=None, max=None):
    return store(self, _clamp(self, min, max))


@op("aten::clamp_min(Tensor self, Scalar min) -> Tensor",
    "aten::clamp_min.Tensor(Tensor self, Tensor min) -> Tensor")
def clamp_min(self, min):
    return _clamp(self, min, None)


@op("aten::clamp_min_(Tensor(a!) self, Scalar min) -> Tensor(a!)",
    "aten::clamp_min_.Tensor(Tensor(a!) self, Tensor min) -> Tensor(a!)")
def clamp_min_(self, min):
    return store(self, _clamp(self, min, None))


@op("aten::clamp_max(Tensor self, Scalar max) -> Tensor",
    "aten::clamp_max.Tensor(Tensor self, Tensor max) -> Tensor")
def clamp_max(self, max):
    return _clamp(self, None, max)


@op("aten::clamp_max_(Tensor(a!) self, Scalar max) -> Tensor(a!)",
    "aten::clamp_max_.Tensor(Tensor(a!) self, Tensor max) -> Tensor(a!)")
def clamp_max_(self, max):
    return store(self, _clamp(self, None, max))


def _clamp_grads(e, g, x, lo, hi):
    """PyTorch's clamp_backward and clamp_backward_min_max: gradient flows to self inside
    [min, max], to a tensor min where self < min (and min < max), to a tensor max where
    self > max (or max < min)."""
    where = "aten::where"
    if lo is not None and hi is not None:
        inside = e.op("aten::logical_and", e.op("aten::ge", x, lo), e.op("aten::le", x, hi))
    elif lo is not None:
        inside = e.op("aten::ge", x, lo)
    else:
        inside = e.op("aten::le", x, hi)
    gx = e.op(where, inside, g, 0.0)
    g_lo = g_hi = None
    if e.is_tensor(lo):
        pred = e.op("aten::lt", x, lo)
        if hi is not None:
            pred = e.op("aten::logical_and", pred, e.op("aten::lt", lo, hi))
        g_lo = e.sum_to(e.op(where, pred, g, 0.0), lo)
    if e.is_tensor(hi):
        pred = e.op("aten::gt", x, hi)
        if lo is not None:
            pred = e.op("aten::logical_or", pred, e.op("aten::lt", hi, lo))
        g_hi = e.sum_to(e.op(where, pred, g, 0.0), hi)
    return e.sum_to(gx, x), g_lo, g_hi


@derivative("aten::clamp", "aten::clamp.Tensor", "aten::clip", "aten::clip.Tensor",
            "aten::clamp_", "aten::clamp_.Tensor", "aten::clip_", "aten::clip_.Tensor")
def clamp_grad(e, grads, inputs, outputs):
    if e.symbolic and e.node.kind == "aten::clamp":
        return [_clamp_grad_at_run_time(e, grads[0], inputs[0], *e.node.inputs[1:3]), None, None]
    return list(_clamp_grads(e, grads[0], inputs[0], inputs[1], inputs[2]))


def _clamp_grad_at_run_time(e, g, x, lo, hi):
    """symbolic_script's clamp_1 / clamp_2, as TorchScript compiles them: the bounds (the
    node's own values) tested for None when the backward runs (`min is not None and max is not
    None` short-circuits through an If that also refines `min`), each branch returning a
    `(grad, None, None)` tuple; gradient flows to self only (the bounds get none)."""
    number = not e.is_tensor(lo) and not e.is_tensor(hi)
    bound = NamedType("Scalar") if number else TENSOR

    def as_float(v):
        return e.op("aten::Float", v) if number else v

    both, lo_ = _and_refining(e, lo, hi, bound)

    def masked(mask):
        return e.make_tuple(e.op("aten::mul", g, e.op("aten::type_as", mask, x)), None, None)

    def with_both():
        lo_known, hi_known = e.unchecked_cast(lo_, bound), e.unchecked_cast(hi, bound)
        return masked(e.op("aten::mul", e.op("aten::ge", x, as_float(lo_known)),
                           e.op("aten::le", x, as_float(hi_known))))

    def with_max():
        return e.if_(e.op("aten::__isnot__", hi, None),
                     lambda: masked(e.op("aten::le", x, as_float(e.unchecked_cast(hi, bound)))),
                     lambda: e.make_tuple(g, None, None))

    def with_one():
        return e.if_(e.op("aten::__isnot__", lo_, None),
                     lambda: masked(e.op("aten::ge", x, as_float(e.unchecked_cast(lo_, bound)))), with_max)

    return e.unpack_tuple(e.if_(both, with_both, with_one))[0]


def _and_refining(e, lo, hi, bound):
    """`lo is not None and hi is not None` as TorchScript compiles it: an If yielding the
    condition and `lo` refined to its type where the first test held."""
    def tested():
        refined = e.unchecked_cast(lo, bound)
        return e.op("aten::__isnot__", hi, None), refined
    return e.if_(e.op("aten::__isnot__", lo, None), tested, lambda: (False, lo),
                 types=[BOOL, OptionalType(bound)])


@derivative("aten::clamp_min", "aten::clamp_min.Tensor", "aten::clamp_min_", "aten::clamp_min_.Tensor")
def clamp_min_grad(e, grads, inputs, outputs):
    gx, g_lo, _ = _clamp_grads(e, grads[0], inputs[0], inputs[1], None)
    return [gx, g_lo]


@derivative("aten::clamp_max", "aten::clamp_max.Tensor", "aten::clamp_max_", "aten::clamp_max_.Tensor")
def clamp_max_grad(e, grads, inputs, outputs):
    gx, _, g_hi = _clamp_grads(e, grads[0], inputs[0], None, inputs[1])
    return [gx, g_hi]


# ---- where / masked_fill


@op("aten::where.self(Tensor condition, Tensor self, Tensor other) -> Tensor",
    "aten::where.ScalarOther(Tensor condition, Tensor self, Scalar other) -> Tensor",
    "aten::where.ScalarSelf(Tensor condition, Scalar self, Tensor other) -> Tensor",
    "aten::where.Scalar(Tensor condition, Scalar self, Scalar other) -> Tensor")
def where(condition, self, other):
    if condition.dtype not in (np.bool_, np.uint8):
        raise RuntimeError("where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {scalar_type_name(condition.dtype)}")
    dt = result_type(self, other)
    return np.asarray(np.where(condition.astype(bool), np.asarray(self, dtype=dt),
                               np.asarray(other, dtype=dt)), dtype=dt)


@derivative("aten::where.self", "aten::where.ScalarOther", "aten::where.ScalarSelf")
def where_grad(e, grads, inputs, outputs):
    g, (cond, self, other) = grads[0], inputs
    if e.symbolic and e.is_tensor(self) and e.is_tensor(other):
        # symbolic_script: grad * condition.type_as(grad), grad * condition.bitwise_not().type_as(grad)
        gs = e.sum_to(e.op("aten::mul", g, e.op("aten::type_as", cond, g)), self)
        go = e.sum_to(e.op("aten::mul", g, e.op("aten::type_as", e.op("aten::bitwise_not", cond), g)), other)
        return [None, gs, go]
    gs = e.sum_to(e.op("aten::where", cond, g, 0.0), self) if e.is_tensor(self) else None
    go = e.sum_to(e.op("aten::where", cond, 0.0, g), other) if e.is_tensor(other) else None
    return [None, gs, go]


@op("aten::where(Tensor condition) -> Tensor[]")
def where_nonzero(condition):
    """The indices of the non-zero elements, one int64 tensor per dimension."""
    return [np.asarray(i, dtype=np.int64) for i in np.nonzero(np.atleast_1d(condition))][:max(condition.ndim, 1)]


def _masked_fill(self, mask, value):
    if mask.dtype != np.bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{c_type_name(mask.dtype)}")
    if isinstance(value, np.ndarray) and value.ndim != 0:
        raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value.ndim} dimension(s).")
    fill = np.asarray(value).astype(self.dtype)
    return np.asarray(np.where(mask, fill, self), dtype=self.dtype)


@op("aten::masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor",
    "aten::masked_fill.Tensor(Tensor self, Tensor mask, Tensor value) -> Tensor")
def masked_fill(self, mask, value):
    return _masked_fill(self, mask, value)


@op("aten::masked_fill_.Scalar(Tensor(a!) self, Tensor mask, Scalar value) -> Tensor(a!)",
    "aten::masked_fill_.Tensor(Tensor(a!) self, Tensor mask, Tensor value) -> Tensor(a!)")
def masked_fill_(self, mask, value):
    if np.broadcast_shapes(mask.shape, self.shape) != self.shape:
        raise RuntimeError(f"masked_fill_: mask of shape {list(mask.shape)} cannot be broadcast "
                           f"to self of shape {list(self.shape)}")
    return store(self, _masked_fill(self, mask, value))


@derivative("aten::masked_fill.Scalar", "aten::masked_fill.Tensor",
            "aten::masked_fill_.Scalar", "aten::masked_fill_.Tensor")
def masked_fill_grad(e, grads, inputs, outputs):
    g, (self, mask, value) = grads[0], inputs
    gs = e.sum_to(e.op("aten::masked_fill", g, mask, 0.0), self)
    gv = None
    if e.is_tensor(value):
        gv = e.sum_to(e.op("aten::where", mask, g, 0.0), value)
    return [gs, None, gv]


# ---- floating-point classification and cleanup


@op("aten::isnan(Tensor self) -> Tensor")
def isnan(self):
    return np.asarray(np.isnan(self) if self.dtype.kind in "fc" else np.zeros(self.shape, bool))


@op("aten::isinf(Tensor self) -> Tensor")
def isinf(self):
    return np.asarray(np.isinf(self) if self.dtype.kind in "fc" else np.zeros(self.shape, bool))


@op("aten::isfinite(Tensor self) -> Tensor")
def isfinite(self):
    return np.asarray(np.isfinite(self) if self.dtype.kind in "fc" else np.ones(self.shape, bool))


@op("aten::nan_to_num(Tensor self, float? nan=None, float? posinf=None, float? neginf=None) -> Tensor")
def nan_to_num(self, nan=None, posinf=None, neginf=None):
    """NaN -> `nan` (0), +inf -> `posinf` (dtype max), -inf -> `neginf` (dtype lowest)."""
    if self.dtype.kind not in "fc":
        return self.copy()
    info = np.finfo(self.dtype)
    out = np.where(np.isnan(self), 0.0 if nan is None else nan, self)
    out = np.where(np.isposinf(out), info.max if posinf is None else posinf, out)
    out = np.where(np.isneginf(out), info.min if neginf is None else neginf, out)
    return np.asarray(out, dtype=self.dtype)


@op("aten::nan_to_num_(Tensor(a!) self, float? nan=None, float? posinf=None, float? neginf=None) -> Tensor(a!)")
def nan_to_num_(self, nan=None, posinf=None, neginf=None):
    return store(self, nan_to_num(self, nan, posinf, neginf))


@derivative("aten::nan_to_num", "aten::nan_to_num_")
def nan_to_num_grad(e, grads, inputs, outputs):
    return [e.op("aten::where", e.op("aten::isfinite", inputs[0]), grads[0], 0.0), None, None, None]


# ---- fill


@op("aten::fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)",
    "aten::fill_.Tensor(Tensor(a!) self, Tensor value) -> Tensor(a!)")
def fill_(self, value):
    if isinstance(value, np.ndarray) and value.ndim != 0:
        raise RuntimeError("fill_ only supports 0-dimension value tensor but got tensor with "
                           f"{value.ndim} dimensions.")
    self[...] = np.asarray(value).astype(self.dtype)
    return self


@op("aten::zero_(Tensor(a!) self) -> Tensor(a!)")
def zero_(self):
    self[...] = 0
    return self


@derivative("aten::fill_.Scalar", "aten::fill_.Tensor")
def fill_grad(e, grads, inputs, outputs):
    g, value = grads[0], inputs[1]
    gv = e.sum_to(g, value) if e.is_tensor(value) else None
    return [e.zeros_like(g), gv]


@derivative("aten::zero_")
def zero_grad(e, grads, inputs, outputs):
    return [e.zeros_like(grads[0])]

