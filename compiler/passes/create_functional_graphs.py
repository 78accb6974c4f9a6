"""Group functional nodes into `prim::FunctionalGraph` subgraphs, mirroring PyTorch's
CreateFunctionalGraphs (create_functional_graphs.cpp).

A node is functional when none of its outputs is written or escapes the graph (aliases an
input or an output) and it writes none of its inputs; its blocks must be functional too. Each
block is walked bottom-up, merging functional nodes into the current group when the alias-aware
move of AliasDb::moveBeforeTopologicallyValid allows it, else starting a new group; groups with
fewer than six non-constant nodes are inlined back. Up to four rounds, with constant pooling
before and after, as PyTorch does.
"""

from __future__ import annotations

from irjit.compiler.autodiff.subgraph_utils import merge_node_into_subgraph, unmerge_subgraph
from irjit.compiler.ir import Block, Graph, Node, Value

from ._rewrite import reads_any
from ._side_effects import AliasDb, has_side_effects
from .registry import get_pass, register_pass

FG = "prim::FunctionalGraph"
_MIN_SUBGRAPH_SIZE = 6
_MAX_ROUNDS = 4


class _Mover:
    """AliasDb::tryMove for moving `n` down to just before a group: nodes in between that
    depend on `n` (data or memory) go after the group. Nodes created after the alias analysis
    (the groups) have no known reads or writes, as in PyTorch."""

    def __init__(self, graph: Graph):
        self.db = AliasDb(graph)
        self.known = set(graph.walk())

    def reads(self, n: Node) -> list[Value]:
        if n not in self.known:
            return []
        return [v for m in [n, *n.walk()] for v in m.inputs]

    def writes(self, n: Node) -> list[Value]:
        return self.db.written_by(n) if n in self.known else []

    def memory_dependent(self, a: Node, b: Node) -> bool:
        wa, wb = self.writes(a), self.writes(b)
        return (bool(wa) and self.db.may_contain_alias(wa, self.reads(b) + wb)) or \
            (bool(wb) and self.db.may_contain_alias(wb, self.reads(a)))

    def move_before(self, n: Node, group: Node) -> bool:
        if n.next is group:
            return True
        if has_side_effects(n):
            return False
        moving, produced = [], set(n.outputs)
        cur = n.next
        while cur is not group:
            if has_side_effects(cur):
                return False
            if reads_any(cur, produced) or any(self.memory_dependent(m, cur) for m in [n, *moving]):
                moving.append(cur)
                produced.update(cur.outputs)
            cur = cur.next
        moved_outputs = {v for m in moving for v in m.outputs}
        if reads_any(group, moved_outputs) or any(self.memory_dependent(m, group) for m in moving):
            return False
        n.move_before(group)
        anchor = group
        for m in moving:
            m.move_after(anchor)
            anchor = m
        return True


class _Slicer:
    def __init__(self, graph: Graph):
        self.graph = graph
        self.functional: set[Node] = set()

    def analyze_block(self, block: Block, db: AliasDb) -> bool:
        return all([self.analyze_node(n, db) for n in block.nodes()])

    def analyze_node(self, n: Node, db: AliasDb) -> bool:
        ok = all(not db.has_writers_value(v) and not db.escapes_scope([v]) for v in n.outputs)
        ok = all([self.analyze_block(b, db) for b in n.blocks]) and ok
        ok = ok and not db.writes_to_alias(n, n.inputs)
        if ok:
            self.functional.add(n)
        return ok

    def new_group(self) -> Node:
        group = self.graph.create(FG, [], num_outputs=0)
        group.set_attr("Subgraph", "g", Graph())
        return group

    def slice_block(self, block: Block, mover: _Mover) -> bool:
        changed = False
        groups = []
        group = self.new_group().insert_before(block.return_node)
        for n in list(block.reversed_nodes()):
            if n.kind == "prim::Constant" or n is group or not n.is_inserted():
                continue
            if n not in self.functional:
                for b in n.blocks:
                    changed = self.slice_block(b, mover) and changed  # sic: PyTorch's `&&`
                continue
            if n.kind == FG and _is_empty(group):
                group.destroy()
                group = n
                continue
            changed = True
            if mover.move_before(n, group):
                _merge(n, group)
            else:
                groups.append(group)
                group = self.new_group().insert_after(n)
                _merge(n, group)
        groups.append(group)
        pool = get_pass("constant_pooling")
        for g in groups:
            if _non_constant_nodes(g.attr("Subgraph").block, _MIN_SUBGRAPH_SIZE) < _MIN_SUBGRAPH_SIZE:
                unmerge_subgraph(g)
            else:
                pool.run(g.attr("Subgraph"))
        return changed


def _is_empty(group: Node) -> bool:
    sub = group.attr("Subgraph")
    return not sub.inputs and not sub.outputs


def _merge(n: Node, group: Node) -> None:
    if n.kind == FG:
        for inner in reversed(unmerge_subgraph(n)):
            merge_node_into_subgraph(inner, group)
    else:
        merge_node_into_subgraph(n, group)


def _non_constant_nodes(block: Block, limit: int) -> int:
    count = 0
    for n in block.nodes():
        if count >= limit:
            break
        if n.kind == "prim::Constant":
            continue
        count += 1
        for b in n.blocks:
            count += _non_constant_nodes(b, limit - count)
    return count


@register_pass("create_functional_graphs")
def run(graph: Graph) -> bool:
    """PyTorch's CreateFunctionalGraphs: functional nodes grouped into prim::FunctionalGraph."""
    before = str(graph)
    pool = get_pass("constant_pooling")
    pool.run(graph)
    slicer = _Slicer(graph)
    for _ in range(_MAX_ROUNDS):
        mover = _Mover(graph)
        slicer.analyze_block(graph.block, mover.db)
        if not slicer.slice_block(graph.block, mover):
            break
    pool.run(graph)
    return str(graph) != before
