"""Binary pointwise arithmetic beyond add/sub/mul/div: remainder, fmod, floor_divide, div with
a rounding mode, true_divide, maximum/minimum, addcmul/addcdiv and lerp.

Integer division and modulo by zero raise "ZeroDivisionError" as PyTorch's CPU kernels do;
floating ones follow IEEE (inf/nan).
"""

from __future__ import annotations

import numpy as np

from .dtypes import result_type
from .arith import div as true_div
from .pointwise import div, mul, neg, not_implemented, store
from .script_spelling import rsub
from .registry import derivative, op


def _int_operands(kernel, self, other):
    dt = result_type(self, other)
    if dt == np.bool_:
        raise not_implemented(kernel, dt)
    a, b = np.asarray(self, dtype=dt), np.asarray(other, dtype=dt)
    if dt.kind in "iu" and np.any(b == 0):
        raise RuntimeError("ZeroDivisionError")
    return dt, a, b


def _floor_div(a, b, dt):
    with np.errstate(all="ignore"):
        if dt.kind in "iu":
            return np.asarray(np.floor_divide(a, b), dtype=dt)
        return np.asarray(np.where(b == 0, a / b, np.floor_divide(a, b)), dtype=dt)


def _trunc_div(a, b, dt):
    with np.errstate(all="ignore"):
        if dt.kind in "iu":
            q = np.floor_divide(a, b)
            q = q + ((np.remainder(a, b) != 0) & ((a < 0) != (b < 0)))
            return np.asarray(q, dtype=dt)
        return np.asarray(np.trunc(a / b), dtype=dt)


# ---- remainder / fmod / floor_divide


@op("aten::remainder.Tensor(Tensor self, Tensor other) -> Tensor",
    "aten::remainder.Scalar(Tensor self, Scalar other) -> Tensor",
    "aten::remainder.Scalar_Tensor(Scalar self, Tensor other) -> Tensor")
def remainder(self, other):
    """Python-style modulo: the result takes the sign of the divisor."""
    dt, a, b = _int_operands("remainder_cpu", self, other)
    with np.errstate(all="ignore"):
        return np.asarray(np.remainder(a, b), dtype=dt)


@op("aten::remainder_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
    "aten::remainder_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)")
def remainder_(self, other):
    return store(self, remainder(self, other))


@op("aten::fmod.Tensor(Tensor self, Tensor other) -> Tensor",
    "aten::fmod.Scalar(Tensor self, Scalar other) -> Tensor")
def fmod(self, other):
    """C-style modulo: the result takes the sign of the dividend."""
    dt, a, b = _int_operands("fmod_cpu", self, other)
    with np.errstate(all="ignore"):
        return np.asarray(np.fmod(a, b), dtype=dt)


@op("aten::fmod_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
    "aten::fmod_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)")
def fmod_(self, other):
    return store(self, fmod(self, other))


def _mod_grad(mode):
    def formula(e, grads, inputs, outputs):
        g, (self, other) = grads[0], inputs
        g_other = None
        if e.is_tensor(other):
            q = e.op("aten::div", self, other, mode)
            g_other = e.sum_to(mul(e, neg(e, g), q), other)
        # a number `other` cannot broadcast self (symbolic_script's fmod/remainder: grad_output)
        g_self = (e.sum_to(g, self) if e.is_tensor(other) else g) if e.is_tensor(self) else None
        return [g_self, g_other]
    return formula


derivative("aten::remainder.Tensor", "aten::remainder.Scalar", "aten::remainder_.Tensor",
           "aten::remainder_.Scalar")(_mod_grad("floor"))
derivative("aten::fmod.Tensor", "aten::fmod.Scalar", "aten::fmod_.Tensor",
           "aten::fmod_.Scalar")(_mod_grad("trunc"))


@op("aten::floor_divide(Tensor self, Tensor other) -> Tensor",
    "aten::floor_divide.Scalar(Tensor self, Scalar other) -> Tensor")
def floor_divide(self, other):
    dt, a, b = _int_operands("div_floor_cpu", self, other)
    return _floor_div(a, b, dt)


@op("aten::floor_divide_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
    "aten::floor_divide_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)")
def floor_divide_(self, other):
    return store(self, floor_divide(self, other))


# ---- division with a rounding mode


@op("aten::div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor",
    "aten::div.Scalar_mode(Tensor self, Scalar other, *, str? rounding_mode) -> Tensor")
