"""The BailOut graph of the bailout-style guards (PyTorch's BailoutTemplate, bailout_graph.cpp):
a copy of the guarded graph whose BailOut nodes lose their template input; the executor
resumes in it from the failing `prim::BailOut[index=k]` with that node's live values."""

from __future__ import annotations

from irjit.compiler.ir import Graph, Value


def build_template(graph: Graph, template: Value) -> Graph:
    """The unoptimized graph with its own BailOut nodes, for `prim::BailoutTemplate_0`."""
    copy = graph.copy()
    for n in list(copy.walk()):
        if n.kind == "prim::BailOut" and n.inputs and n.inputs[0].node.kind == "prim::BailoutTemplate":
            n.remove_input(0)
    for n in list(copy.walk()):
        if n.kind == "prim::BailoutTemplate":
            n.destroy()
    return copy


def bailout_points(graph: Graph) -> dict:
    """index -> BailOut node of a template (or guarded) graph."""
    return {n.attr("index"): n for n in graph.walk() if n.kind == "prim::BailOut"}
