"""Normalization: batch norm (training statistics with in-place running-stat updates, or
running statistics in eval), instance norm, layer norm and group norm, with the
`native_*_backward` ops their derivatives call."""

from __future__ import annotations

import numpy as np

from .registry import derivative, op


def _fmt(shape) -> str:
    return "[" + ", ".join(str(int(s)) for s in shape) + "]"


def _into(op, out: np.ndarray, v) -> np.ndarray:
    """`op(out, v)`, written into `out` when that changes nothing (v's dtype does not widen
    out's): one array instead of one per step."""
    return op(out, v, out=out) if np.result_type(out, v) == out.dtype else op(out, v)


def _chan(v, ndim):
    """A per-channel (C,) vector broadcastable against (N, C, *)."""
    return v.reshape((1, -1) + (1,) * (ndim - 2))


def _bn_check(input, weight, running_mean, running_var):
    if input.ndim < 2:
        raise RuntimeError(f"batch_norm: expected 2D or more input (got {input.ndim}D input)")
    c = input.shape[1]
    for name, v in (("weight", weight), ("running_mean", running_mean), ("running_var", running_var)):
        if v is not None and v.size != c:
            raise RuntimeError(f"running_mean should contain {c} elements not {v.size}" if name == "running_mean"
                               else f"{name} should contain {c} elements not {v.size}")


def batch_norm_impl(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """(out, save_mean, save_invstd); updates running_mean/var in place when training."""
    _bn_check(input, weight, running_mean, running_var)
    dt = input.dtype
    axes = (0,) + tuple(range(2, input.ndim))
    if training:
        n = input.size // max(input.shape[1], 1)
        mean = input.mean(axis=axes)
        var = input.var(axis=axes)
        invstd = (1.0 / np.sqrt(var + eps)).astype(dt)
        if running_mean is not None:
            running_mean[...] = (1 - momentum) * running_mean + momentum * mean
        if running_var is not None:
            unbiased = var * n / max(n - 1, 1) if n > 1 else np.full_like(var, np.nan)
            running_var[...] = (1 - momentum) * running_var + momentum * unbiased
        save_mean, save_invstd = mean.astype(dt), invstd
    else:
        mean, invstd = running_mean, (1.0 / np.sqrt(running_var + eps)).astype(dt)
        save_mean, save_invstd = np.zeros(0, dt), np.zeros(0, dt)
    out = _into(np.multiply, input - _chan(mean, input.ndim), _chan(invstd, input.ndim))
    if weight is not None:
        out = _into(np.multiply, out, _chan(weight, input.ndim))
    if bias is not None:
        out = _into(np.add, out, _chan(bias, input.ndim))
    return np.asarray(out, dtype=dt, order="C"), save_mean, save_invstd


@op("aten::native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)",
    "aten::_native_batch_norm_legit(Tensor input, Tensor? weight, Tensor? bias, Tensor(a!) running_mean, Tensor(b!) running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)")
def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    if not training and (running_mean is None or running_var is None):
        raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
    return batch_norm_impl(input, weight, bias, running_mean, running_var, training, momentum, eps)


@op("aten::_native_batch_norm_legit.no_stats(Tensor input, Tensor? weight, Tensor? bias, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)")
def native_batch_norm_no_stats(input, weight, bias, training, momentum, eps):
    return batch_norm_impl(input, weight, bias, None, None, True, momentum, eps)


@op("aten::_native_batch_norm_legit_no_training(Tensor input, Tensor? weight, Tensor? bias, Tensor running_mean, Tensor running_var, float momentum, float eps) -> (Tensor, Tensor, Tensor)")
def native_batch_norm_no_training(input, weight, bias, running_mean, running_var, momentum, eps):
    return batch_norm_impl(input, weight, bias, running_mean, running_var, False, momentum, eps)


@op("aten::batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps, bool cudnn_enabled) -> Tensor")
def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled=True):
    return native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)[0]


