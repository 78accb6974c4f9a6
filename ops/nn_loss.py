"""Loss functions (reduction codes: 0 none, 1 mean, 2 sum): regression losses, binary cross
entropy (on probabilities or logits), KL divergence, NLL (any number of spatial dims) and
cross entropy (class-index or probability targets, label smoothing)."""

from __future__ import annotations

import numpy as np

from ._common import float_result_type
from .nn_softmax import dtype_code
from .registry import derivative, op

NONE, MEAN, SUM = 0, 1, 2


def _reduce(loss, reduction, dtype):
    if reduction == MEAN:
        return np.asarray(loss.mean() if loss.size else np.nan, dtype=dtype)
    if reduction == SUM:
        return np.asarray(loss.sum(), dtype=dtype)
    return np.asarray(loss, dtype=dtype, order="C")


def _diff(x, t):
    dt = float_result_type(x, t)
    return np.asarray(x, dt) - np.asarray(t, dt), dt


def _scale(e, g, x, t, reduction):
    """The upstream grad, divided by the element count for mean reduction."""
    if reduction == MEAN:
        n = int(np.prod(np.broadcast_shapes(tuple(e.shape(x)), tuple(e.shape(t)))))
        return e.op("aten::div", g, n)
    return g


# ---- regression losses

@op("aten::mse_loss(Tensor self, Tensor target, int reduction=1) -> Tensor")
def mse_loss(self, target, reduction=MEAN):
    d, dt = _diff(self, target)
    return _reduce(d * d, reduction, dt)


@op("aten::mse_loss_backward(Tensor grad_output, Tensor self, Tensor target, int reduction) -> Tensor")
def mse_loss_backward(grad_output, self, target, reduction):
    d, dt = _diff(self, target)
    n = d.size if reduction == MEAN else 1
    return np.asarray(2.0 * d * grad_output / n, dtype=dt, order="C")


@op("aten::l1_loss(Tensor self, Tensor target, int reduction=1) -> Tensor")
def l1_loss(self, target, reduction=MEAN):
    d, dt = _diff(self, target)
    return _reduce(np.abs(d), reduction, dt)


@op("aten::smooth_l1_loss(Tensor self, Tensor target, int reduction=1, float beta=1.) -> Tensor")
def smooth_l1_loss(self, target, reduction=MEAN, beta=1.0):
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    d, dt = _diff(self, target)
    a = np.abs(d)
    loss = a if beta == 0 else np.where(a < beta, 0.5 * d * d / (beta or 1), a - 0.5 * beta)
    return _reduce(loss, reduction, dt)


@op("aten::smooth_l1_loss_backward(Tensor grad_output, Tensor self, Tensor target, int reduction, float beta) -> Tensor")
def smooth_l1_loss_backward(grad_output, self, target, reduction, beta):
    d, dt = _diff(self, target)
    n = d.size if reduction == MEAN else 1
    inner = d / beta if beta else np.zeros_like(d)
    g = np.where(d <= -beta, -1.0, np.where(d >= beta, 1.0, inner))
    if beta == 0:
        g = np.sign(d)
    return np.asarray(g * grad_output / n, dtype=dt, order="C")


@op("aten::huber_loss(Tensor self, Tensor target, int reduction=1, float delta=1.) -> Tensor")
def huber_loss(self, target, reduction=MEAN, delta=1.0):
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    d, dt = _diff(self, target)
    a = np.abs(d)
    return _reduce(np.where(a < delta, 0.5 * d * d, delta * (a - 0.5 * delta)), reduction, dt)


@op("aten::huber_loss_backward(Tensor grad_output, Tensor self, Tensor target, int reduction, float delta) -> Tensor")
def huber_loss_backward(grad_output, self, target, reduction, delta):
    d, dt = _diff(self, target)
    n = d.size if reduction == MEAN else 1
    g = np.clip(d, -delta, delta)
    return np.asarray(g * grad_output / n, dtype=dt, order="C")


def _symmetric_grad(e, gin, x, t):
    return [e.sum_to(gin, x), e.sum_to(e.op("aten::neg", gin), t) if e.is_tensor(t) else None]


