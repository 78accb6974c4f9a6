"""Constant propagation restricted to nodes whose inputs and outputs are all of immutable
types, without alias analysis (PyTorch's ConstantPropagationImmutableTypes)."""

from __future__ import annotations

from irjit.compiler.ir import Graph

from .constant_propagation import propagate_constants
from .registry import register_pass


@register_pass("constant_propagation_immutable_types")
def run(graph: Graph) -> bool:
    """Fold only nodes with no tensor/list/dict/object inputs or outputs, then DCE (PyTorch's ConstantPropagationImmutableTypes)."""
    return propagate_constants(graph, aliasing_types=False)
