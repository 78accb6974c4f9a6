"""Scaled dot-product attention (causal, boolean or additive masks, grouped-query heads), and
the CPU flash-attention forward/backward ops its derivative calls. Rows whose every key is
masked give zeros, as PyTorch's math path does."""

from __future__ import annotations

import math

import numpy as np

from .nn_dropout import _dropout
from .registry import derivative, op


def _expand_kv(q, k, v):
    """Repeat key/value heads to match the query's (grouped-query attention)."""
    if k.ndim >= 3 and q.ndim >= 3 and k.shape[-3] != q.shape[-3]:
        hq, hk = q.shape[-3], k.shape[-3]
        if hq % hk:
            raise RuntimeError(f"number of heads in key/value ({hk}) must divide the number of heads in "
                               f"query ({hq})")
        k = np.repeat(k, hq // hk, axis=-3)
        v = np.repeat(v, hq // hk, axis=-3)
    return k, v


def _scores(q, k, attn_mask, is_causal, scale):
    sc = scale if scale is not None else 1.0 / math.sqrt(q.shape[-1])
    s = np.matmul(q, k.swapaxes(-1, -2)) * sc
    L, S = s.shape[-2], s.shape[-1]
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when "
                               "is_causal=True")
        s = np.where(np.tril(np.ones((L, S), dtype=bool)), s, -np.inf)
    if attn_mask is not None:
        s = np.where(attn_mask, s, -np.inf) if attn_mask.dtype == np.bool_ else s + attn_mask
    return s, sc


def _attention(q, k, v, attn_mask, is_causal, scale):
    """(output, logsumexp, probabilities) of attention without dropout."""
    k, v = _expand_kv(q, k, v)
    s, _ = _scores(q, k, attn_mask, is_causal, scale)
    m = s.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    ex = np.exp(s - m)
    tot = ex.sum(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(tot > 0, ex / np.where(tot > 0, tot, 1), 0)
        lse = np.where(tot[..., 0] > 0, np.log(np.where(tot[..., 0] > 0, tot[..., 0], 1)) + m[..., 0], -np.inf)
    return np.matmul(p, v), lse, p, v


@op("aten::scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, float dropout_p=0., bool is_causal=False, *, float? scale=None, bool enable_gqa=False) -> Tensor")
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    if not enable_gqa and query.ndim >= 3 and key.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        raise RuntimeError(f"Expected query, key and value to have the same number of heads (got "
                           f"{query.shape[-3]} and {key.shape[-3]}); pass enable_gqa=True for grouped-query attention")
    dt = np.result_type(query.dtype, key.dtype, value.dtype)
    if dropout_p > 0:
        k, v = _expand_kv(query, key, value)
        _, _, p, v = _attention(query, k, v, attn_mask, is_causal, scale)
        return np.asarray(np.matmul(_dropout(p, dropout_p, True, False, False), v), dtype=dt, order="C")
    return np.asarray(_attention(query, key, value, attn_mask, is_causal, scale)[0], dtype=dt, order="C")


@op("aten::_scaled_dot_product_flash_attention_for_cpu(Tensor query, Tensor key, Tensor value, float dropout_p=0., bool is_causal=False, *, Tensor? attn_mask=None, float? scale=None) -> (Tensor output, Tensor logsumexp)")
def sdpa_flash_cpu(query, key, value, dropout_p=0.0, is_causal=False, attn_mask=None, scale=None):
    if dropout_p > 0:
        raise NotImplementedError("flash attention with dropout is not supported")
    out, lse, _, _ = _attention(query, key, value, attn_mask, is_causal, scale)
    return np.asarray(out, dtype=query.dtype, order="C"), np.asarray(lse, dtype=query.dtype, order="C")


@op("aten::_scaled_dot_product_flash_attention_for_cpu_backward(Tensor grad_out, Tensor query, Tensor key, Tensor value, Tensor out, Tensor logsumexp, float dropout_p, bool is_causal, *, Tensor? attn_mask=None, float? scale=None) -> (Tensor grad_query, Tensor grad_key, Tensor grad_value)")
def sdpa_flash_cpu_backward(grad_out, query, key, value, out, logsumexp, dropout_p, is_causal, attn_mask=None,
                            scale=None):
    """Gradients from the saved logsumexp: P = exp(S - lse), dS = P * (dO V^T - rowsum(dO * O))."""
    k, v = _expand_kv(query, key, value)
    s, sc = _scores(query, k, attn_mask, is_causal, scale)
    lse = logsumexp[..., None]
    with np.errstate(invalid="ignore"):
        p = np.where(np.isfinite(lse), np.exp(s - np.where(np.isfinite(lse), lse, 0)), 0)
    gv = np.matmul(p.swapaxes(-1, -2), grad_out)
    dp = np.matmul(grad_out, v.swapaxes(-1, -2))
    ds = p * (dp - (grad_out * out).sum(axis=-1, keepdims=True))
    gq = np.matmul(ds, k) * sc
    gk = np.matmul(ds.swapaxes(-1, -2), query) * sc
    if key.ndim >= 3 and gk.shape[-3] != key.shape[-3]:  # fold grouped heads back
        grp = gk.shape[-3] // key.shape[-3]
        gk = gk.reshape(gk.shape[:-3] + (key.shape[-3], grp) + gk.shape[-2:]).sum(axis=-3)
        gv = gv.reshape(gv.shape[:-3] + (key.shape[-3], grp) + gv.shape[-2:]).sum(axis=-3)
    return (np.asarray(gq, dtype=query.dtype, order="C"), np.asarray(gk, dtype=key.dtype, order="C"),
            np.asarray(gv, dtype=value.dtype, order="C"))


@derivative("aten::scaled_dot_product_attention")
def sdpa_grad(e, grads, inputs, outputs):
    """Through the flash-attention ops; the gradient of an additive float mask is not given."""
    q, k, v, attn_mask, dropout_p, is_causal, scale, enable_gqa = inputs
    if dropout_p > 0:
        raise NotImplementedError("the derivative of scaled_dot_product_attention with dropout_p > 0 is not "
                                  "supported")
    out, lse = e.op("aten::_scaled_dot_product_flash_attention_for_cpu", q, k, v, 0.0, is_causal, attn_mask, scale)
    gq, gk, gv = e.op("aten::_scaled_dot_product_flash_attention_for_cpu_backward", grads[0], q, k, v, out, lse,
                      0.0, is_causal, attn_mask, scale)
    return [gq, gk, gv, None, None, None, None, None]
