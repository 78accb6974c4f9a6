"""Refine tuple types from their elements, mirroring PyTorch's RefineTupleTypes
(refine_tuple_types.cpp): each `prim::TupleConstruct` output gets the (possibly more precise)
types of its inputs as its element types; a NamedTuple keeps its names."""

from __future__ import annotations

from dataclasses import replace

from irjit.compiler.ir import Graph
from irjit.ops.types import TupleType

from .registry import register_pass


@register_pass("refine_tuple_types")
def run(graph: Graph) -> bool:
    """PyTorch's RefineTupleTypes: TupleConstruct outputs take their inputs' types."""
    changed = False
    for node in graph.walk():
        if node.kind != "prim::TupleConstruct" or not isinstance(node.output.type, TupleType):
            continue
        old = node.output.type
        assert len(old.elems) == len(node.inputs), f"{node}: element count differs from its type"
        new = replace(old, elems=tuple(v.type for v in node.inputs))
        changed |= new != old
        node.output.type = new
    return changed
