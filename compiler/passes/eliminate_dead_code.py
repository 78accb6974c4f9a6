"""Dead code elimination: remove nodes whose results are unused and that have no side
effects, and unused outputs of `prim::If`/`prim::Loop` (PyTorch's EliminateDeadCode)."""

from __future__ import annotations

from typing import Optional

from irjit.compiler.ir import Block, Graph, Node, Value

from ._side_effects import AliasDb, has_side_effects, is_mutating
from .registry import register_pass


class _DeadCodeEliminator:
    """PyTorch's inverse mark-and-sweep: mark from the return node and side-effecting nodes,
    then delete every unmarked node without uses."""

    def __init__(self, graph: Graph, allow_side_effects: bool, alias_db: Optional[AliasDb],
                 keep_mutations: bool = False):
        self.graph = graph
        self.allow_side_effects = allow_side_effects
        self.keep_mutations = keep_mutations
        self.alias_db = alias_db
        self.marked: set[Node] = set()
        self.live: set[Value] = set()
        self.memo: dict[Node, bool] = {}
        self.changed = False

    def run(self, block: Block) -> bool:
        self._dead_fork_inputs(block)
        self._mark_node(block.return_node)
        self._mark_block(block)
        self._sweep(block)
        return self.changed

    def _dead_fork_inputs(self, block: Block) -> None:
        for n in block.nodes():
            for b in n.blocks:
                self._dead_fork_inputs(b)
            if n.kind == "prim::fork" and n.attr_kind("Subgraph") == "g":
                sub = n.attr("Subgraph")
                for i in reversed(range(len(sub.inputs))):
                    if not sub.inputs[i].uses:
                        sub.erase_input(i)
                        n.remove_input(i)
                        self.changed = True

    # ---- mark
    def _has_side_effects(self, n: Node) -> bool:
        if n not in self.memo:
            if self.alias_db is None:
                untracked = is_mutating(n)
            else:
                untracked = self.alias_db.writes_to_wildcard(n)
            self.memo[n] = has_side_effects(n) or untracked or any(
                self._has_side_effects(m) for b in n.blocks for m in b.nodes())
        return self.memo[n]

    def _mark_block(self, block: Block) -> bool:
        any_marked = False
        if not self.allow_side_effects:
            for n in block.nodes():
                if self._has_side_effects(n):
                    any_marked |= self._mark_node(n)
        elif self.keep_mutations:
            for n in block.nodes():
                if is_mutating(n):
                    any_marked |= self._mark_node(n)
        any_marked |= self._mark_return(block.return_node)
        for n in block.reversed_nodes():
            if n.kind == "prim::Loop":
                while self._mark_block(n.blocks[0]):  # to convergence, see PyTorch's markLoop
                    any_marked = True
            else:
                for b in n.blocks:
                    any_marked |= self._mark_block(b)
            any_marked |= self._mark_if_live(n)
        return any_marked

    def _mark_return(self, ret: Node) -> bool:
        if ret in self.marked:
            return False
        outer = ret.owning_block.owning_node
        if outer is None:
            return self._mark_node(ret)
        if outer.kind == "prim::Loop":
            body = outer.blocks[0]
            for out, param, inner in zip(outer.outputs, body.inputs[1:], body.outputs[1:]):
                if out in self.live or param.uses:
                    self.live.add(inner)
            self.live.add(body.outputs[0])
        else:
            for out, inner in zip(outer.outputs, ret.inputs):
                if out in self.live:
                    self.live.add(inner)
        self.marked.add(ret)
        return True

    def _mark_if_live(self, n: Node) -> bool:
        if any(o in self.live for o in n.outputs):
            return self._mark_node(n)
        if self.alias_db is not None and self.alias_db.writes_to_alias(n, self.live):
            return self._mark_node(n)
        return False

    def _mark_node(self, n: Node) -> bool:
        if n in self.marked:
            return False
        self.marked.add(n)
        cur = n.owning_block.owning_node if n.owning_block is not None else None
        while cur is not None and cur.owning_block is not None:
            self._mark_node(cur)
            cur = cur.owning_block.owning_node
        self.live.update(n.inputs)
        return True

    # ---- sweep
    def _sweep(self, block: Block) -> None:
        for n in block.reversed_nodes():
            self._dead_block_outputs(n)
            self._dead_loop_outputs(n)
            for b in n.blocks:
                self._sweep(b)
            if n not in self.marked and not any(o.uses for o in n.outputs):
                n.destroy()
                self.changed = True

    def _dead_block_outputs(self, n: Node) -> None:
        if n.kind not in ("prim::If", "prim::GradOf"):
            return
        for i in reversed(range(len(n.outputs))):
            if not n.outputs[i].uses:
                n.erase_output(i)
                for b in n.blocks:
                    b.erase_output(i)
                self.changed = True

    def _dead_loop_outputs(self, n: Node) -> None:
        if n.kind != "prim::Loop":
            return
        body = n.blocks[0]
        for i in reversed(range(len(n.outputs))):
            if not n.outputs[i].uses and not body.inputs[1 + i].uses:
                n.erase_output(i)
                n.remove_input(2 + i)
                body.erase_input(1 + i)
                body.erase_output(1 + i)
                self.changed = True


def eliminate_dead_code(graph: Graph, allow_deleting_side_effects: bool = False,
                        alias_analysis: bool = True) -> bool:
    """Run DCE on `graph`; return whether anything was removed."""
    db = AliasDb(graph) if alias_analysis else None
    return _DeadCodeEliminator(graph, allow_deleting_side_effects, db).run(graph.block)


def eliminate_dead_code_in_block(block: Block, allow_deleting_side_effects: bool = False,
                                 alias_analysis: bool = True, keep_mutations: bool = False) -> bool:
    """DCE inside one block (a loop body being unrolled, a fusion group's subgraph, autodiff's
    reverse block), whose outputs count as used, and so does every value from outside it (the
    code after the block may read a list the block appends to); the nodes outside it are not
    touched. `keep_mutations`: ops that write their inputs stay even when deleting nodes with
    side effects is allowed (symbolic_script backwards that fill a list in a loop)."""
    db = AliasDb(block.graph) if alias_analysis else None
    dce = _DeadCodeEliminator(block.graph, allow_deleting_side_effects, db, keep_mutations)
    inside = {o for n in block.walk() for o in n.outputs} | set(block.inputs)
    inside |= {v for n in block.walk() for b in n.blocks for v in b.inputs}
    dce.live.update(v for n in block.walk() for v in n.inputs if v not in inside)
    return dce.run(block)


@register_pass("eliminate_dead_code")
def run(graph: Graph, allow_deleting_side_effects: bool = False, alias_analysis: bool = True) -> bool:
    """Remove unused, side-effect-free nodes and dead If/Loop outputs (PyTorch's EliminateDeadCode).

    `allow_deleting_side_effects` mirrors `_jit_pass_dce_allow_deleting_nodes_with_side_effects`;
    `alias_analysis=False` mirrors `_jit_pass_dce` (every op with a mutable schema is kept)."""
    return eliminate_dead_code(graph, allow_deleting_side_effects, alias_analysis)
