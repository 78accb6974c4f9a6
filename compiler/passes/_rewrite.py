"""A walker the local rewrite passes share: visit every node (nested blocks first, in order) and
rewrite the ones that match, as PyTorch's frozen-graph folds and FuseAddMM do."""

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
