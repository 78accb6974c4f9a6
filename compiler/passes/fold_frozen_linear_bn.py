"""Fold an inference batch norm into the linear layer before it, mirroring PyTorch's
FoldFrozenLinearBatchnorm (frozen_linear_folding.cpp): `batch_norm(linear(x, W, b))` with
constant parameters becomes `linear(x, W', b')`."""

from __future__ import annotations

from irjit.compiler.ir import Graph

from .fold_frozen_conv_bn import fold_batch_norm
from .peephole_helpers import eliminate_dead_code
from .registry import register_pass


def _walk(graph: Graph, block) -> bool:
    changed = False
    for node in list(block.nodes()):
        for b in node.blocks:
            changed |= _walk(graph, b)
        if node.kind == "aten::batch_norm" and node.inputs[0].node.kind == "aten::linear":
            changed |= fold_batch_norm(graph, node.inputs[0].node, node)
    return changed


@register_pass("fold_frozen_linear_bn")
def run(graph: Graph) -> bool:
    """PyTorch's FoldFrozenLinearBatchnorm: fold constant inference batch norms into linears."""
    changed = _walk(graph, graph.block)
    eliminate_dead_code(graph)
    return changed
