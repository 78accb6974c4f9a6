"""PyTorch's UseVariadicStack (variadic_ops.cpp): `aten::stack(prim::ListConstruct(...), %dim)`
becomes `prim::VarStack(..., %dim)`."""

from __future__ import annotations

from irjit.compiler.ir import Graph

from ._variadic import remove_list_mutation_and_use_variadic_op, use_variadic_op
from .registry import register_pass


@register_pass("use_variadic_stack")
def run(graph: Graph, remove_list_mutation: bool = False) -> bool:
    """PyTorch's UseVariadicStack: stack of a ListConstruct becomes prim::VarStack (with
    `remove-list-mutation`, RemoveListMutationAndUseVariadicStack: appends are folded first)."""
    if remove_list_mutation:
        return remove_list_mutation_and_use_variadic_op(graph, "aten::stack", "prim::VarStack")
    return use_variadic_op(graph, "aten::stack", "prim::VarStack")
