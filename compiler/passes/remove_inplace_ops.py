"""Replace in-place arithmetic by its out-of-place form, mirroring PyTorch's RemoveInplaceOps
(remove_inplace_ops.cpp): `%y = aten::add_(%x, ...)` becomes `%y2 = aten::add(%x, ...)` and the
later uses of `%x` read `%y2`. Like PyTorch it assumes `%x` has no other alias (ONNX export)."""

from __future__ import annotations

from irjit.compiler.ir import Graph
from irjit.ops import facts
from irjit.ops.types import NONE

from .registry import register_pass


def _replace(graph: Graph, node) -> None:
    kind, arity = facts.out_of_place_variant(node.kind)
    new = graph.create(kind, node.inputs)
    new.source, new.scope = node.source, node.scope
    new.insert_before(node)
    for _ in range(arity - len(node.inputs)):
        none = graph.create("prim::Constant")
        none.output.type = NONE
        none.insert_before(new)
        new.add_input(none.output)
    new.output.copy_metadata(node.output)
    node.output.replace_all_uses_with(new.output)
    node.inputs[0].replace_all_uses_after_node_with(new, new.output)
    node.destroy()


def _remove(graph: Graph, block) -> bool:
    changed = False
    for node in list(block.nodes()):
        for b in node.blocks:
            changed |= _remove(graph, b)
        if facts.has_tag(node.kind, "inplace_with_out_of_place"):
            _replace(graph, node)
            changed = True
    return changed


@register_pass("remove_inplace_ops")
def run(graph: Graph) -> bool:
    """PyTorch's RemoveInplaceOps: add_/sub_/mul_/div_/masked_fill_/zero_/fill_ go out of place."""
    return _remove(graph, graph.block)
