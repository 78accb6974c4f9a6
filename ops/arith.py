"""Tensor arithmetic: add, sub, mul, div, neg with PyTorch's broadcasting and type promotion.

This module is also the pattern other op families follow: implementations on numpy values,
derivative formulas on the emitter `e` right below them.
"""

from __future__ import annotations

import numpy as np

from ._common import float_result_type, promoted
from .registry import derivative, op


@op("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "aten::add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor")
def add(self, other, alpha=1):
    dt, (a, b) = promoted(self, other)
    return np.add(a, b * alpha if alpha != 1 else b, dtype=dt)


@op("aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
    "aten::add_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> Tensor(a!)")
def add_(self, other, alpha=1):
    out = add(self, other, alpha)
    self[...] = out
    return self


@derivative("aten::add.Tensor", "aten::add.Scalar", "aten::add_.Tensor", "aten::add_.Scalar")
def add_grad(e, grads, inputs, outputs):
    """symbolic_script's add_0 / add_1: the other's gradient first, scaled by alpha even when
    it is 1 (the eager path skips that product)."""
    g = grads[0]
    self, other, alpha = inputs[0], inputs[1], inputs[2]
    g_other = None
    if e.is_tensor(other):
        g_other = e.sum_to(g if alpha == 1 and not e.symbolic else e.op("aten::mul", g, alpha), other)
    return [e.sum_to(g, self), g_other, None]


@op("aten::sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "aten::sub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor")
def sub(self, other, alpha=1):
    dt, (a, b) = promoted(self, other)
    if dt == np.bool_:
        raise TypeError("Subtraction, the `-` operator, with two bool tensors is not supported")
    return np.subtract(a, b * alpha if alpha != 1 else b, dtype=dt)


@op("aten::sub_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)")
def sub_(self, other, alpha=1):
    self[...] = sub(self, other, alpha)
    return self


@op("aten::rsub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "aten::rsub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor")
def rsub(self, other, alpha=1):
    return sub(other, self, alpha) if isinstance(other, np.ndarray) else \
        np.asarray(sub(np.asarray(other, dtype=promoted(self, other)[0]), self, alpha))


@derivative("aten::sub.Tensor", "aten::sub.Scalar", "aten::sub_.Tensor")
def sub_grad(e, grads, inputs, outputs):
    """symbolic_script's sub_0: the other's gradient first, `-grad_output * alpha`."""
    g = grads[0]
    self, other, alpha = inputs[0], inputs[1], inputs[2]
    g_other = None
    if e.is_tensor(other):
        g_other = e.sum_to(e.op("aten::mul", e.op("aten::neg", g), alpha) if e.symbolic
                           else e.op("aten::mul", g, -alpha), other)
    return [e.sum_to(g, self), g_other, None]


@derivative("aten::rsub.Tensor", "aten::rsub.Scalar")
def rsub_grad(e, grads, inputs, outputs):
    """symbolic_script's rsub_0 / rsub_1: `-grad_output * alpha` for self."""
    g = grads[0]
    self, other, alpha = inputs[0], inputs[1], inputs[2]
    g_self = e.sum_to(e.op("aten::mul", e.op("aten::neg", g), alpha) if e.symbolic
                      else e.op("aten::mul", g, -alpha), self)
    g_other = e.sum_to(g, other) if e.is_tensor(other) else None
    return [g_self, g_other, None]


@op("aten::mul.Tensor(Tensor self, Tensor other) -> Tensor",
    "aten::mul.Scalar(Tensor self, Scalar other) -> Tensor")
def mul(self, other):
    dt, (a, b) = promoted(self, other)
    return np.multiply(a, b, dtype=dt)


@op("aten::mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
    "aten::mul_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)")
def mul_(self, other):
    self[...] = mul(self, other)
    return self


@derivative("aten::mul.Tensor", "aten::mul.Scalar", "aten::mul_.Tensor", "aten::mul_.Scalar")
def mul_grad(e, grads, inputs, outputs):
    g = grads[0]
    self, other = inputs
    g_self = e.sum_to(e.op("aten::mul", g, other), self)
    g_other = None
    if e.is_tensor(other):
        g_other = e.sum_to(e.op("aten::mul", g, self), other)
    return [g_self, g_other]


@op("aten::div.Tensor(Tensor self, Tensor other) -> Tensor",
    "aten::div.Scalar(Tensor self, Scalar other) -> Tensor")
def div(self, other):
    dt = float_result_type(self, other)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.true_divide(np.asarray(self, dtype=dt), np.asarray(other, dtype=dt), dtype=dt)


@op("aten::div_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
    "aten::div_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)")
def div_(self, other):
    self[...] = div(self, other)
    return self


@derivative("aten::div.Tensor", "aten::div.Scalar")
def div_grad(e, grads, inputs, outputs):
    """symbolic_script's div_0/div_1: the other's gradient is -g * self / (other * other), from
    the inputs only, so the backward captures the inputs and not the result."""
    g = grads[0]
    self, other = inputs
    g_self = e.sum_to(e.op("aten::div", g, other), self)
    g_other = None
    if e.is_tensor(other):
        g_other = e.sum_to(e.op("aten::div", e.op("aten::mul", e.op("aten::neg", g), self),
                                e.op("aten::mul", other, other)), other)
    return [g_self, g_other]


@derivative("aten::div_.Tensor", "aten::div_.Scalar")
def div__grad(e, grads, inputs, outputs):
    """In place, `self` is overwritten by the result: the other's gradient is read from the
    result (-out / other)."""
    g = grads[0]
    self, other = inputs
    g_self = e.sum_to(e.op("aten::div", g, other), self)
    g_other = None
    if e.is_tensor(other):
        # d(a/b)/db = -a/b^2 = -out/b
        g_other = e.sum_to(e.op("aten::neg", e.op("aten::div", e.op("aten::mul", g, outputs[0]), other)), other)
    return [g_self, g_other]


@op("aten::neg(Tensor self) -> Tensor")
def neg(self):
    if self.dtype == np.bool_:
        raise TypeError("Negation, the `-` operator, on a bool tensor is not supported")
    return np.negative(self)


@derivative("aten::neg")
def neg_grad(e, grads, inputs, outputs):
    return [e.op("aten::neg", grads[0])]
