"""Canonicalization: renumber every value in program order, as a fresh copy of the graph
would be numbered, keeping or dropping debug names (PyTorch's Canonicalize)."""

from __future__ import annotations

from irjit.compiler.ir import Graph

from .registry import register_pass


def canonical_copy(graph: Graph, keep_unique_names: bool = True) -> Graph:
    """PyTorch's `Canonicalize(graph, keep_unique_names)`: a copy numbered in program order;
    without `keep_unique_names`, graph inputs and top-level node outputs lose their names."""
    r = Graph()
    env = {}
    for v in graph.inputs:
        nv = r.add_input(None, v.type)
        if keep_unique_names and v.debug_name is not None:
            nv.set_debug_name(v.debug_name)
        env[v] = nv
    for n in graph.nodes():
        c = r.clone_node(n, env)
        if not keep_unique_names:
            for o in c.outputs:
                o.set_debug_name(None)
        r.block.append_node(c)
        if n.attr_kind("Subgraph") == "g":
            c.set_attr("Subgraph", "g", canonical_copy(n.attr("Subgraph"), keep_unique_names))
    for v in graph.outputs:
        r.register_output(env[v])
    return r


def replace_graph_contents(graph: Graph, new: Graph) -> None:
    """Make `graph` hold `new`'s blocks, nodes, values and names (in place, for passes)."""
    for n in [new.block.param_node, new.block.return_node, *new.walk()]:
        n.graph = graph
        for b in n.blocks:
            b.graph = graph
            b.param_node.graph = graph
            b.return_node.graph = graph
    new.block.graph = graph
    for field in ("next_unique", "unique_names", "_name_base_suffix", "_used_uniques",
                  "scope_root", "current_scope", "block", "_insert_point"):
        setattr(graph, field, getattr(new, field))


@register_pass("canonicalize")
def run(graph: Graph, keep_unique_names: bool = True) -> bool:
    """Renumber values in program order, keeping debug names unless keep_unique_names=False (PyTorch's Canonicalize)."""
    before = str(graph)
    replace_graph_contents(graph, canonical_copy(graph, keep_unique_names))
    return str(graph) != before
