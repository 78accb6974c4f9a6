"""`aten::linear` and its backward op `aten::linear_backward`, which the recurrent cells'
derivatives reuse."""

from __future__ import annotations

import numpy as np

from .linalg import fold_matmul
from .registry import derivative, op
from .types import NONE, TENSOR, OptionalType


@op("aten::linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor")
def linear(input, weight, bias=None):
    if weight.ndim not in (1, 2):
        raise RuntimeError(f"linear(): weight must be 1D or 2D, got {weight.ndim}D")
    wt = weight.T
    k = input.shape[-1] if input.ndim else 1
    if input.ndim == 0 or k != wt.shape[0]:
        m1 = (int(np.prod(input.shape[:-1])), k) if input.ndim >= 2 else (1, k)
        m2 = wt.shape if wt.ndim == 2 else (wt.shape[0], 1)
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({m1[0]}x{m1[1]} and {m2[0]}x{m2[1]})")
    dt = np.result_type(input.dtype, weight.dtype)
    out = fold_matmul(input, wt)
    if bias is not None:
        out = out + bias
    return np.asarray(out, dtype=dt, order="C")


@op("aten::linear_backward(Tensor self, Tensor grad_output, Tensor weight, bool[3] output_mask) -> (Tensor, Tensor, Tensor)")
def linear_backward(self, grad_output, weight, output_mask):
    """Gradients of `linear(self, weight, bias)` for a 2-D weight (the bias gradient sums the
    grad over all leading dims)."""
    gi = gw = gb = None
    g = grad_output
    if weight.ndim == 1:
        g = g[..., None]
        w2 = weight[None, :]
    else:
        w2 = weight
    if output_mask[0]:
        gi = np.asarray(np.matmul(g, w2), dtype=self.dtype, order="C")
        if self.ndim == 1 and gi.ndim > 1:
            gi = gi.reshape(self.shape)
    g2 = g.reshape(-1, g.shape[-1])
    x2 = self.reshape(-1, self.shape[-1])
    if output_mask[1]:
        gw = np.matmul(g2.T, x2).reshape(weight.shape).astype(weight.dtype)
    if output_mask[2]:
        gb = g2.sum(axis=0).reshape(grad_output.shape[-1:] if weight.ndim == 2 else ()).astype(grad_output.dtype)
    return gi, gw, gb


def linear_grads(e, g, x, w, b):
    """[grad input, grad weight, grad bias] of linear through `aten::linear_backward`."""
    if g is None:
        return [None, None, None]
    gi, gw, gb = e.op("aten::linear_backward", x, g, w, [True, True, e.is_tensor(b)])
    if e.is_tensor(b):
        gb = e.sum_to(gb, b)
    return [gi, gw, gb if e.is_tensor(b) else None]


@derivative("aten::linear")
def linear_grad(e, grads, inputs, outputs):
    x, w, b = inputs
    if e.symbolic:
        return _linear_grad_at_run_time(e, grads[0], x, w, e.node.inputs[2])
    return linear_grads(e, grads[0], x, w, b)


def _linear_grad_at_run_time(e, g, x, w, bias):
    """symbolic_script's linear: the bias gradient under `if bias is not None` (a None bias
    constant needs none: PyTorch's dead code elimination drops that branch), the products
    through `weight.size()` read when the backward runs."""
    grad_bias = None
    if bias.node.kind != "prim::Constant" or bias.type != NONE:
        def summed():
            known = e.unchecked_cast(bias, TENSOR)
            return e.op("aten::_grad_sum_to_size", g, e.op("aten::size", known))
        grad_bias = e.if_(e.op("aten::__isnot__", bias, None), summed, lambda: (None,),
                          types=[OptionalType(TENSOR)])
    weight_size = e.op("aten::size", w)
    grad_input = e.op("aten::matmul", g, w)
    rows = e.op("aten::t", e.op("aten::reshape", g, e.list(-1, e.op("aten::__getitem__", weight_size, 0))))
    grad_weight = e.op("aten::matmul", rows, e.op("aten::reshape", x, e.list(-1, e.op("aten::__getitem__", weight_size, 1))))
    return [grad_input, grad_weight, None if grad_bias is None else e.unwrap_optional(grad_bias)]