@derivative("aten::mse_loss")
def mse_loss_grad(e, grads, inputs, outputs):
    x, t, red = inputs
    return _symmetric_grad(e, e.op("aten::mse_loss_backward", grads[0], x, t, red), x, t) + [None]


@derivative("aten::smooth_l1_loss")
def smooth_l1_loss_grad(e, grads, inputs, outputs):
    x, t, red, beta = inputs
    gin = e.op("aten::smooth_l1_loss_backward", grads[0], x, t, red, beta)
    return _symmetric_grad(e, gin, x, t) + [None, None]


@derivative("aten::huber_loss")
def huber_loss_grad(e, grads, inputs, outputs):
    x, t, red, delta = inputs
    gin = e.op("aten::huber_loss_backward", grads[0], x, t, red, delta)
    return _symmetric_grad(e, gin, x, t) + [None, None]


@derivative("aten::l1_loss")
def l1_loss_grad(e, grads, inputs, outputs):
    x, t, red = inputs
    gin = e.op("aten::mul", e.op("aten::sign", e.op("aten::sub", x, t)), _scale(e, grads[0], x, t, red))
    return _symmetric_grad(e, gin, x, t) + [None]


# ---- binary cross entropy

def _log_clamped(v):
    with np.errstate(divide="ignore"):
        return np.maximum(np.log(v), -100.0)


@op("aten::binary_cross_entropy(Tensor self, Tensor target, Tensor? weight=None, int reduction=1) -> Tensor")
def binary_cross_entropy(self, target, weight=None, reduction=MEAN):
    if self.shape != target.shape:
        raise ValueError(f"Using a target size ({tuple(target.shape)}) that is different to the input size "
                         f"({tuple(self.shape)}) is deprecated. Please ensure they have the same size.")
    if self.size and (self.min() < 0 or self.max() > 1):
        raise RuntimeError("all elements of input should be between 0 and 1")
    loss = -(target * _log_clamped(self) + (1 - target) * _log_clamped(1 - self))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction, self.dtype)


@op("aten::binary_cross_entropy_backward(Tensor grad_output, Tensor self, Tensor target, Tensor? weight=None, int reduction=1) -> Tensor")
def binary_cross_entropy_backward(grad_output, self, target, weight=None, reduction=MEAN):
    g = grad_output * (self - target) / np.maximum((1 - self) * self, 1e-12)
    if weight is not None:
        g = g * weight
    if reduction == MEAN:
        g = g / self.size
    return np.asarray(g, dtype=self.dtype, order="C")


@derivative("aten::binary_cross_entropy")
def binary_cross_entropy_grad(e, grads, inputs, outputs):
    x, t, w, red = inputs
    gx = e.op("aten::binary_cross_entropy_backward", grads[0], x, t, w, red)
    # d/dt = w * (log(1 - x) - log(x)), logs clamped at -100 as in the forward
    lx = e.op("aten::clamp_min", e.op("aten::log", x), -100.0)
    l1x = e.op("aten::clamp_min", e.op("aten::log", e.op("aten::rsub", x, 1.0)), -100.0)
    gt = e.op("aten::mul", e.op("aten::sub", l1x, lx), _scale(e, grads[0], x, t, red))
    if e.is_tensor(w):
        gt = e.op("aten::mul", gt, w)
    return [gx, gt, None, None]


@op("aten::binary_cross_entropy_with_logits(Tensor self, Tensor target, Tensor? weight=None, Tensor? pos_weight=None, int reduction=1) -> Tensor")
def binary_cross_entropy_with_logits(self, target, weight=None, pos_weight=None, reduction=MEAN):
    if self.shape != target.shape:
        raise ValueError(f"Target size ({tuple(target.shape)}) must be the same as input size ({tuple(self.shape)})")
    softplus_neg = np.logaddexp(0, -self)  # -log(sigmoid(x))
    if pos_weight is not None:
        loss = (1 - target) * self + (1 + (pos_weight - 1) * target) * softplus_neg
    else:
        loss = (1 - target) * self + softplus_neg
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction, self.dtype)