def div_mode(self, other, rounding_mode):
    if rounding_mode is None:
        return true_div(self, other)
    if rounding_mode not in ("trunc", "floor"):
        raise RuntimeError("div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                           f"but found '{rounding_mode}'")
    dt, a, b = _int_operands(f"div_{rounding_mode}_cpu", self, other)
    return (_floor_div if rounding_mode == "floor" else _trunc_div)(a, b, dt)


@op("aten::div_.Tensor_mode(Tensor(a!) self, Tensor other, *, str? rounding_mode) -> Tensor(a!)",
    "aten::div_.Scalar_mode(Tensor(a!) self, Scalar other, *, str? rounding_mode) -> Tensor(a!)")
def div_mode_(self, other, rounding_mode):
    return store(self, div_mode(self, other, rounding_mode))


@derivative("aten::div.Tensor_mode", "aten::div.Scalar_mode", "aten::div_.Tensor_mode",
            "aten::div_.Scalar_mode")
def div_mode_grad(e, grads, inputs, outputs):
    g, (self, other, mode) = grads[0], inputs
    if e.symbolic and e.node.kind == "aten::div":
        return _div_mode_grad_at_run_time(e, g, self, other, e.node.inputs[2])
    g_other = None
    if mode is not None:
        if e.is_tensor(other):
            g_other = e.zeros_like(other)
        return [e.zeros_like(self), g_other, None]
    if e.is_tensor(other):
        g_other = e.sum_to(neg(e, div(e, mul(e, g, outputs[0]), other)), other)
    return [e.sum_to(div(e, g, other), self), g_other, None]


def _div_mode_grad_at_run_time(e, g, self, other, mode):
    """symbolic_script's div_2 / div_3: the backward tests `rounding_mode is None` (the node's
    own argument) when it runs; true division's gradients, else zeros (`memory_format=1` for a
    number divisor)."""
    is_true_division = e.op("aten::__is__", mode, None)
    if not e.is_tensor(other):
        return [e.if_(is_true_division, lambda: div(e, g, other),
                      lambda: e.op("aten::zeros_like", self, None, None, None, None, 1)), None, None]

    def true_division():
        g_self = e.sum_to(div(e, g, other), self)
        return g_self, e.sum_to(div(e, mul(e, neg(e, g), self), mul(e, other, other)), other)

    g_self, g_other = e.if_(is_true_division, true_division,
                            lambda: (e.zeros_like(self), e.zeros_like(other)))
    return [g_self, g_other, None]


@op("aten::true_divide.Tensor(Tensor self, Tensor other) -> Tensor",
    "aten::true_divide.Scalar(Tensor self, Scalar other) -> Tensor")
def true_divide(self, other):
    return true_div(self, other)


@op("aten::true_divide_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
    "aten::true_divide_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)")
def true_divide_(self, other):
    return store(self, true_div(self, other))


@derivative("aten::true_divide.Tensor", "aten::true_divide.Scalar", "aten::true_divide_.Tensor",
            "aten::true_divide_.Scalar")
def true_divide_grad(e, grads, inputs, outputs):
    return div_mode_grad(e, grads, [inputs[0], inputs[1], None], outputs)[:2]


# ---- maximum / minimum


@op("aten::maximum(Tensor self, Tensor other) -> Tensor")
def maximum(self, other):
    dt = result_type(self, other)
    return np.asarray(np.maximum(self.astype(dt), other.astype(dt)), dtype=dt)


@op("aten::minimum(Tensor self, Tensor other) -> Tensor")
def minimum(self, other):
    dt = result_type(self, other)
    return np.asarray(np.minimum(self.astype(dt), other.astype(dt)), dtype=dt)


def _minmax_grad(loses_self):
    """Ties split the gradient in half; the losing side of a comparison gets zero."""
    def formula(e, grads, inputs, outputs):
        g, (a, b) = grads[0], inputs
        half = e.op("aten::where", e.op("aten::eq", a, b), div(e, g, 2.0), g)
        ga = e.op("aten::masked_fill", half, e.op(loses_self, a, b), 0.0)
        gb = e.op("aten::masked_fill", half, e.op(loses_self, b, a), 0.0)
        return [e.sum_to(ga, a), e.sum_to(gb, b)]
    return formula


derivative("aten::maximum")(_minmax_grad("aten::lt"))
derivative("aten::minimum")(_minmax_grad("aten::gt"))


# ---- addcmul / addcdiv / lerp


@op("aten::addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor")
def addcmul(self, tensor1, tensor2, value=1):
    dt = result_type(self, tensor1, tensor2)
    v = np.asarray(value).astype(dt)
    return np.asarray(self.astype(dt) + v * tensor1.astype(dt) * tensor2.astype(dt), dtype=dt)


@op("aten::addcdiv(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor")
def addcdiv(self, tensor1, tensor2, value=1):
    if tensor1.dtype.kind in "biu" and tensor2.dtype.kind in "biu":
        raise RuntimeError("Integer division with addcdiv is no longer supported, and in a future "
                           " release addcdiv will perform a true division of tensor1 and tensor2.")
    dt = result_type(self, tensor1, tensor2)
    v = np.asarray(value).astype(dt)
    with np.errstate(all="ignore"):
        return np.asarray(self.astype(dt) + v * (tensor1.astype(dt) / tensor2.astype(dt)), dtype=dt)


@op("aten::addcmul_(Tensor(a!) self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor(a!)")
def addcmul_(self, tensor1, tensor2, value=1):
    return store(self, addcmul(self, tensor1, tensor2, value))


@op("aten::addcdiv_(Tensor(a!) self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor(a!)")
def addcdiv_(self, tensor1, tensor2, value=1):
    return store(self, addcdiv(self, tensor1, tensor2, value))


@derivative("aten::addcmul", "aten::addcmul_")
def addcmul_grad(e, grads, inputs, outputs):
    g, (self, t1, t2, value) = grads[0], inputs
    if e.symbolic:  # symbolic_script's forward takes self's, tensor1's and tensor2's sizes first
        e.forward_sizes(self, t1, t2)
    gv = mul(e, g, value)
    g1, g2 = e.sum_to(mul(e, gv, t2), t1), e.sum_to(mul(e, gv, t1), t2)
    return [e.sum_to(g, self), g1, g2, None]


@derivative("aten::addcdiv", "aten::addcdiv_")
def addcdiv_grad(e, grads, inputs, outputs):
    g, (self, t1, t2, value) = grads[0], inputs
    gv = mul(e, g, value)
    g1 = div(e, gv, t2)
    g2 = neg(e, div(e, mul(e, g1, t1), t2))
    return [e.sum_to(g, self), e.sum_to(g1, t1), e.sum_to(g2, t2), None]


def _lerp(self, end, weight):
    if self.dtype.kind not in "fc":
        raise not_implemented("lerp_kernel_scalar" if not isinstance(weight, np.ndarray)
                              else "lerp_kernel_tensor", self.dtype)
    if end.dtype != self.dtype:
        raise RuntimeError(f"expected dtype {self.dtype.name.replace('float64', 'double').replace('float32', 'float')}"
                           f" for `end` but got dtype {end.dtype.name.replace('float64', 'double').replace('float32', 'float')}")
    dt = self.dtype
    w = np.asarray(weight, dtype=dt)
    diff = end - self
    # PyTorch's formula, chosen for accuracy near both ends
    out = np.where(np.abs(w) < 0.5, self + w * diff, end - diff * (1 - w))
    return np.asarray(out, dtype=dt)


@op("aten::lerp.Scalar(Tensor self, Tensor end, Scalar weight) -> Tensor",
    "aten::lerp.Tensor(Tensor self, Tensor end, Tensor weight) -> Tensor")
def lerp(self, end, weight):
    return _lerp(self, end, weight)


@op("aten::lerp_.Scalar(Tensor(a!) self, Tensor end, Scalar weight) -> Tensor(a!)",
    "aten::lerp_.Tensor(Tensor(a!) self, Tensor end, Tensor weight) -> Tensor(a!)")
def lerp_(self, end, weight):
    return store(self, _lerp(self, end, weight))


@derivative("aten::lerp.Scalar", "aten::lerp.Tensor", "aten::lerp_.Scalar", "aten::lerp_.Tensor")
def lerp_grad(e, grads, inputs, outputs):
    g, (self, end, w) = grads[0], inputs
    if e.symbolic and e.node.kind == "aten::lerp":
        # symbolic_script's lerp_0 / lerp_1: sizes taken in the forward; a number weight's
        # `1 - float(weight)` computed in the graph
        e.forward_sizes(self, end, w)
        if e.is_tensor(w):
            return [e.sum_to(mul(e, g, rsub(e, 1, w)), self), e.sum_to(mul(e, g, w), end),
                    e.sum_to(mul(e, g, e.op("aten::sub", end, self)), w)]
        g_self = e.sum_to(mul(e, g, e.op("aten::sub", 1, e.op("aten::Float", w))), self)
        return [g_self, e.sum_to(mul(e, g, e.op("aten::Float", w)), end), None]
    one_minus_w = e.op("aten::rsub", w, 1.0) if e.is_tensor(w) else e.op("aten::sub", 1.0, w)
    g_self = e.sum_to(mul(e, g, one_minus_w), self)
    g_end = e.sum_to(mul(e, g, w), end)
    g_w = None
    if e.is_tensor(w):
        g_w = e.sum_to(mul(e, g, e.op("aten::sub", end, self)), w)
    return [g_self, g_end, g_w]

