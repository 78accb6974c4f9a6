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


def unmerge_node(n: Node, group: Node) -> None:
    """Move `n` out of `group`'s subgraph to right after `group` (PyTorch's unmergeNode): its
    inputs computed inside become group outputs (constants are cloned instead), and group
    outputs that were `n`'s results are replaced by the moved node's."""
    sub: Graph = group.attr("Subgraph")
    local: dict[Value, Value] = {}
    produced = set(n.outputs)
    output_indices = [i for i, v in enumerate(sub.outputs) if v in produced]
    for i, v in enumerate(sub.outputs):
        if v in n.inputs and v not in local:
            local[v] = group.outputs[i]
    anchor = group
    for v in n.inputs:
        if v in local:
            continue
        if v.node.kind == "prim::Constant":
            c = group.graph.clone_node(v.node, {})
            c.insert_after(anchor)
            anchor = c
            local[v] = c.output
        else:
            sub.register_output(v)
            out = group.add_output(v.type)
            local[v] = out
    moved = group.graph.clone_node(n, local)
    moved.insert_after(anchor)
    for old, new in zip(n.outputs, moved.outputs):
        new.copy_metadata(old)
        local[old] = new
    for i in reversed(output_indices):
        group.outputs[i].replace_all_uses_with(local[sub.outputs[i]])
        group.erase_output(i)
        sub.erase_output(i)
    n.destroy()


def _users_closure(start: Node, acc: set) -> None:
    """`start` and every node of its graph that uses its results, transitively."""
    if start.kind in ("prim::Param", "prim::Return") or start in acc:
        return
    acc.add(start)
    for o in start.outputs:
        for u in o.uses:
            _users_closure(u.user, acc)


def _unmerge_all(group: Node, starts: list[Node]) -> bool:
    nodes: set[Node] = set()
    for s in starts:
        _users_closure(s, nodes)
    sub: Graph = group.attr("Subgraph")
    order = {m: i for i, m in enumerate(sub.nodes())}
    for m in sorted((m for m in nodes if m in order), key=order.get, reverse=True):
        unmerge_node(m, group)
    return bool(nodes)


def unmerge_outputs_aliasing_inputs(group: Node, alias_db) -> bool:
    """Move out the nodes (and their users) whose results are group outputs that may alias a
    group input: autodiff cannot differentiate through such views (PyTorch's
    unmergeOutputsAlisingInputs)."""
    sub: Graph = group.attr("Subgraph")
    starts = [o.node for o in sub.outputs if alias_db.may_contain_alias([o], sub.inputs)]
    return _unmerge_all(group, starts)


def unmerge_aliased_outputs(group: Node, alias_db) -> bool:
    """Of group outputs that may alias each other keep the earliest inside and move the nodes
    of the others out (PyTorch's unmergeAliasedOutputs)."""
    sub: Graph = group.attr("Subgraph")
    if len(group.outputs) < 2:
        return False
    sets: list[list[Value]] = []
    for o in sub.outputs:
        for s in sets:
            if alias_db.may_contain_alias([s[0]], [o]):
                if o not in s:
                    s.append(o)
                break
        else:
            sets.append([o])
    order = {m: i for i, m in enumerate(sub.nodes())}
    starts = []
    for s in sets:
        if len(s) > 1:
            s.sort(key=lambda v: order.get(v.node, -1))
            starts += [v.node for v in s[1:]]
    return _unmerge_all(group, starts)
