"""PyTorch's InlineAutodiffSubgraphs (passes/inline_autodiff_subgraphs.cpp): DifferentiableGraphs
with fewer than `threshold` nodes are inlined back (autograd then handles them eagerly)."""

from __future__ import annotations

from irjit.compiler.ir.node import Block, Node
from irjit.compiler.settings import AUTODIFF_INLINE_THRESHOLD
from irjit.ops import facts

from .registry import AtLeast, all_passes, register_pass


def _can_run_with_autograd(n: Node) -> bool:
    if any(not _can_run_with_autograd(m) for b in n.blocks for m in b.nodes()):
        return False
    return not facts.has_tag(n.kind, "no_autograd") and n.kind.split("::")[0] in ("aten", "prim")


def _inline(node: Node) -> None:
    sub = node.attr("Subgraph")
    g = node.graph
    vm = dict(zip(sub.inputs, node.inputs))
    for n in sub.nodes():
        g.clone_node(n, vm).insert_before(node)
    for out, inner in zip(node.outputs, sub.outputs):  # f's extra (captured) outputs are dropped
        out.replace_all_uses_with(vm.get(inner, inner))
    node.destroy()


def _scan_block(block: Block, threshold: int) -> bool:
    changed = False
    for n in list(block.nodes()):
        for b in n.blocks:
            changed |= _scan_block(b, threshold)
        if n.kind != "prim::DifferentiableGraph":
            continue
        sub = n.attr("Subgraph")
        if sum(1 for _ in sub.nodes()) >= threshold:
            continue
        if not all(_can_run_with_autograd(m) for m in sub.nodes()):
            continue
        _inline(n)
        changed = True
    return changed


@register_pass("inline_autodiff_subgraphs", valid={"threshold": AtLeast(0)})
def run(graph, threshold: int = AUTODIFF_INLINE_THRESHOLD) -> bool:
    """Inline DifferentiableGraphs smaller than `threshold` nodes, then remove dead code."""
    changed = _scan_block(graph.block, threshold)
    dce = all_passes().get("eliminate_dead_code")
    if changed and dce is not None:
        dce.run(graph)
    return changed