@op("aten::native_batch_norm_backward(Tensor grad_out, Tensor input, Tensor? weight, Tensor? running_mean, Tensor? running_var, Tensor? save_mean, Tensor? save_invstd, bool train, float eps, bool[3] output_mask) -> (Tensor, Tensor, Tensor)")
def native_batch_norm_backward(grad_out, input, weight, running_mean, running_var, save_mean, save_invstd,
                               train, eps, output_mask):
    nd = input.ndim
    axes = (0,) + tuple(range(2, nd))
    if train:
        mean, invstd = save_mean, save_invstd
    else:
        mean, invstd = running_mean, 1.0 / np.sqrt(running_var + eps)
    xhat = (input - _chan(mean, nd)) * _chan(invstd, nd)
    gb = grad_out.sum(axis=axes)
    gw = (grad_out * xhat).sum(axis=axes)
    w = weight if weight is not None else np.ones(input.shape[1], input.dtype)
    gi = None
    if output_mask[0]:
        if train:
            m = input.size // input.shape[1]
            gi = _chan(w * invstd / m, nd) * (m * grad_out - _chan(gb, nd) - xhat * _chan(gw, nd))
        else:
            gi = grad_out * _chan(w * invstd, nd)
        gi = np.asarray(gi, dtype=input.dtype, order="C")
    return (gi, gw.astype(input.dtype) if output_mask[1] else None,
            gb.astype(input.dtype) if output_mask[2] else None)


def _bn_grad(e, g, x, w, b, rm, rv, save_mean, save_invstd, training, eps):
    if g is None:
        return None, None, None
    gi, gw, gb = e.op("aten::native_batch_norm_backward", g, x, w, rm, rv, save_mean, save_invstd, training,
                      eps, [True, e.is_tensor(w), e.is_tensor(b)])
    return gi, gw if e.is_tensor(w) else None, gb if e.is_tensor(b) else None


def _stats_grad(e, gi, x, g_mean, g_rstd, mean, rstd, count, view=None):
    """Add the gradient reaching the saved mean / inverse std (PyTorch leaves those outputs
    non-differentiable; here they get their true gradient):
    d mean/dx = 1/M, d rstd/dx = -rstd^3 (x - mean)/M."""
    if g_mean is None and g_rstd is None:
        return gi

    def v(t):
        return e.op("aten::reshape", t, view) if view is not None else t
    extra = None
    if g_mean is not None:
        extra = e.op("aten::div", v(g_mean), count)
    if g_rstd is not None:
        r = v(rstd)
        t = e.op("aten::mul", e.op("aten::mul", e.op("aten::mul", r, r), r), e.op("aten::sub", x, v(mean)))
        t = e.op("aten::div", e.op("aten::mul", t, e.op("aten::neg", v(g_rstd))), count)
        extra = t if extra is None else e.op("aten::add", extra, t)
    extra = e.op("aten::add", extra, e.zeros_like(x)) if e.shape(extra) != e.shape(x) else extra
    return extra if gi is None else e.op("aten::add", gi, extra)


