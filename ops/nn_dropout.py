"""Dropout in its forms (element, feature/channel, alpha, and `native_dropout` which also
returns its mask). Masks are drawn from `ops.random.generator()`; in eval mode or with
p=0 the input is returned unchanged.

The derivatives of the mask-less forms recover the mask from the output (`out != 0`, or
`!= the alpha-dropout fill`): exact except where an input element is exactly that value,
whose gradient is then taken as dropped."""

from __future__ import annotations

import math

import numpy as np

from .random import generator
from .registry import derivative, op

_SELU_ALPHA = 1.7580993408473766


def _check_p(p):
    if p < 0 or p > 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")


def _noise(x, p, feature):
    """A Bernoulli(1-p) keep-mask: per element, or per (sample, channel) for feature dropout."""
    if feature:
        if x.ndim < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        shape = x.shape[:2] + (1,) * (x.ndim - 2)
    else:
        shape = x.shape
    return generator().random(shape) < (1.0 - p)


def _alpha_consts(p):
    a = 1.0 / math.sqrt((_SELU_ALPHA * _SELU_ALPHA * p + 1) * (1 - p))
    return a, _SELU_ALPHA * a * (p - 1)  # scale of kept elements, value of dropped ones


def _dropout(x, p, train, feature, alpha):
    _check_p(p)
    if not train or p == 0 or x.size == 0:
        return x
    if p == 1:
        return x * np.zeros((), x.dtype)
    keep = _noise(x, p, feature)
    if alpha:
        a, fill = _alpha_consts(p)
        out = np.where(keep, x * a + _SELU_ALPHA * a * p, fill)
    else:
        out = x * keep * np.asarray(1.0 / (1.0 - p), x.dtype)
    return np.asarray(out, dtype=x.dtype, order="C")


def _make(feature, alpha, name):
    @op(f"aten::{name}(Tensor input, float p, bool train) -> Tensor")
    def f(input, p, train):
        return _dropout(input, p, train, feature, alpha)

    @op(f"aten::{name}_(Tensor(a!) self, float p, bool train) -> Tensor(a!)")
    def f_(self, p, train):
        out = _dropout(self, p, train, feature, alpha)
        if out is not self:
            self[...] = out
        return self

    @derivative(f"aten::{name}", f"aten::{name}_")
    def grad(e, grads, inputs, outputs):
        g, p, train = grads[0], inputs[1], inputs[2]
        if e.symbolic and e.node.kind == "aten::dropout":
            return [_dropout_grad_at_run_time(e, g), None, None]
        if not train or p == 0:
            return [g, None, None]
        if p == 1:
            return [e.zeros_like(g), None, None]
        if alpha:
            a, fill = _alpha_consts(p)
            mask = e.op("aten::ne", outputs[0], fill)
            return [e.op("aten::native_dropout_backward", g, mask, a), None, None]
        mask = e.op("aten::ne", outputs[0], 0)
        return [e.op("aten::native_dropout_backward", g, mask, 1.0 / (1.0 - p)), None, None]


def _dropout_grad_at_run_time(e, g):
    """symbolic_script's dropout: the forward computes `scale = 1 / (float(p1m == 0.) + p1m)`
    for `p1m = (1. - p) * float(train)` and runs native_dropout, whose mask the backward
    captures with the scale."""
    x, p, train = e.node.inputs
    with e.forward(before_result=True):
        p1m = e.op("aten::mul", e.op("aten::sub", 1., p), e.op("aten::Float", train))
        scale = e.op("aten::div", 1., e.op("aten::add", e.op("aten::Float", e.op("aten::eq", p1m, 0.)), p1m))
    _, mask = e.replace_forward("aten::native_dropout", x, p, train)
    return e.op("aten::native_dropout_backward", g, mask, scale)


_make(False, False, "dropout")
_make(True, False, "feature_dropout")
_make(False, True, "alpha_dropout")
_make(True, True, "feature_alpha_dropout")


@op("aten::native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor)")
def native_dropout(input, p, train):
    if train is None or train:
        _check_p(p)
        keep = generator().random(input.shape) < (1.0 - p)
        scale = 0.0 if p == 1 else 1.0 / (1.0 - p)
        return np.asarray(input * keep * np.asarray(scale, input.dtype), dtype=input.dtype, order="C"), keep
    return input.copy(), np.ones(input.shape, dtype=np.bool_)


@op("aten::native_dropout_backward(Tensor grad_output, Tensor mask, float scale) -> Tensor")
def native_dropout_backward(grad_output, mask, scale):
    return np.asarray(grad_output * mask * np.asarray(scale, grad_output.dtype), dtype=grad_output.dtype, order="C")


@derivative("aten::native_dropout")
def native_dropout_grad(e, grads, inputs, outputs):
    p, train = inputs[1], inputs[2]
    if grads[0] is None:
        return [None, None, None]
    if train is False:
        return [grads[0], None, None]
    scale = 0.0 if p == 1 else 1.0 / (1.0 - p)
    return [e.op("aten::native_dropout_backward", grads[0], outputs[1], scale), None, None]
