"""Run forked work inline, mirroring PyTorch's InlineForkWait (inline_fork_wait.cpp): each
`prim::fork` is replaced by a copy of its subgraph at the fork, and each `aten::wait` on such a
future by the copy's result, so the graph runs sequentially."""

from __future__ import annotations

from irjit.compiler.ir import Graph, Value

from .registry import register_pass


def _insert_subgraph(fork) -> Value:
    graph, body = fork.graph, fork.attr("Subgraph")
    value_map = dict(zip(body.inputs, fork.inputs))
    for m in body.nodes():
        graph.clone_node(m, value_map).insert_before(fork)
    return value_map.get(body.outputs[0], body.outputs[0])


def _inline(block, futures: dict) -> bool:
    changed = False
    for node in list(block.nodes()):
        if node.kind == "prim::fork" and node.attr_kind("Subgraph") == "g":
            futures[node.output] = _insert_subgraph(node)
    # nested blocks first, so their waits still see the futures (PyTorch asserts there)
    for node in list(block.nodes()):
        for b in node.blocks:
            changed |= _inline(b, futures)
    for node in list(block.reversed_nodes()):
        if node.kind == "prim::fork" and node.output in futures:
            node.output.replace_all_uses_with(futures[node.output])
            node.destroy()
            changed = True
        elif node.kind == "aten::wait" and node.inputs[0] in futures:
            node.output.replace_all_uses_with(futures[node.inputs[0]])
            node.destroy()
            changed = True
    return changed


@register_pass("inline_fork_wait")
def run(graph: Graph) -> bool:
    """PyTorch's InlineForkWait: forks run in place and waits read their results."""
    return _inline(graph.block, {})
