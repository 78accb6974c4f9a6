"""Remove implicit expands, mirroring PyTorch's RemoveExpands (remove_expands.cpp): an
`aten::expand(x, size, implicit=True)` (a broadcast the tracer recorded) is replaced by `x`."""

from __future__ import annotations

from irjit.compiler.ir import Graph

from .peephole_helpers import const_bool
from .registry import register_pass


def _remove(block) -> bool:
    changed = False
    for node in block.nodes():
        for b in node.blocks:
            changed |= _remove(b)
        if node.kind == "aten::expand" and len(node.inputs) == 3 and const_bool(node.inputs[2]) is True:
            node.output.replace_all_uses_with(node.inputs[0])
            node.destroy()
            changed = True
    return changed


@register_pass("remove_expands")
def run(graph: Graph) -> bool:
    """PyTorch's RemoveExpands: drop `aten::expand(..., implicit=True)` nodes."""
    return _remove(graph.block)
