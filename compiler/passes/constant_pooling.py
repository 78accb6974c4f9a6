"""Constant pooling: move every `prim::Constant` to the start of the graph and merge equal
ones (PyTorch's ConstantPooling)."""

from __future__ import annotations

from irjit.compiler.ir import Block, Graph, Node

from ._side_effects import AliasDb
from .eliminate_common_subexpression import node_key
from .registry import register_pass


def _pool(block: Block, seen: dict[tuple, Node], db: AliasDb) -> bool:
    changed = False
    top = block.graph.block
    for n in block.nodes():
        if n.blocks:
            for b in n.blocks:
                changed |= _pool(b, seen, db)
            continue
        if n.kind != "prim::Constant":
            continue
        key = node_key(n)
        existing = seen.get(key) if key is not None else None
        if existing is not None:
            if not db.safe_to_change_aliasing(n.outputs, existing.outputs):
                continue
            n.output.replace_all_uses_with(existing.output)
            n.destroy()
            changed = True
            continue
        if key is not None:
            seen[key] = n
        first = top.first_node
        if n is not first:
            # Each new constant goes to the very front, so the pooled ones end up reversed.
            n.move_before(first)
            changed = True
    return changed


@register_pass("constant_pooling")
def run(graph: Graph) -> bool:
    """Hoist constants to the top of the graph and deduplicate them (PyTorch's ConstantPooling)."""
    return _pool(graph.block, {}, AliasDb(graph))
