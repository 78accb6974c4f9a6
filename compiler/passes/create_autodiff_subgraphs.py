"""PyTorch's CreateAutodiffSubgraphs (passes/create_autodiff_subgraphs.cpp): merge runs of
differentiable nodes into `prim::DifferentiableGraph` nodes, bottom-up, never across blocks or
side effects; subgraphs with fewer than `node_threshold` executed nodes are inlined back."""

from __future__ import annotations

from irjit.compiler.autodiff.differentiate import _pure, is_differentiable
from irjit.compiler.autodiff.subgraph_utils import (create_singleton_subgraph, merge_node_into_subgraph,
                                                    unmerge_aliased_outputs,
                                                    unmerge_outputs_aliasing_inputs, unmerge_subgraph)
from irjit.compiler.settings import AUTODIFF_NODE_THRESHOLD
from irjit.compiler.ir.node import Block, Node
from irjit.ops import facts

from ._rewrite import reads_any
from ._side_effects import AliasDb
from .registry import AtLeast, all_passes, register_pass

DG = "prim::DifferentiableGraph"


def move_before_topologically_valid(p: Node, c: Node) -> bool:
    """Move `p` (earlier in the same block) right before `c`; nodes between them that depend on
    `p` move right after `c`. Refuses when an impure node lies in between (aliasing/effects)."""
    between, n = [], p.next
    while n is not c:
        between.append(n)
        n = n.next
    if not _pure(p) or any(not _pure(m) for m in between):
        return False
    moved, produced = [], set(p.outputs)
    for m in between:
        if reads_any(m, produced):
            moved.append(m)
            produced.update(m.outputs)
    if moved and reads_any(c, set(v for m in moved for v in m.outputs)):
        return False
    p.move_before(c)
    anchor = c
    for m in moved:
        m.move_after(anchor)
        anchor = m
    return True


def _built_here(group: Node) -> bool:
    """Whether `group` is a plain grouping, not a forward graph read back from an executor's
    printout (whose Subgraph also returns the captured values the node does not show)."""
    return len(group.outputs) == len(group.attr("Subgraph").outputs)


def _unfuse_aliased_outputs(block: Block) -> None:
    """Autodiff cannot differentiate outputs that alias each other or the inputs: move the
    nodes producing them back out, until nothing changes (PyTorch's unfuseAliasedOutputs)."""
    changed = True
    while changed:
        changed = False
        for n in list(block.reversed_nodes()):
            if n.kind == DG and n.is_inserted() and _built_here(n):
                changed |= unmerge_aliased_outputs(n, AliasDb(n.attr("Subgraph")))
                changed |= unmerge_outputs_aliasing_inputs(n, AliasDb(n.attr("Subgraph")))


class _Slicer:
    def __init__(self, block: Block, threshold: int, diff_nodes: list, cache: dict):
        self.block, self.threshold, self.diff_nodes, self.cache = block, threshold, diff_nodes, cache

    def consider(self, n: Node) -> bool:
        if n.kind == DG:
            return True
        if n.kind == "prim::Constant" or facts.has_tag(n.kind, "view"):
            return False
        if n not in self.cache:
            self.cache[n] = is_differentiable(n)
        return self.cache[n]

    def build(self) -> None:
        block = self.block
        changed = True
        while changed:
            changed = False
            n = block.return_node.prev
            while n is not block.return_node:
                n, did = self.scan(n)
                changed |= did
        for n in list(block.nodes()):
            for b in n.blocks:
                _Slicer(b, self.threshold, self.diff_nodes, self.cache).build()
        _unfuse_aliased_outputs(block)

    def cleanup(self) -> None:
        block = self.block
        n = block.return_node.prev
        while n is not block.return_node:
            prev = n.prev
            if n.kind == DG and not self.inline_if_too_small(n):
                self.diff_nodes.append(n)
            n = prev
        for n in list(block.nodes()):
            for b in n.blocks:
                _Slicer(b, self.threshold, self.diff_nodes, self.cache).cleanup()

    def scan(self, consumer: Node):
        if self.consider(consumer):
            if consumer.kind != DG:
                consumer = create_singleton_subgraph(consumer, DG)
            inputs = {v for v in consumer.inputs if v.node.owning_block is self.block
                      and v.node.kind != "prim::Param"}
            for v in sorted(inputs, key=lambda v: v.node._pos, reverse=True):
                if self.try_merge(consumer, v.node):
                    return consumer, True
        return consumer.prev, False

    def try_merge(self, consumer: Node, producer: Node) -> bool:
        if not self.consider(producer) or not move_before_topologically_valid(producer, consumer):
            return False
        if producer.kind == DG:
            for n in reversed(unmerge_subgraph(producer)):
                merge_node_into_subgraph(n, consumer)
        else:
            merge_node_into_subgraph(producer, consumer)
        return True

    def inline_if_too_small(self, n: Node) -> bool:
        executed = sum(1 for m in n.attr("Subgraph").nodes() if m.kind != "prim::Constant")
        if executed >= self.threshold:
            return False
        unmerge_subgraph(n)
        return True


def create_autodiff_subgraphs(graph, node_threshold: int = AUTODIFF_NODE_THRESHOLD) -> list[Node]:
    """The DifferentiableGraph nodes created (PyTorch's return value)."""
    diff_nodes: list[Node] = []
    slicer = _Slicer(graph.block, node_threshold, diff_nodes, {})
    slicer.build()
    slicer.cleanup()
    cse = all_passes().get("eliminate_common_subexpression")
    if cse is not None:
        for n in diff_nodes:
            cse.run(n.attr("Subgraph"))
        cse.run(graph)
    return diff_nodes


@register_pass("create_autodiff_subgraphs", valid={"node_threshold": AtLeast(0)})
def run(graph, node_threshold: int = AUTODIFF_NODE_THRESHOLD) -> bool:
    """Group differentiable nodes into prim::DifferentiableGraph subgraphs."""
    return bool(create_autodiff_subgraphs(graph, node_threshold))