@derivative("aten::binary_cross_entropy_with_logits")
def bce_with_logits_grad(e, grads, inputs, outputs):
    x, t, w, pw, red = inputs
    g = _scale(e, grads[0], x, t, red)
    if e.is_tensor(w):
        g = e.op("aten::mul", g, w)
    sig = e.op("aten::sigmoid", x)
    if e.is_tensor(pw):
        ptw = e.op("aten::mul", pw, t)
        lw = e.op("aten::add", e.op("aten::rsub", t, 1.0), ptw)  # 1 - t + pw t
        gx = e.op("aten::sub", e.op("aten::mul", lw, sig), ptw)
        # d/dt = -x - (pw - 1) log(sigmoid(x))
        gt = e.op("aten::sub", e.op("aten::neg", x),
                  e.op("aten::mul", e.op("aten::sub", pw, 1.0), e.op("aten::log_sigmoid", x)))
    else:
        gx = e.op("aten::sub", sig, t)
        gt = e.op("aten::neg", x)
    gx = e.sum_to(e.op("aten::mul", gx, g), x)
    gt = e.sum_to(e.op("aten::mul", gt, g), t)
    return [gx, gt, None, None, None]


# ---- KL divergence

@op("aten::kl_div(Tensor self, Tensor target, int reduction=1, *, bool log_target=False) -> Tensor")
def kl_div(self, target, reduction=MEAN, log_target=False):
    if log_target:
        loss = np.exp(target) * (target - self)
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            loss = np.where(target > 0, target * np.log(np.where(target > 0, target, 1)), 0) - target * self
        loss = np.where(np.isnan(target), np.nan, loss)
    return _reduce(loss, reduction, np.result_type(self.dtype, target.dtype))


@derivative("aten::kl_div")
def kl_div_grad(e, grads, inputs, outputs):
    x, t, red, log_target = inputs
    g = _scale(e, grads[0], x, t, red)
    if log_target:
        et = e.op("aten::exp", t)
        gx = e.op("aten::neg", e.op("aten::mul", et, g))
        gt = e.op("aten::mul", e.op("aten::mul", et, e.op("aten::add", e.op("aten::sub", t, x), 1.0)), g)
    else:
        gx = e.op("aten::neg", e.op("aten::mul", t, g))
        # d/dt [xlogy(t, t) - t x] = log t + 1 - x (0 where t == 0)
        inner = e.op("aten::sub", e.op("aten::add", e.op("aten::log", t), 1.0), x)
        inner = e.op("aten::where", e.op("aten::gt", t, 0), inner, 0.0)
        gt = e.op("aten::mul", inner, g)
    return [e.sum_to(gx, x), e.sum_to(gt, t), None, None]


# ---- NLL and cross entropy

def _class_dim(x):
    return 1 if x.ndim >= 2 else 0


def nll_forward(x, target, weight, reduction, ignore_index):
    """(loss, total_weight) of NLL for (C,), (N, C) or (N, C, d1, ...) inputs."""
    cd = _class_dim(x)
    c = x.shape[cd]
    if x.ndim >= 2 and target.shape != x.shape[:1] + x.shape[2:]:
        if target.shape[:1] != x.shape[:1]:
            raise ValueError(f"Expected input batch_size ({x.shape[0]}) to match target batch_size "
                             f"({target.shape[0] if target.ndim else 1}).")
        raise RuntimeError(f"size mismatch (got input: {list(x.shape)} , target: {list(target.shape)})")
    t = target.astype(np.int64)
    valid = t != ignore_index
    bad = valid & ((t < 0) | (t >= c))
    if bad.any():
        raise IndexError(f"Target {int(t[bad].flat[0])} is out of bounds.")
    tc = np.where(valid, t, 0)
    picked = np.take_along_axis(x, np.expand_dims(tc, cd), axis=cd).squeeze(cd) if x.ndim else x
    w = weight[tc] if weight is not None else np.ones(tc.shape, x.dtype)
    w = np.where(valid, w, 0).astype(x.dtype)
    loss = -picked * w
    total = np.asarray(w.sum(), dtype=x.dtype)
    if reduction == NONE:
        return np.asarray(loss, dtype=x.dtype, order="C"), np.asarray(0, x.dtype)
    if reduction == SUM:
        return np.asarray(loss.sum(), x.dtype), total
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(loss.sum() / total, x.dtype), total