@derivative("aten::native_batch_norm", "aten::_native_batch_norm_legit")
def native_batch_norm_grad(e, grads, inputs, outputs):
    x, w, b, rm, rv, training, momentum, eps = inputs
    gi, gw, gb = _bn_grad(e, grads[0], x, w, b, rm, rv, outputs[1], outputs[2], training, eps)
    if training:
        shape = e.shape(x)
        gi = _stats_grad(e, gi, x, grads[1], grads[2], outputs[1], outputs[2],
                         int(np.prod(shape)) // shape[1], [1, -1] + [1] * (len(shape) - 2))
    return [gi, gw, gb, None, None, None, None, None]


@derivative("aten::_native_batch_norm_legit.no_stats")
def native_batch_norm_no_stats_grad(e, grads, inputs, outputs):
    x, w, b, training, momentum, eps = inputs
    gi, gw, gb = _bn_grad(e, grads[0], x, w, b, None, None, outputs[1], outputs[2], True, eps)
    shape = e.shape(x)
    gi = _stats_grad(e, gi, x, grads[1], grads[2], outputs[1], outputs[2],
                     int(np.prod(shape)) // shape[1], [1, -1] + [1] * (len(shape) - 2))
    return [gi, gw, gb, None, None, None]


@derivative("aten::_native_batch_norm_legit_no_training")
def native_batch_norm_no_training_grad(e, grads, inputs, outputs):
    x, w, b, rm, rv, momentum, eps = inputs
    gi, gw, gb = _bn_grad(e, grads[0], x, w, b, rm, rv, None, None, False, eps)
    return [gi, gw, gb, None, None, None, None]


@op("aten::_batch_norm_impl_index(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps, bool cudnn_enabled) -> (Tensor, Tensor, Tensor, Tensor, int)")
def batch_norm_impl_index(input, weight, bias, running_mean, running_var, training, momentum, eps,
                          cudnn_enabled):
    """What symbolic_script's batch_norm runs: native batch norm (implementation 0, the only
    one on CPU), with an empty reserve."""
    out, save_mean, save_invstd = native_batch_norm(input, weight, bias, running_mean, running_var,
                                                    training, momentum, eps)
    return out, save_mean, save_invstd, np.zeros(0, np.uint8), 0


@op("aten::_batch_norm_impl_index_backward(int impl_index, Tensor input, Tensor grad_output, Tensor? weight, Tensor? running_mean, Tensor? running_var, Tensor? save_mean, Tensor? save_var_transform, bool train, float eps, bool[3] output_mask, Tensor reservedSpace) -> (Tensor, Tensor, Tensor)")
def batch_norm_impl_index_backward(impl_index, input, grad_output, weight, running_mean, running_var,
                                   save_mean, save_var_transform, train, eps, output_mask, reserved):
    return native_batch_norm_backward(grad_output, input, weight, running_mean, running_var, save_mean,
                                      save_var_transform, train, eps, output_mask)


@derivative("aten::batch_norm")
def batch_norm_grad(e, grads, inputs, outputs):
    x, w, b, rm, rv, training, momentum, eps = inputs[:8]
    if e.symbolic and e.node.kind == "aten::batch_norm":
        return _batch_norm_grad_spelled(e, grads[0])
    save_mean = save_invstd = None
    if training:  # recompute the batch statistics (without touching the running stats)
        _, save_mean, save_invstd = e.op("aten::native_batch_norm", x, None, None, None, None, True, 0.0, eps)
    gi, gw, gb = _bn_grad(e, grads[0], x, w, b, rm, rv, save_mean, save_invstd, training, eps)
    return [gi, gw, gb, None, None, None, None, None, None]


def _batch_norm_grad_spelled(e, g):
    """symbolic_script's batch_norm: `_batch_norm_impl_index` replaces the op in f, which
    also takes `weight is not None` / `bias is not None`; df's
    `_batch_norm_impl_index_backward` gets the node's own arguments and what f captured."""
    x, w, b, rm, rv, training, momentum, eps, cudnn = list(e.node.inputs)[:9]
    _, save1, save2, reserve, impl_idx = e.replace_forward("aten::_batch_norm_impl_index", x, w, b, rm, rv,
                                                           training, momentum, eps, cudnn)
    with e.forward():
        has_weight = e.op("aten::__isnot__", w, None)
        has_bias = e.op("aten::__isnot__", b, None)
    dinput, dweight, dbias = e.op("aten::_batch_norm_impl_index_backward", impl_idx, x, g, w, rm, rv, save1,
                                  save2, training, eps, e.list(True, has_weight, has_bias), reserve)
    return [dinput, dweight, dbias, None, None, None, None, None, None]


# ---- instance norm: group norm with one group per channel, or batch norm's eval path

@op("aten::instance_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool use_input_stats, float momentum, float eps, bool cudnn_enabled) -> Tensor")
def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps,
                  cudnn_enabled=True):
    if not use_input_stats:
        if running_mean is None or running_var is None:
            raise RuntimeError("Expected running_mean and running_var to be defined when use_input_stats is false")
        return batch_norm_impl(input, weight, bias, running_mean, running_var, False, momentum, eps)[0]
    n, c = input.shape[:2]
    x = input.reshape((1, n * c) + input.shape[2:])
    rm = None if running_mean is None else np.tile(running_mean, n)
    rv = None if running_var is None else np.tile(running_var, n)
    out = batch_norm_impl(x, None, None, rm, rv, True, momentum, eps)[0].reshape(input.shape)
    if running_mean is not None:
        running_mean[...] = rm.reshape(n, c).mean(axis=0)
    if running_var is not None:
        running_var[...] = rv.reshape(n, c).mean(axis=0)
    if weight is not None:
        out = out * _chan(weight, input.ndim)
    if bias is not None:
        out = out + _chan(bias, input.ndim)
    return np.asarray(out, dtype=input.dtype, order="C")


@derivative("aten::instance_norm")
def instance_norm_grad(e, grads, inputs, outputs):
    x, w, b, rm, rv, use_input_stats, momentum, eps = inputs[:8]
    if not use_input_stats:
        gi, gw, gb = _bn_grad(e, grads[0], x, w, b, rm, rv, None, None, False, eps)
    else:
        shape = e.shape(x)
        n, c, hw = shape[0], shape[1], int(np.prod(shape[2:]))
        _, mean, rstd = e.op("aten::native_group_norm", x, None, None, n, c, hw, c, eps)
        gi, gw, gb = e.op("aten::native_group_norm_backward", grads[0], x, mean, rstd, w, n, c, hw, c,
                          [True, e.is_tensor(w), e.is_tensor(b)])
    return [gi, gw if e.is_tensor(w) else None, gb if e.is_tensor(b) else None] + [None] * 6


# ---- layer norm

def _ln_axes(input, normalized_shape):
    ns = [int(s) for s in normalized_shape]
    k = len(ns)
    if k == 0 or input.ndim < k or list(input.shape[input.ndim - k:]) != ns:
        raise RuntimeError(f"Given normalized_shape={_fmt(ns)}, expected input with shape "
                           f"[*, {', '.join(map(str, ns))}], but got input of size{_fmt(input.shape)}")
    return tuple(range(input.ndim - k, input.ndim))


@op("aten::native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps) -> (Tensor, Tensor, Tensor)")
def native_layer_norm(input, normalized_shape, weight, bias, eps):
    axes = _ln_axes(input, normalized_shape)
    for name, v in (("weight", weight), ("bias", bias)):
        if v is not None and list(v.shape) != [int(s) for s in normalized_shape]:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                               f"{_fmt(v.shape)} and normalized_shape = {_fmt(normalized_shape)}")
    dt = input.dtype
    mean = input.mean(axis=axes, keepdims=True)
    centered = input - mean
    if dt in (np.float32, np.float64):  # np.var's own steps, with the centered values reused
        var = np.mean(centered * centered, axis=axes, keepdims=True)
    else:  # np.var sums float16 in float16, which np.mean would not
        var = input.var(axis=axes, keepdims=True)
    rstd = 1.0 / np.sqrt(var + eps)
    out = centered * rstd
    if weight is not None:
        out = _into(np.multiply, out, weight)
    if bias is not None:
        out = _into(np.add, out, bias)
    return np.asarray(out, dtype=dt, order="C"), mean.astype(dt), rstd.astype(dt)


