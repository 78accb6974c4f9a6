"""Scopes: the tree of names (module paths, `push_scope` names) that nodes are attached to.

Mirrors PyTorch's `Scope`: children are interned per parent, so scopes compare by identity,
and a node's printed scope is the path of names from the root joined by `/`.
"""

from __future__ import annotations

from typing import Optional


class Scope:
    """One scope in the tree; the root has no name and no parent."""

    __slots__ = ("parent", "name", "_children")

    def __init__(self, parent: Optional["Scope"] = None, name: str = ""):
        self.parent = parent
        self.name = name
        self._children: dict[str, Scope] = {}

    def push(self, name: str) -> "Scope":
        """The child scope called `name`, created on first use."""
        child = self._children.get(name)
        if child is None:
            child = self._children[name] = Scope(self, name)
        return child

    def is_root(self) -> bool:
        return self.parent is None

    def path(self) -> list[str]:
        names = []
        s: Optional[Scope] = self
        while s is not None and s.parent is not None:
            names.append(s.name)
            s = s.parent
        return names[::-1]

    def names_from_root(self, separator: str = "/") -> str:
        return separator.join(self.path())

    def root(self) -> "Scope":
        s = self
        while s.parent is not None:
            s = s.parent
        return s

    def lookup(self, path: str, separator: str = "/") -> "Scope":
        """The descendant scope named by `a/b/c` (created as needed)."""
        s = self
        for name in path.split(separator) if path else ():
            s = s.push(name)
        return s

    def __repr__(self) -> str:
        return f"Scope({self.names_from_root()!r})"
