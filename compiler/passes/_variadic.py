"""PyTorch's UseVariadicOp (variadic_ops.cpp), shared by use_variadic_cat and
use_variadic_stack: `op(prim::ListConstruct(%a, %b, ...), %dim)` becomes
`variadic(%a, %b, ..., %dim)` when the list could move right before the op (nothing writes it
in between), and the list goes when nothing else reads it."""

from __future__ import annotations

from irjit.compiler.ir import Graph, Node

from ._move import TopologicalMover
from ._side_effects import AliasDb


def _collect(block, kind: str, out: list[Node]) -> None:
    for n in block.nodes():
        if n.kind == kind:
            out.append(n)
        for b in n.blocks:
            _collect(b, kind, out)


def use_variadic_op(graph: Graph, kind: str, variadic: str) -> bool:
    nodes: list[Node] = []
    _collect(graph.block, kind, nodes)
    mover = None
    changed = False
    for n in nodes:
        lst = n.inputs[0].node if n.inputs else None
        if lst is None or lst.kind != "prim::ListConstruct":
            continue
        mover = mover or TopologicalMover(AliasDb(graph))
        if not mover.try_move_before(lst, n, dry_run=True):
            continue  # something writes the list between its construction and the op
        # (a fresh `Tensor` output, as PyTorch's create(variadic_op, inputs) gives it)
        new = graph.create(variadic, list(lst.inputs) + list(n.inputs[1:]))
        new.source, new.scope = n.source, n.scope
        new.insert_before(n)
        n.output.replace_all_uses_with(new.output)
        n.destroy()
        if not any(o.uses for o in lst.outputs):
            lst.destroy()
        changed = True
    return changed


def remove_list_mutation_and_use_variadic_op(graph: Graph, kind: str, variadic: str) -> bool:
    """RemoveListMutationAndUseVariadicOp: list appends folded into their ListConstruct first,
    to a fixed point."""
    from .remove_mutation import remove_list_mutation
    changed = True
    any_change = False
    while changed:
        changed = remove_list_mutation(graph)
        changed = use_variadic_op(graph, kind, variadic) or changed
        any_change |= changed
    return any_change


def variadic_pass(kind: str, variadic: str):
    """The pass function `run(graph, remove_list_mutation=False)` for one op: UseVariadicOp, or
    with `remove_list_mutation` RemoveListMutationAndUseVariadicOp."""
    def run(graph: Graph, remove_list_mutation: bool = False) -> bool:
        if remove_list_mutation:
            return remove_list_mutation_and_use_variadic_op(graph, kind, variadic)
        return use_variadic_op(graph, kind, variadic)
    return run
