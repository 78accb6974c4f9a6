"""Fuser canonicalization: scalar (0-dim) tensor constants as the second operand of
add/sub/mul/div become number constants, `aten::chunk` unpacked by a ListUnpack becomes
`prim::ConstantChunk`, then dead code is removed (PyTorch's CanonicalizeOps in graph_fuser.cpp)."""

from __future__ import annotations

from typing import Optional

from irjit.compiler.ir import Block, Graph, Node, TensorType, Value
from irjit.compiler.ir.constants import constant_value
from irjit.ops import facts

from .eliminate_dead_code import eliminate_dead_code
from .registry import register_pass


def _const(v: Value):
    return constant_value(v.node) if v.node.kind == "prim::Constant" else None


def _scalar_tensor_operand(n: Node) -> Optional[object]:
    """The number held by a 0-dim tensor constant `other`, for the Tensor overloads."""
    if not facts.has_tag(n.kind, "arithmetic") or len(n.inputs) < 2 or not n.inputs[0].type.is_tensor():
        return None
    other = n.inputs[1]
    if not isinstance(other.type, TensorType) or other.node.kind != "prim::Constant" \
            or other.node.attr_kind("value") != "t":
        return None
    data = other.node.attr("value").array
    if data is None or data.ndim != 0:
        return None
    return data.item()


def _chunk_outputs(n: Node) -> Optional[list[Value]]:
    if n.kind != "aten::chunk" or len(n.inputs) != 3 or len(n.output.uses) != 1:
        return None
    if not isinstance(_const(n.inputs[1]), int) or not isinstance(_const(n.inputs[2]), int):
        return None
    user = n.output.uses[0].user
    return list(user.outputs) if user.kind == "prim::ListUnpack" else None


def _canonicalize(block: Block) -> bool:
    changed = False
    g = block.graph
    for n in block.nodes():
        for b in n.blocks:
            changed |= _canonicalize(b)
        number = _scalar_tensor_operand(n)
        if number is not None:
            g.set_insert_point(n)
            inputs = list(n.inputs)
            inputs[1] = g.insert_constant(number)
            new = g.insert(n.kind, inputs)
            new.source, new.scope = n.source, n.scope
            new.output.copy_metadata(n.output)
            n.output.replace_all_uses_with(new.output)
            changed = True
            continue
        outs = _chunk_outputs(n)
        if outs is not None:
            g.set_insert_point(n)
            chunks, dim = _const(n.inputs[1]), _const(n.inputs[2])
            new = g.insert("prim::ConstantChunk", [n.inputs[0]], num_outputs=chunks,
                           chunks=("i", chunks), dim=("i", dim))
            new.source, new.scope = n.source, n.scope
            for o, no in zip(outs, new.outputs):
                no.type = o.type
                o.replace_all_uses_with(no)
            changed = True
    g.set_insert_point(g.block)
    return changed


@register_pass("canonicalize_graph_fuser_ops")
def run(graph: Graph) -> bool:
    """Rewrite 0-dim tensor constants in arithmetic to numbers and chunk+unpack to ConstantChunk, then DCE (PyTorch's CanonicalizeOps)."""
    changed = _canonicalize(graph.block)
    return eliminate_dead_code(graph) or changed