def nll_backward(grad_output, x, target, weight, reduction, ignore_index, total_weight):
    cd = _class_dim(x)
    t = target.astype(np.int64)
    valid = t != ignore_index
    tc = np.where(valid, t, 0)
    w = weight[tc] if weight is not None else np.ones(tc.shape, x.dtype)
    w = np.where(valid, w, 0)
    g = -w * grad_output
    if reduction == MEAN:
        g = g / total_weight
    out = np.zeros_like(x)
    np.put_along_axis(out, np.expand_dims(tc, cd), np.expand_dims(g, cd).astype(x.dtype), axis=cd)
    return out


@op("aten::nll_loss_forward(Tensor self, Tensor target, Tensor? weight, int reduction, SymInt ignore_index) -> (Tensor output, Tensor total_weight)",
    "aten::nll_loss2d_forward(Tensor self, Tensor target, Tensor? weight, int reduction, SymInt ignore_index) -> (Tensor output, Tensor total_weight)")
def nll_loss_forward(self, target, weight, reduction, ignore_index):
    return nll_forward(self, target, weight, reduction, ignore_index)


@op("aten::nll_loss_backward(Tensor grad_output, Tensor self, Tensor target, Tensor? weight, int reduction, SymInt ignore_index, Tensor total_weight) -> Tensor",
    "aten::nll_loss2d_backward(Tensor grad_output, Tensor self, Tensor target, Tensor? weight, int reduction, SymInt ignore_index, Tensor total_weight) -> Tensor")
def nll_loss_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight):
    return nll_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight)


@op("aten::nll_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, SymInt ignore_index=-100) -> Tensor",
    "aten::nll_loss_nd(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, SymInt ignore_index=-100) -> Tensor",
    "aten::nll_loss2d(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, SymInt ignore_index=-100) -> Tensor")
def nll_loss(self, target, weight=None, reduction=MEAN, ignore_index=-100):
    return nll_forward(self, target, weight, reduction, ignore_index)[0]


def _nll_kind(e, x):
    return "aten::nll_loss_backward" if len(e.shape(x)) <= 2 else "aten::nll_loss2d_backward"


@derivative("aten::nll_loss_forward", "aten::nll_loss2d_forward")
def nll_loss_forward_grad(e, grads, inputs, outputs):
    x, t, w, red, ii = inputs
    if grads[0] is None:
        return [None] * 5
    return [e.op(_nll_kind(e, x), grads[0], x, t, w, red, ii, outputs[1]), None, None, None, None]


def _nll_grad(e, g, x, t, w, red, ii):
    fwd = "aten::nll_loss_forward" if len(e.shape(x)) <= 2 else "aten::nll_loss2d_forward"
    total = e.op(fwd, x, t, w, red, ii)[1]
    return e.op(_nll_kind(e, x), g, x, t, w, red, ii, total)


@derivative("aten::nll_loss", "aten::nll_loss_nd", "aten::nll_loss2d")
def nll_loss_grad(e, grads, inputs, outputs):
    x, t, w, red, ii = inputs
    if e.symbolic and e.node.kind == "aten::nll_loss" and (e.static_shape(e.node.inputs[0]) or ())[2:] == ():
        # symbolic_script: nll_loss_forward replaces the op, its total_weight captured, the
        # node's own arguments passed on to nll_loss_backward
        args = list(e.node.inputs)
        _, total = e.replace_forward("aten::nll_loss_forward", *args)
        return [e.op("aten::nll_loss_backward", grads[0], *args, total), None, None, None, None]
    return [_nll_grad(e, grads[0], x, t, w, red, ii), None, None, None, None]


def _log_softmax(x, cd):
    m = x.max(axis=cd, keepdims=True)
    z = x - m
    return z - np.log(np.exp(z).sum(axis=cd, keepdims=True))


def _weight_view(weight, x):
    cd = _class_dim(x)
    return weight.reshape((-1,) + (1,) * (x.ndim - cd - 1))


