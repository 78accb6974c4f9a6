"""What the local rewrite passes share: a walker that visits every node (nested blocks first, in
order) and rewrites the ones that match, as PyTorch's frozen-graph folds and FuseAddMM do, and
the read test the node-moving passes need."""

from __future__ import annotations

from typing import Callable

from irjit.compiler.ir import Block, Node


def rewrite_nodes(block: Block, matches: Callable[[Node], bool],
                  rewrite: Callable[[Node], bool]) -> bool:
    """Call `rewrite(node)` on each node of `block` (and the blocks inside it) that `matches`;
    return whether any rewrite changed the graph."""
    changed = False
    for node in list(block.nodes()):
        for b in node.blocks:
            changed |= rewrite_nodes(b, matches, rewrite)
        if matches(node):
            changed |= rewrite(node)
    return changed


def reads_any(node: Node, values: set) -> bool:
    """Whether `node`, a node nested in it, or a block inside it (through its returns) reads
    one of `values`: it cannot move above the nodes that produce them."""
    return any(v in values for m in (node, *node.walk())
               for v in (*m.inputs, *(o for b in m.blocks for o in b.outputs)))
