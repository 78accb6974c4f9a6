"""Remove inference-time dropout, mirroring PyTorch's removeDropout (remove_dropout.cpp): a
dropout whose `train` argument is the constant false is the identity, so its uses read its input."""

from __future__ import annotations

from irjit.compiler.ir import Graph
from irjit.ops import facts

from .peephole_helpers import const_bool
from .registry import register_pass


def _remove(block) -> bool:
    changed = False
    for node in list(block.nodes()):
        for b in node.blocks:
            changed |= _remove(b)
        if facts.has_tag(node.kind, "dropout") and const_bool(node.inputs[2]) is False:
            node.output.replace_all_uses_with(node.inputs[0])
            node.destroy()
            changed = True
    return changed


@register_pass("remove_dropout")
def run(graph: Graph) -> bool:
    """PyTorch's removeDropout: drop dropout/feature_dropout (and in-place forms) with train=False."""
    return _remove(graph.block)
