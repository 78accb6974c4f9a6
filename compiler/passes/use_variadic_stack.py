"""PyTorch's UseVariadicStack (variadic_ops.cpp): `aten::stack(prim::ListConstruct(...), %dim)`
becomes `prim::VarStack(..., %dim)`."""

from __future__ import annotations

from ._variadic import variadic_pass
from .registry import register_pass

run = register_pass(
    "use_variadic_stack",
    "PyTorch's UseVariadicStack: stack of a ListConstruct becomes prim::VarStack (with "
    "remove-list-mutation, RemoveListMutationAndUseVariadicStack: appends are folded first)",
)(variadic_pass("aten::stack", "prim::VarStack"))
