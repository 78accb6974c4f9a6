"""Moving a node within its block without changing what the block computes, as PyTorch's
AliasDb::tryMove / moveBeforeTopologicallyValid / couldMoveBeforeTopologically do (shared by
batch_mm, the variadic-op passes and remove_mutation's list part)."""

from __future__ import annotations

from irjit.compiler.ir import Node

from ._side_effects import AliasDb, has_side_effects


class TopologicalMover:
    """AliasDb::tryMove/moveBeforeTopologicallyValid/couldMoveBeforeTopologically, for blocks
    without mutable aten ops: data dependencies, never across side effects; any node that
    writes memory (prim::SetAttr, opaque calls) is treated as a side effect."""

    def __init__(self, db: AliasDb):
        self.db = db
        self._barrier: dict[Node, bool] = {}

    def is_barrier(self, n: Node) -> bool:
        b = self._barrier.get(n)
        if b is None:
            b = has_side_effects(n) or any(has_side_effects(m) for m in n.walk()) or \
                bool(self.db.written_by(n)) or self.db.writes_to_wildcard(n)
            self._barrier[n] = b
        return b

    @staticmethod
    def _users_same_block(n: Node) -> set[Node]:
        users = set()
        for o in n.outputs:
            for use in o.uses:
                u = use.user
                while u is not None and u.owning_block is not n.owning_block:
                    u = u.owning_block.owning_node
                if u is not None:
                    users.add(u)
        return users

    def try_move_before(self, to_move: Node, move_point: Node, dry_run: bool) -> bool:
        if to_move.owning_block is not move_point.owning_block:
            return False
        if to_move is move_point:
            return True
        forward = to_move._pos < move_point._pos
        cur = to_move.next if forward else to_move.prev
        if forward and cur is move_point:
            return True
        if self.is_barrier(to_move) or (not forward and self.is_barrier(move_point)):
            return False
        mover_users = self._users_same_block(to_move)
        deps: list[Node] = []
        dep_set: set[Node] = set()
        dep_users: set[Node] = set()

        def depends_on(n: Node, with_mover: bool) -> bool:
            if not with_mover and not deps:
                return False
            pivot = to_move if with_mover else deps[0]
            if n._pos > pivot._pos:  # does the working set produce for n?
                return (with_mover and n in mover_users) or n in dep_users
            users = self._users_same_block(n)  # does the working set consume from n?
            return (with_mover and to_move in users) or bool(users & dep_set)

        while cur is not move_point:
            if self.is_barrier(cur):
                return False
            if depends_on(cur, True):
                deps.append(cur)
                dep_set.add(cur)
                dep_users |= self._users_same_block(cur)
            cur = cur.next if forward else cur.prev
        # moving forward, `to_move` goes before move_point and its dependents after it
        if depends_on(move_point, not forward):
            return False
        if dry_run:
            return True
        to_move.move_before(move_point)
        anchor = move_point if forward else to_move
        for n in deps:  # forward: after move_point; backward: before to_move, in walk order
            if forward:
                n.move_after(anchor)
            else:
                n.move_before(anchor)
            anchor = n
        return True