@op("aten::layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? bias=None, float eps=1.0000000000000001e-05, bool cudnn_enable=True) -> Tensor")
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    return native_layer_norm(input, normalized_shape, weight, bias, eps)[0]


@op("aten::native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] normalized_shape, Tensor mean, Tensor rstd, Tensor? weight, Tensor? bias, bool[3] output_mask) -> (Tensor, Tensor, Tensor)")
def native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias, output_mask):
    axes = _ln_axes(input, normalized_shape)
    lead = tuple(range(input.ndim - len(axes)))
    xhat = (input - mean) * rstd
    gxhat = grad_out * weight if weight is not None else grad_out
    gi = gw = gb = None
    if output_mask[0]:
        gi = rstd * (gxhat - gxhat.mean(axis=axes, keepdims=True)
                     - xhat * (gxhat * xhat).mean(axis=axes, keepdims=True))
        gi = np.asarray(gi, dtype=input.dtype, order="C")
    if output_mask[1] and weight is not None:
        gw = (grad_out * xhat).sum(axis=lead).astype(weight.dtype)
    if output_mask[2] and bias is not None:
        gb = grad_out.sum(axis=lead).astype(bias.dtype)
    return gi, gw, gb


def _ln_grad(e, g, x, normalized_shape, w, b, mean, rstd):
    if g is None:
        return [None, None, None]
    gi, gw, gb = e.op("aten::native_layer_norm_backward", g, x, list(normalized_shape), mean, rstd, w, b,
                      [True, e.is_tensor(w), e.is_tensor(b)])
    return [gi, gw if e.is_tensor(w) else None, gb if e.is_tensor(b) else None]


@derivative("aten::native_layer_norm")
def native_layer_norm_grad(e, grads, inputs, outputs):
    x, ns, w, b, eps = inputs
    gi, gw, gb = _ln_grad(e, grads[0], x, ns, w, b, outputs[1], outputs[2])
    gi = _stats_grad(e, gi, x, grads[1], grads[2], outputs[1], outputs[2], int(np.prod(ns)))
    return [gi, None, gw, gb, None]


@derivative("aten::layer_norm")
def layer_norm_grad(e, grads, inputs, outputs):
    x, ns, w, b, eps = inputs[:5]
    if e.symbolic:
        # symbolic_script: native_layer_norm computes the result in the forward graph and its
        # mean and rstd are captured; output_mask = [True, weight is not None, bias is not None]
        weight, bias = e.node.inputs[2], e.node.inputs[3]
        _, mean, rstd = e.replace_forward("aten::native_layer_norm", *e.node.inputs[:5])
        mask = [e.const(True), e.op("aten::__isnot__", weight, None), e.op("aten::__isnot__", bias, None)]
        gi, gw, gb = e.op("aten::native_layer_norm_backward", grads[0], x, ns, mean, rstd, weight, bias, mask)
        return [gi, None, gw, gb, None, None]
    _, mean, rstd = e.op("aten::native_layer_norm", x, list(ns), None, None, eps)
    gi, gw, gb = _ln_grad(e, grads[0], x, ns, w, b, mean, rstd)
    return [gi, None, gw, gb, None, None]


