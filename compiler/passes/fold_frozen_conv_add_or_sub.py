"""Fold a constant added to (or subtracted from) a convolution's output into its bias,
mirroring PyTorch's FoldFrozenConvAddOrSub (frozen_conv_folding.cpp): in a frozen graph
`conv(x, w, b) + c` (c a per-channel constant or a scalar) becomes `conv(x, w, b + c)`."""

from __future__ import annotations

import numpy as np

from irjit.compiler.ir import Graph

from ._frozen_conv import insert_tensor, is_foldable_conv, is_none, operand_as, pointwise_operand_fits, tensor_of
from .peephole_helpers import const_value, eliminate_dead_code
from ._rewrite import rewrite_nodes
from .registry import register_pass


def _is_add_or_sub(node) -> bool:
    return node.kind in ("aten::add", "aten::sub") and len(node.inputs) == 3 and node.inputs[0].type.is_tensor()


def _fold(graph: Graph, op) -> bool:
    conv = op.inputs[0].node
    if not is_foldable_conv(conv) or not pointwise_operand_fits(conv, op):
        return False
    weight = tensor_of(conv.inputs[1])
    operand = operand_as(op.inputs[1], (weight.shape[0],), weight.dtype)
    bias = np.zeros(operand.shape, weight.dtype) if is_none(conv.inputs[2]) else tensor_of(conv.inputs[2])
    if bias is None:
        return False
    # like PyTorch, the add now reads constants (dead code once the conv no longer feeds it)
    op.replace_input(0, insert_tensor(graph, bias, conv))
    op.replace_input(1, insert_tensor(graph, operand, conv))
    alpha = const_value(op.inputs[2])
    folded = bias + alpha * operand if op.kind == "aten::add" else bias - alpha * operand
    b_value = conv.inputs[2]
    fused = insert_tensor(graph, folded.astype(bias.dtype), conv)
    fused.set_debug_name(f"{b_value.name}_fused_{op.kind.split('::')[1]}")
    conv.replace_input(2, fused)
    op.output.replace_all_uses_with(conv.output)
    return True



@register_pass("fold_frozen_conv_add_or_sub")
def run(graph: Graph) -> bool:
    """PyTorch's FoldFrozenConvAddOrSub: fold constant adds/subs after a convolution into its bias."""
    changed = rewrite_nodes(graph.block, _is_add_or_sub, lambda n: _fold(graph, n))
    eliminate_dead_code(graph)
    return changed
