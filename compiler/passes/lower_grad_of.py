"""Lower `prim::GradOf` blocks, mirroring PyTorch's LowerGradOf (lower_grad_of.cpp): each
becomes `prim::If(prim::AutogradAnyNonZero(inputs))` whose true branch is the GradOf body and
whose false branch returns `prim::AutogradZero` for every output."""

from __future__ import annotations

from irjit.compiler.ir import Graph
from irjit.ops.types import INT

from .registry import register_pass


@register_pass("lower_grad_of")
def run(graph: Graph) -> bool:
    """PyTorch's LowerGradOf: GradOf -> If on AutogradAnyNonZero (top-level nodes, as PyTorch)."""
    changed = False
    for node in list(graph.nodes()):
        if node.kind != "prim::GradOf":
            continue
        graph.set_insert_point(node)
        cond = graph.insert("prim::AutogradAnyNonZero", node.inputs, output_types=[INT]).output
        if_node = graph.insert("prim::If", [cond], num_outputs=len(node.outputs))
        if_node.add_block().clone_from(node.blocks[0], lambda v: v)
        else_block = if_node.add_block()
        zero = else_block.prepend_node(graph.create("prim::AutogradZero"))
        for old, new in zip(node.outputs, if_node.outputs):
            else_block.register_output(zero.output)
            new.copy_metadata(old)
        for old, new in zip(node.outputs, if_node.outputs):
            old.replace_all_uses_with(new)
        node.destroy()
        changed = True
    return changed
