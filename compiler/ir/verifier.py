"""`graph.lint()`: checks that a graph is well formed, as PyTorch's `Graph::lint` does."""

from __future__ import annotations

from .node import Block, Node


class IRVerificationError(AssertionError):
    """A graph broke an IR invariant (a bug in whatever built or rewrote it)."""


def control_flow_problem(n: Node) -> str | None:
    """What is wrong with the shape of a `prim::If` or `prim::Loop` (the values each block
    takes and yields against the node's inputs and outputs), or None. An If with one block
    is allowed: PyTorch's parser tests write one."""
    outs = len(n.outputs)
    if n.kind == "prim::If":
        if len(n.inputs) != 1:
            return f"takes one condition, has {len(n.inputs)} inputs"
        for i, b in enumerate(n.blocks):
            if b.inputs:
                return f"block{i} takes {len(b.inputs)} values, an If block takes none"
            if len(b.outputs) != outs:
                return f"block{i} yields {len(b.outputs)} values, the node has {outs} outputs"
    elif n.kind == "prim::Loop":
        if len(n.blocks) != 1 or len(n.inputs) < 2:
            return f"needs a trip count, a condition and one block, has {len(n.inputs)} inputs " \
                   f"and {len(n.blocks)} blocks"
        carried = len(n.inputs) - 2
        b = n.blocks[0]
        if outs != carried:
            return f"carries {carried} values but has {outs} outputs"
        if len(b.inputs) != carried + 1:
            return f"block0 takes {len(b.inputs)} values, expected {carried + 1} (the " \
                   "iteration number and the carried values)"
        if len(b.outputs) != carried + 1:
            return f"block0 yields {len(b.outputs)} values, expected {carried + 1} (the " \
                   "condition and the carried values)"
    return None


def verify(graph) -> None:
    """Check SSA dominance, use lists, block structure, ownership and unique names."""
    seen_uniques: dict[int, object] = {}
    seen_names: dict[str, object] = {}

    def fail(msg: str) -> None:
        raise IRVerificationError(msg)

    def check_value_identity(v) -> None:
        if v.unique in seen_uniques:
            fail(f"value number {v.unique} is used twice")
        seen_uniques[v.unique] = v
        if v.debug_name is not None:
            if v.debug_name in seen_names:
                fail(f"name %{v.debug_name} is used twice")
            seen_names[v.debug_name] = v
            if graph.unique_names.get(v.debug_name) is not v:
                fail(f"%{v.debug_name} is missing from the graph's name table")

    def check_uses(n: Node) -> None:
        for i, v in enumerate(n.inputs):
            matches = [u for u in v.uses if u.user is n and u.offset == i]
            if len(matches) != 1:
                fail(f"input {i} (%{v.name}) of {n.kind} has {len(matches)} matching uses")

    # nested blocks wait on a stack (no recursion: graphs may nest thousands of levels deep),
    # each with a copy of the values visible where its node stands
    pending: list[tuple[Block, set, object]] = [(graph.block, set(), None)]

    def check_block(block: Block, scope: set, owner) -> None:
        if block.graph is not graph or block.owning_node is not owner:
            fail("block has the wrong owner")
        for v in block.inputs:
            check_value_identity(v)
            if v.node is not block.param_node:
                fail(f"block parameter %{v.name} is not owned by its param node")
            scope.add(v)
        prev = block.return_node
        for n in block.nodes():
            if n.graph is not graph:
                fail(f"{n.kind} belongs to another graph")
            if n.owning_block is not block or n.prev is not prev or prev.next is not n:
                fail(f"{n.kind} is linked into its block incorrectly")
            if prev is not block.return_node and not prev._pos < n._pos:
                fail(f"{n.kind} has an out-of-order position")
            check_uses(n)
            problem = control_flow_problem(n)
            if problem is not None:
                line = getattr(n, "text_line", None)
                fail(f"{n.kind}{f' on line {line}' if line else ''}: {problem}")
            for i, v in enumerate(n.inputs):
                if v not in scope:
                    fail(f"{n.kind} uses %{v.name} (input {i}) where it is not defined")
            for b in n.blocks:
                pending.append((b, set(scope), n))
            for j, v in enumerate(n.outputs):
                check_value_identity(v)
                if v.node is not n or v.offset != j:
                    fail(f"output {j} of {n.kind} has a wrong back-link")
                for use in v.uses:
                    if use.offset >= len(use.user.inputs) or use.user.inputs[use.offset] is not v:
                        fail(f"use list of %{v.name} names a node that does not use it")
                scope.add(v)
            sub = n.attr("Subgraph") if n.attr_kind("Subgraph") == "g" else None
            if sub is not None:
                verify(sub)
            prev = n
        if block.return_node.prev is not prev:
            fail("block's last node is linked incorrectly")
        check_uses(block.return_node)
        for v in block.outputs:
            if v not in scope:
                fail(f"block output %{v.name} is not defined in scope")

    while pending:
        check_block(*pending.pop())
