"""Merging nodes into and out of `Subgraph` nodes (PyTorch's passes/utils/subgraph_utils.cpp)."""

from __future__ import annotations

from irjit.compiler.ir.graph import Graph
from irjit.compiler.ir.node import Node, Value


def create_singleton_subgraph(n: Node, kind: str) -> Node:
    g = n.graph
    group = g.create(kind, [], num_outputs=0)
    group.set_attr("Subgraph", "g", Graph())
    group.insert_before(n)
    merge_node_into_subgraph(n, group)
    return group


def merge_node_into_subgraph(to_merge: Node, group: Node) -> None:
    """Move `to_merge` (just before `group`, or anywhere before it) to the front of the subgraph."""
    sub: Graph = group.attr("Subgraph")
    in_map = {outer: inner for outer, inner in zip(group.inputs, sub.inputs)}
    first = sub.block.first_node
    vm: dict[Value, Value] = {}
    for v in _free_values(to_merge):
        if v in vm:
            continue
        if v in in_map:
            vm[v] = in_map[v]
        elif v.node.kind == "prim::Constant":
            c = sub.clone_node(v.node, {})
            c.insert_before(first)
            vm[v] = c.output
        else:
            nv = sub.add_input(type=v.type)
            nv.copy_metadata(v)
            group.add_input(v)
            in_map[v] = nv
            vm[v] = nv
    merged = sub.clone_node(to_merge, vm)
    merged.insert_before(first)
    # subgraph inputs that `to_merge` produced become internal values
    for i in reversed(range(len(group.inputs))):
        outer = group.inputs[i]
        if outer.node is to_merge:
            inner = sub.inputs[i]
            inner.replace_all_uses_with(vm[outer])
            group.remove_input(i)
            sub.erase_input(i)
    # outputs still used outside become outputs of the group
    for old, new in zip(to_merge.outputs, merged.outputs):
        if old.uses:
            sub.register_output(new)
            out = group.add_output(old.type)
            old.replace_all_uses_with(out)
    to_merge.destroy()


def _free_values(n: Node) -> list[Value]:
    """The node's inputs and the values its nested blocks use from outside it, in order."""
    free: list[Value] = list(n.inputs)
    defined: set[Value] = set()
    for m in n.walk():
        for b in m.blocks:
            defined.update(b.inputs)
        defined.update(m.outputs)
    for b in n.blocks:
        defined.update(b.inputs)
    for m in list(n.walk()) + [b.return_node for b in n.blocks]:
        free.extend(v for v in m.inputs if v not in defined and v not in free)
    for m in n.walk():
        for b in m.blocks:
            free.extend(v for v in b.outputs if v not in defined and v not in free)
    return free


def unmerge_subgraph(group: Node) -> list[Node]:
    """Inline the subgraph at the group's position; return the inlined nodes."""
    sub: Graph = group.attr("Subgraph")
    g = group.graph
    vm = {inner: outer for inner, outer in zip(sub.inputs, group.inputs)}
    nodes = []
    for n in sub.nodes():
        c = g.clone_node(n, vm)
        c.insert_before(group)
        nodes.append(c)
    for out, inner in zip(group.outputs, sub.outputs):
        new = vm.get(inner, inner)
        if out.debug_name and not new.debug_name:
            new.set_debug_name(out.debug_name)
        out.replace_all_uses_with(new)
    group.destroy()
    return nodes
