"""User scopes while tracing: `with irjit.jit.scope("Foo"):` names the nodes recorded inside
(`scope: Foo` when printed), nested inside the module scope of the call it is in."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from irjit.runtime import autograd


@contextmanager
def scope(name: str) -> Iterator[None]:
    """Push scope `name` on the running trace (nothing happens when not tracing)."""
    tracer = autograd.TRACER[0]
    if tracer is None:
        yield
        return
    tracer.graph.push_scope(name)
    try:
        yield
    finally:
        tracer.graph.pop_scope()


def scope_name(node) -> str:
    """The node's scope as `Foo/Bar`, root-first, as PyTorch's `Node.scopeName()`."""
    return node.scope.names_from_root()