@op("aten::cross_entropy_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, SymInt ignore_index=-100, float label_smoothing=0.) -> Tensor")
def cross_entropy_loss(self, target, weight=None, reduction=MEAN, ignore_index=-100, label_smoothing=0.0):
    if self.dtype.kind != "f":
        raise RuntimeError(f'"log_softmax_lastdim_kernel_impl" not implemented for \'{self.dtype}\'')
    cd = _class_dim(self)
    c = self.shape[cd]
    lsm = _log_softmax(self, cd)
    if target.dtype.kind == "f":  # class probabilities
        if target.shape != self.shape:
            raise RuntimeError(f"Expected target size {list(self.shape)}, got {list(target.shape)}")
        q = target * (1 - label_smoothing) + label_smoothing / c if label_smoothing > 0 else target
        prod = lsm * q * (_weight_view(weight, self) if weight is not None else 1)
        loss = -prod.sum(axis=cd)
        if reduction == MEAN:
            return np.asarray(loss.sum() / (self.size / c if self.size else np.nan), self.dtype)
        return _reduce(loss, reduction, self.dtype)
    nll = nll_forward(lsm, target, weight, reduction, ignore_index)[0]
    if label_smoothing <= 0:
        return nll
    valid = target != ignore_index
    smooth = -(lsm * (_weight_view(weight, self) if weight is not None else 1)).sum(axis=cd)
    smooth = np.where(valid, smooth, 0)
    if reduction == MEAN:
        denom = weight[np.where(valid, target, 0)][valid].sum() if weight is not None else valid.sum()
        with np.errstate(invalid="ignore", divide="ignore"):
            ret = smooth.sum() / denom
    elif reduction == SUM:
        ret = smooth.sum()
    else:
        ret = smooth
    return np.asarray((1 - label_smoothing) * nll + ret * (label_smoothing / c), dtype=self.dtype, order="C")


@derivative("aten::cross_entropy_loss")
def cross_entropy_grad(e, grads, inputs, outputs):
    """Through log_softmax: the gradient w.r.t. the log-probabilities, then
    `_log_softmax_backward_data`. Soft targets and smoothing use pointwise ops."""
    x, t, w, red, ii, ls = inputs
    g = grads[0]
    shape = e.shape(x)
    cd = 1 if len(shape) >= 2 else 0
    c = shape[cd]
    lsm = e.op("aten::_log_softmax", x, cd, False)
    wv = e.op("aten::reshape", w, [-1] + [1] * (len(shape) - cd - 1)) if e.is_tensor(w) else None

    def per_position(gg):  # the upstream grad broadcastable against the class dim
        return e.op("aten::unsqueeze", gg, cd) if red == NONE else gg

    if dtype_code(e, t) in (5, 6, 7):  # class probabilities
        q = t if ls <= 0 else e.op("aten::add", e.op("aten::mul", t, 1 - ls), ls / c)
        if wv is not None:
            q = e.op("aten::mul", q, wv)
        scale = per_position(g if red != MEAN else e.op("aten::div", g, int(np.prod(shape)) // c))
        g_lsm = e.op("aten::neg", e.op("aten::mul", q, scale))
        # d/dt = -(1 - ls) * lsm * w * scale
        gt = e.op("aten::mul", e.op("aten::mul", lsm, scale), -(1 - ls) if ls > 0 else -1)
        if wv is not None:
            gt = e.op("aten::mul", gt, wv)
    else:
        gt = None
        g_lsm = _nll_grad(e, g, lsm, t, w, red, ii)
        if ls > 0:
            g_lsm = e.op("aten::mul", g_lsm, 1 - ls)
            valid = e.op("aten::ne", t, ii)
            if red == MEAN:
                if wv is not None:
                    total = _nll_grad_total(e, lsm, t, w, ii)
                else:
                    total = e.op("aten::sum", valid)
                gs = e.op("aten::div", g, total)
            else:
                gs = g
            gs = e.op("aten::mul", e.op("aten::unsqueeze", e.op("aten::mul", valid, gs), cd), -ls / c)
            if wv is not None:
                gs = e.op("aten::mul", gs, wv)
            g_lsm = e.op("aten::add", g_lsm, gs)
    gx = e.op("aten::_log_softmax_backward_data", g_lsm, lsm, cd, dtype_code(e, x))
    return [e.cast_like(gx, x), gt, None, None, None, None]


def _nll_grad_total(e, lsm, t, w, ii):
    fwd = "aten::nll_loss_forward" if len(e.shape(lsm)) <= 2 else "aten::nll_loss2d_forward"
    return e.op(fwd, lsm, t, w, MEAN, ii)[1]
