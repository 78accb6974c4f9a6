"""PyTorch's UseVariadicCat (variadic_ops.cpp): `aten::cat(prim::ListConstruct(...), %dim)`
becomes `prim::VarConcat(..., %dim)`, the form static runtimes and fusers read without a list."""

from __future__ import annotations

from ._variadic import variadic_pass
from .registry import register_pass

run = register_pass(
    "use_variadic_cat",
    "PyTorch's UseVariadicCat: cat of a ListConstruct becomes prim::VarConcat (with "
    "remove-list-mutation, RemoveListMutationAndUseVariadicCat: appends are folded first)",
)(variadic_pass("aten::cat", "prim::VarConcat"))
