"""The native partition pass: runs of lowerable nodes of a typed graph become
`prim::NativeGroup` nodes holding their Subgraph (printed like PyTorch's fusion groups), so a
printed graph shows which nodes run natively. A group reads each input once and outputs only
the values used after it; constants are copied in."""

from __future__ import annotations

import numpy as np

from irjit.compiler.ir import Block, Graph, Node
from irjit.compiler.passes.registry import register_pass
from irjit.compiler.passes.unroll_loops import create_clone

from .lower import can_lower, tensor_layout

GROUP = "prim::NativeGroup"


def _shape(node: Node) -> tuple:
    return tensor_layout(node.output.type)[1]


def _runs(block: Block) -> list[list[Node]]:
    """Maximal runs of lowerable nodes whose shapes broadcast together (constants between
    them do not break a run)."""
    runs, current, shape = [], [], ()
    for n in list(block.nodes()):
        if n.kind == "prim::Constant":
            continue
        if can_lower(n):
            try:
                joined = np.broadcast_shapes(shape, _shape(n)) if current else _shape(n)
            except ValueError:
                joined = None
            if joined is not None:
                current.append(n)
                shape = joined
                continue
            runs.append(current)
            current, shape = [n], _shape(n)
            continue
        if current:
            runs.append(current)
        current = []
    if current:
        runs.append(current)
    return [r for r in runs if r]


def make_group(run: list[Node]) -> Node:
    """Replace the nodes of `run` by one NativeGroup node."""
    g = run[0].graph
    members = set(run)
    group = g.create(GROUP, num_outputs=0)
    sub = Graph()
    group.set_attr("Subgraph", "g", sub)
    group.insert_before(run[0])
    vmap: dict = {}
    for n in run:
        for v in n.inputs:
            if v in vmap:
                continue
            if v.node.kind == "prim::Constant":
                vmap[v] = sub.block.append_node(create_clone(sub, v.node, lambda x: x)).output
            else:
                vmap[v] = sub.add_input(type=v.type)
                vmap[v].copy_metadata(v)
                group.add_input(v)
        clone = sub.block.append_node(create_clone(sub, n, lambda x: vmap[x]))
        vmap.update(zip(n.outputs, clone.outputs))
    for n in run:
        for o in n.outputs:
            if any(u.user not in members for u in o.uses):
                sub.register_output(vmap[o])
                out = group.add_output(o.type)
                o.replace_all_uses_with(out)
                out.copy_metadata(o)
    for n in reversed(run):
        n.destroy()
    return group


def partition_block(block: Block) -> bool:
    changed = False
    for n in block.nodes():
        for b in n.blocks:
            changed |= partition_block(b)
    for run in _runs(block):
        make_group(run)
        changed = True
    return changed


@register_pass("native_partition")
def native_partition(graph: Graph) -> bool:
    """Group the lowerable nodes of a typed graph into prim::NativeGroup units."""
    return partition_block(graph.block)
