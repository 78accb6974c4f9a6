"""Erase tensor shape information, mirroring PyTorch's EraseShapeInformation
(shape_analysis.cpp): every tensor type, also inside containers and subgraphs, becomes `Tensor`."""

from __future__ import annotations

from irjit.compiler.ir import Graph
from irjit.ops.types import (TENSOR, GenericType, ListType, OptionalType, TensorType,
                               TupleType, Type)

from .registry import register_pass


def unshaped(t: Type) -> Type:
    """PyTorch's unshapedType: tensor types lose everything, containers are mapped."""
    if isinstance(t, TensorType):
        return TENSOR
    if isinstance(t, ListType):
        return ListType(unshaped(t.elem))
    if isinstance(t, OptionalType):
        return OptionalType(unshaped(t.elem))
    if isinstance(t, TupleType):
        return TupleType(tuple(unshaped(e) for e in t.elems), t.names, t.defaults)
    if isinstance(t, GenericType):
        return GenericType(t.name, tuple(unshaped(a) for a in t.args), t.brackets)
    return t


def _erase(block) -> bool:
    changed = False
    for v in block.inputs:
        new = unshaped(v.type)
        changed |= new != v.type
        v.type = new
    for node in block.nodes():
        for v in node.outputs:
            new = unshaped(v.type)
            changed |= new != v.type
            v.type = new
        for b in node.blocks:
            changed |= _erase(b)
        if node.attr_kind("Subgraph") == "g":
            changed |= _erase(node.attr("Subgraph").block)
    return changed


@register_pass("erase_shape_information")
def run(graph: Graph) -> bool:
    """PyTorch's EraseShapeInformation: all tensor types become plain `Tensor`."""
    return _erase(graph.block)
