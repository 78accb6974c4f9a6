"""PyTorch's UseVariadicCat (variadic_ops.cpp): `aten::cat(prim::ListConstruct(...), %dim)`
becomes `prim::VarConcat(..., %dim)`, the form static runtimes and fusers read without a list."""

from __future__ import annotations

from irjit.compiler.ir import Graph

from ._variadic import remove_list_mutation_and_use_variadic_op, use_variadic_op
from .registry import register_pass


@register_pass("use_variadic_cat")
def run(graph: Graph, remove_list_mutation: bool = False) -> bool:
    """PyTorch's UseVariadicCat: cat of a ListConstruct becomes prim::VarConcat (with
    `remove-list-mutation`, RemoveListMutationAndUseVariadicCat: appends are folded first)."""
    if remove_list_mutation:
        return remove_list_mutation_and_use_variadic_op(graph, "aten::cat", "prim::VarConcat")
    return use_variadic_op(graph, "aten::cat", "prim::VarConcat")
