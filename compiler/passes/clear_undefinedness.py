"""PyTorch's ClearUndefinedness (clear_undefinedness.cpp): the graph's inputs and every node
output of tensor type become plain `Tensor` (tensor lists `Tensor[]`), so that no later pass
reads a shape, dtype or definedness a value's type claimed before the executor profiled it.
The profiling executor runs it before profiling: a backward graph's inputs carry the complete
types of the forward that made them, which another call's sizes need not match."""

from __future__ import annotations

from irjit.compiler.ir import Graph
from irjit.ops.types import TENSOR, ListType, TensorType

from .registry import register_pass


def _clear(values) -> bool:
    changed = False
    for v in values:
        t = v.type
        if isinstance(t, TensorType):
            new = TENSOR
        elif isinstance(t, ListType) and isinstance(t.elem, TensorType):
            new = ListType(TENSOR)
        else:
            continue
        changed |= new != t
        v.type = new
    return changed


def _clear_block(block) -> bool:
    changed = False
    for node in block.nodes():
        changed |= _clear(node.outputs)
        for b in node.blocks:
            changed |= _clear_block(b)
    return changed


@register_pass("clear_undefinedness")
def run(graph: Graph) -> bool:
    """Every tensor type of the graph's inputs and node outputs becomes `Tensor`."""
    return _clear(graph.inputs) | _clear_block(graph.block)
