"""Variable environments of the script compiler, and what a loop or function body needs to
know about the statements in it before emitting them."""

from __future__ import annotations

import ast
from typing import Optional

from irjit.compiler.ir import NONE, TENSOR, OptionalType, TensorType, Type, Value


class Frame:
    """Variables assigned in one block (in assignment order), and names refined from
    `Optional[T]` to `T` there; lookups fall back to the enclosing block's frame."""

    def __init__(self, parent: Optional["Frame"]):
        self.parent = parent
        self.vars: dict[str, Value] = {}
        self.refined: dict[str, Value] = {}

    def lookup(self, name: str) -> Optional[Value]:
        frame = self
        while frame is not None:
            if name in frame.refined:
                return frame.refined[name]
            if name in frame.vars:
                return frame.vars[name]
            frame = frame.parent
        return None


def unify(a: Type, b: Type) -> Optional[Type]:
    """The type both branches' values have (TorchScript's unifyTypes), or None."""
    if a == b:
        return a
    if isinstance(a, TensorType) and isinstance(b, TensorType):
        return TENSOR
    if a == NONE and not isinstance(b, OptionalType):
        return OptionalType(b)
    if b == NONE and not isinstance(a, OptionalType):
        return OptionalType(a)
    if isinstance(a, OptionalType) and (b == a.elem or b == NONE):
        return a
    if isinstance(b, OptionalType) and (a == b.elem or a == NONE):
        return b
    return None


def assigned_names(stmts: list[ast.stmt]) -> list[str]:
    """Names the statements assign, in order of first assignment, nested blocks included."""
    names: dict[str, None] = {}

    def target(t: ast.expr) -> None:
        if isinstance(t, ast.Name):
            names.setdefault(t.id)
        elif isinstance(t, (ast.Tuple, ast.List)):
            for e in t.elts:
                target(e)

    for s in stmts:
        for node in ast.walk(s):
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    target(t)
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                target(node.target)
            elif isinstance(node, ast.For):
                target(node.target)
    return list(names)


def _walk_same_loop(stmts: list[ast.stmt]):
    """Statements nested in `stmts`, not descending into inner loops or function defs."""
    for s in stmts:
        yield s
        if isinstance(s, ast.If):
            yield from _walk_same_loop(s.body)
            yield from _walk_same_loop(s.orelse)


def has_break(stmts: list[ast.stmt]) -> bool:
    return any(isinstance(s, ast.Break) for s in _walk_same_loop(stmts))


def has_continue(stmts: list[ast.stmt]) -> bool:
    return any(isinstance(s, ast.Continue) for s in _walk_same_loop(stmts))


def has_return(stmts: list[ast.stmt]) -> bool:
    return any(isinstance(n, ast.Return) for s in stmts for n in ast.walk(s))


def exits_loop_or_function(stmt: ast.stmt) -> bool:
    """Whether an `if` holds a return, or a break/continue of the loop it is in."""
    return has_return([stmt]) or has_break([stmt]) or has_continue([stmt])
