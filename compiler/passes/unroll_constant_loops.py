"""Constant-trip loop unrolling, mirroring PyTorch's UnrollConstantLoops (loop_unrolling.cpp):
for-loops whose trip count is a `prim::Constant` are unrolled (fully below 64 iterations,
else by 8 with an epilogue), whatever their body size; then DCE."""

from __future__ import annotations

from irjit.compiler.ir import Graph

from .eliminate_dead_code import eliminate_dead_code
from .registry import register_pass
from .unroll_loops import unroll_block


@register_pass("unroll_constant_loops")
def run(graph: Graph) -> bool:
    """PyTorch's UnrollConstantLoops: unroll for-loops with a constant trip count."""
    changed = unroll_block(graph.block, True)
    if changed:
        eliminate_dead_code(graph)
    return changed
