"""Fold an inference batch norm into the convolution before it, mirroring PyTorch's
FoldFrozenConvBatchnorm (frozen_conv_folding.cpp): in a frozen graph, `batch_norm(conv(x, w, b))`
becomes `conv(x, w', b')` with `w' = w * g/sqrt(var+eps)` and `b' = (b - mean) * g/sqrt(var+eps) + beta`."""

from __future__ import annotations

import numpy as np

from irjit.compiler.ir import Graph

from ._frozen_conv import constant_parameters, insert_tensor, is_foldable_conv, is_none, tensor_of
from .peephole_helpers import const_value, eliminate_dead_code
from ._rewrite import rewrite_nodes
from .registry import register_pass


def fused_weight_and_bias(w, b, mean, var, eps, gamma, beta):
    """PyTorch's computeUpdatedConvWeightAndBias (also right for linear weights): the weight
    scaled per output channel by gamma/sqrt(var+eps), the bias shifted and scaled to match."""
    rsqrt = (1.0 / np.sqrt(var + np.asarray(eps, var.dtype))).astype(var.dtype)
    new_w = w * (gamma * rsqrt).reshape((-1,) + (1,) * (w.ndim - 1))
    new_b = (b - mean) * rsqrt * gamma + beta
    return new_w.astype(w.dtype), new_b.astype(b.dtype)


def fold_batch_norm(graph: Graph, producer, bn) -> bool:
    """Fold `bn` into `producer` (a conv or linear node whose weight is input 1, bias input 2)
    when all their parameters are constants with data; PyTorch's shared folding body."""
    if not constant_parameters(producer) or not constant_parameters(bn):
        return False
    if is_none(bn.inputs[3]) and is_none(bn.inputs[4]):
        return False  # track_running_stats=False: nothing to fold
    mean, var, w = tensor_of(bn.inputs[3]), tensor_of(bn.inputs[4]), tensor_of(producer.inputs[1])
    if mean is None or var is None or w is None or not np.issubdtype(w.dtype, np.floating):
        return False
    b = np.zeros_like(mean) if is_none(producer.inputs[2]) else tensor_of(producer.inputs[2])
    gamma = np.ones_like(mean) if is_none(bn.inputs[1]) else tensor_of(bn.inputs[1])
    beta = np.zeros_like(mean) if is_none(bn.inputs[2]) else tensor_of(bn.inputs[2])
    if b is None or gamma is None or beta is None:
        return False
    new_w, new_b = fused_weight_and_bias(w, b, mean, var, const_value(bn.inputs[7]), gamma, beta)
    w_value, b_value = producer.inputs[1], producer.inputs[2]
    fused_w = insert_tensor(graph, new_w, producer).set_debug_name(w_value.name + "_fused_bn")
    fused_b = insert_tensor(graph, new_b, producer).set_debug_name(b_value.name + "_fused_bn")
    producer.replace_input(1, fused_w)
    producer.replace_input(2, fused_b)
    bn.output.replace_all_uses_with(producer.output)
    return True


def _fold(graph: Graph, bn) -> bool:
    conv = bn.inputs[0].node
    if not is_foldable_conv(conv) or len(conv.output.uses) > 1:
        return False
    return fold_batch_norm(graph, conv, bn)



@register_pass("fold_frozen_conv_bn")
def run(graph: Graph) -> bool:
    """PyTorch's FoldFrozenConvBatchnorm: fold constant inference batch norms into convolutions."""
    changed = rewrite_nodes(graph.block, lambda n: n.kind == "aten::batch_norm",
                            lambda n: _fold(graph, n))
    eliminate_dead_code(graph)
    return changed
