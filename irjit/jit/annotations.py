"""Python type annotations (as `ast` nodes) to IR types, as TorchScript reads them."""

from __future__ import annotations

import ast
from typing import Callable

from irjit.compiler.ir import (BOOL, FLOAT, INT, NONE, STR, TENSOR, DictType, ListType,
                               OptionalType, TupleType, Type)

_NAMED = {"int": INT, "float": FLOAT, "bool": BOOL, "str": STR, "Tensor": TENSOR, "None": NONE}


def annotation_type(node: ast.expr, fail: Callable[[ast.AST, str], Exception]) -> Type:
    """The type an annotation spells: int/float/bool/str/Tensor, List/Optional/Tuple/Dict of
    them (`typing.X` or `X`), `torch.Tensor`; `fail(node, message)` makes the error to raise."""
    if isinstance(node, ast.Constant) and node.value is None:
        return NONE
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return annotation_type(ast.parse(node.value, mode="eval").body, fail)
    if isinstance(node, ast.Name) and node.id in _NAMED:
        return _NAMED[node.id]
    if isinstance(node, ast.Attribute) and node.attr == "Tensor":
        return TENSOR
    if isinstance(node, ast.Subscript):
        base = node.value.attr if isinstance(node.value, ast.Attribute) else \
            getattr(node.value, "id", None)
        elems = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        args = [annotation_type(e, fail) for e in elems]
        if base in ("List", "list") and len(args) == 1:
            return ListType(args[0])
        if base == "Optional" and len(args) == 1:
            return OptionalType(args[0])
        if base in ("Tuple", "tuple"):
            return TupleType(tuple(args))
        if base in ("Dict", "dict") and len(args) == 2:
            return DictType(args[0], args[1])
    raise fail(node, f"unknown type annotation: {ast.unparse(node)!r}")
