"""Tests of native code generation, with a helper to compile typed graphs from text."""

from __future__ import annotations

from irjit.compiler import parse_ir
from irjit.compiler.passes import get_pass
from irjit.compiler.passes.specialize_input_types import parse_input_types, specialize_input_types


def typed_graph(text: str, input_types: str):
    """The graph of `text` specialized to `input_types`, with every value's type propagated."""
    graph = parse_ir(text)
    specialize_input_types(graph, parse_input_types(input_types))
    get_pass("propagate_input_shapes").run(graph)
    return graph