# ---- group norm

@op("aten::native_group_norm(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, SymInt HxW, int group, float eps) -> (Tensor, Tensor, Tensor)")
def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    if C % group:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got "
                           f"input of shape {_fmt(input.shape)} and num_groups={group}")
    dt = input.dtype
    x = input.reshape(N, group, -1)
    mean = x.mean(axis=2)
    rstd = 1.0 / np.sqrt(x.var(axis=2) + eps)
    out = ((x - mean[..., None]) * rstd[..., None]).reshape(N, C, -1)
    if weight is not None:
        out = out * weight.reshape(1, C, 1)
    if bias is not None:
        out = out + bias.reshape(1, C, 1)
    return np.asarray(out.reshape(input.shape), dtype=dt, order="C"), mean.astype(dt), rstd.astype(dt)


@op("aten::group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, float eps=1.0000000000000001e-05, bool cudnn_enabled=True) -> Tensor")
def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    n, c = input.shape[0], input.shape[1]
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got "
                           f"input of shape {_fmt(input.shape)} and num_groups={num_groups}")
    for name, v in (("weight", weight), ("bias", bias)):
        if v is not None and v.size != c:
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in "
                               f"input, but got {name} of shape {_fmt(v.shape)} and input of shape {_fmt(input.shape)}")
    return native_group_norm(input, weight, bias, n, c, input.size // max(n * c, 1), num_groups, eps)[0]


@op("aten::native_group_norm_backward(Tensor grad_out, Tensor input, Tensor mean, Tensor rstd, Tensor? weight, SymInt N, SymInt C, SymInt HxW, int group, bool[3] output_mask) -> (Tensor, Tensor, Tensor)")
def native_group_norm_backward(grad_out, input, mean, rstd, weight, N, C, HxW, group, output_mask):
    x = input.reshape(N, group, C // group, -1)
    g = grad_out.reshape(N, group, C // group, -1)
    m, r = mean.reshape(N, group, 1, 1), rstd.reshape(N, group, 1, 1)
    xhat = (x - m) * r
    gi = gw = gb = None
    if output_mask[0]:
        gx = g * weight.reshape(1, group, C // group, 1) if weight is not None else g
        ax = (2, 3)
        gi = r * (gx - gx.mean(axis=ax, keepdims=True) - xhat * (gx * xhat).mean(axis=ax, keepdims=True))
        gi = np.asarray(gi.reshape(input.shape), dtype=input.dtype, order="C")
    if output_mask[1]:
        gw = (g * xhat).sum(axis=(0, 3)).reshape(C).astype(input.dtype)
    if output_mask[2]:
        gb = g.sum(axis=(0, 3)).reshape(C).astype(input.dtype)
    return gi, gw, gb


def _gn_grad(e, g, x, w, b, mean, rstd, n, c, hw, group):
    if g is None:
        return [None, None, None]
    gi, gw, gb = e.op("aten::native_group_norm_backward", g, x, mean, rstd, w, n, c, hw, group,
                      [True, e.is_tensor(w), e.is_tensor(b)])
    return [gi, gw if e.is_tensor(w) else None, gb if e.is_tensor(b) else None]


@derivative("aten::native_group_norm")
def native_group_norm_grad(e, grads, inputs, outputs):
    x, w, b, n, c, hw, group, eps = inputs
    gi, gw, gb = _gn_grad(e, grads[0], x, w, b, outputs[1], outputs[2], n, c, hw, group)
    if grads[1] is not None or grads[2] is not None:
        xg = e.op("aten::reshape", x, [n, group, -1])
        extra = _stats_grad(e, None, xg, grads[1], grads[2], outputs[1], outputs[2], (c // group) * hw,
                            [n, group, 1])
        extra = e.op("aten::reshape", extra, e.size(x))
        gi = extra if gi is None else e.op("aten::add", gi, extra)
    return [gi, gw, gb] + [None] * 5


@derivative("aten::group_norm")
def group_norm_grad(e, grads, inputs, outputs):
    x, group, w, b, eps = inputs[:5]
    shape = e.shape(x)
    n, c, hw = shape[0], shape[1], int(np.prod(shape[2:]))
    _, mean, rstd = e.op("aten::native_group_norm", x, None, None, n, c, hw, group, eps)
    gi, gw, gb = _gn_grad(e, grads[0], x, w, b, mean, rstd, n, c, hw, group)
    return [gi, None, gw, gb, None, None]
