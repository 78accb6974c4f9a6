"""Fold a constant multiplying (or dividing) a convolution's output into its weight and bias,
mirroring PyTorch's FoldFrozenConvMulOrDiv (frozen_conv_folding.cpp): in a frozen graph
`conv(x, w, b) * c` (c per-channel or scalar) becomes `conv(x, w * c, b * c)`."""

from __future__ import annotations

import numpy as np

from irjit.compiler.ir import Graph

from ._frozen_conv import insert_tensor, is_foldable_conv, is_none, operand_as, pointwise_operand_fits, tensor_of
from .peephole_helpers import eliminate_dead_code
from ._rewrite import rewrite_nodes
from .registry import register_pass


def _is_mul_or_div(node) -> bool:
    return node.kind in ("aten::mul", "aten::div") and len(node.inputs) == 2 and node.inputs[0].type.is_tensor()


def _apply(kind: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b if kind == "aten::mul" else a / b).astype(a.dtype)


def _fold(graph: Graph, op) -> bool:
    conv = op.inputs[0].node
    if not is_foldable_conv(conv) or not pointwise_operand_fits(conv, op):
        return False
    weight = tensor_of(conv.inputs[1])
    bias = None if is_none(conv.inputs[2]) else tensor_of(conv.inputs[2])
    if bias is None and not is_none(conv.inputs[2]):
        return False
    suffix = "_fused_" + op.kind.split("::")[1]
    scale_w = operand_as(op.inputs[1], (weight.shape[0],) + (1,) * (weight.ndim - 1), weight.dtype)
    # like PyTorch, the op now reads constants (dead code once the conv no longer feeds it)
    op.replace_input(0, insert_tensor(graph, weight, conv))
    op.replace_input(1, insert_tensor(graph, scale_w, conv))
    fused_w = insert_tensor(graph, _apply(op.kind, weight, scale_w), conv)
    fused_w.set_debug_name(conv.inputs[1].name + suffix)
    conv.replace_input(1, fused_w)
    if bias is not None:
        scale_b = operand_as(op.inputs[1], (weight.shape[0],), bias.dtype)
        op.replace_input(0, insert_tensor(graph, bias, conv))
        op.replace_input(1, insert_tensor(graph, scale_b, conv))
        fused_b = insert_tensor(graph, _apply(op.kind, bias, scale_b), conv)
        # PyTorch 2.13 names the folded *weight* after the bias here (and leaves the bias unnamed)
        fused_w.set_debug_name(conv.inputs[2].name + suffix)
        conv.replace_input(2, fused_b)
    op.output.replace_all_uses_with(conv.output)
    return True



@register_pass("fold_frozen_conv_mul_or_div")
def run(graph: Graph) -> bool:
    """PyTorch's FoldFrozenConvMulOrDiv: fold constant muls/divs after a convolution into it."""
    changed = rewrite_nodes(graph.block, _is_mul_or_div, lambda n: _fold(graph, n))
    eliminate_dead_code(graph)
    return changed
