"""Turn functional activations into in-place ones, mirroring PyTorch's
FunctionalToInplaceActivation (restore_mutation.cpp): `%y = aten::relu(%x)` becomes
`aten::relu_(%x)` (uses of `%y` read `%x`) when `%x` is a fresh, unaliased tensor used only there."""

from __future__ import annotations

from irjit.compiler.ir import Graph
from irjit.ops import facts
from irjit.ops.types import TensorType

from .registry import register_pass
from .remove_mutation import has_side_effect_or_alias


def _keeps_dtype(node) -> bool:
    a, b = node.inputs[0].type, node.output.type
    return (isinstance(a, TensorType) and isinstance(b, TensorType) and a.scalar_type is not None
            and a.scalar_type == b.scalar_type)


def _can_be_inplace(node) -> bool:
    if not facts.has_tag(node.kind, "activation"):
        return False
    if facts.activation_may_promote(node.kind) and not _keeps_dtype(node):
        return False
    x = node.inputs[0]
    return not has_side_effect_or_alias(x) and len(x.uses) == 1


def _rewrite(graph: Graph, block) -> bool:
    changed = False
    for node in list(block.nodes()):
        for b in node.blocks:
            changed |= _rewrite(graph, b)
        if not _can_be_inplace(node):
            continue
        new = graph.create(node.kind + "_", node.inputs)
        new.source, new.scope = node.source, node.scope
        new.insert_before(node)
        new.output.type = node.output.type
        node.output.replace_all_uses_with(node.inputs[0])
        node.destroy()
        changed = True
    return changed


@register_pass("functional_to_inplace_activation")
def run(graph: Graph) -> bool:
    """PyTorch's FunctionalToInplaceActivation: `relu(x)` -> `relu_(x)` when x is used only there."""
    return _rewrite(graph, graph.block)
