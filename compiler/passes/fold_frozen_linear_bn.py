"""Fold an inference batch norm into the linear layer before it, mirroring PyTorch's
FoldFrozenLinearBatchnorm (frozen_linear_folding.cpp): `batch_norm(linear(x, W, b))` with
constant parameters becomes `linear(x, W', b')`."""

from __future__ import annotations

from irjit.compiler.ir import Graph

from .fold_frozen_conv_bn import fold_batch_norm
from .peephole_helpers import eliminate_dead_code
from ._rewrite import rewrite_nodes
from .registry import register_pass



def _is_batch_norm_of_linear(node) -> bool:
    return node.kind == "aten::batch_norm" and node.inputs[0].node.kind == "aten::linear"


@register_pass("fold_frozen_linear_bn")
def run(graph: Graph) -> bool:
    """PyTorch's FoldFrozenLinearBatchnorm: fold constant inference batch norms into linears."""
    changed = rewrite_nodes(graph.block, _is_batch_norm_of_linear,
                            lambda n: fold_batch_norm(graph, n.inputs[0].node, n))
    eliminate_dead_code(graph)
    return changed
