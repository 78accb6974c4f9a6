"""A structural hash of a graph, for compile caches keyed by (graph, ArgumentSpec): equal for
graphs that print the same modulo value names, and stable across processes."""

from __future__ import annotations

import hashlib

from .ir.graph import Graph
from .ir.node import Value
from .printer import _Printer


class _CanonicalPrinter(_Printer):
    """Prints values as `%0, %1, ...` in the order the text first mentions them, graph
    attributes in full, and tensor constants with a digest of their data (which PyTorch's
    printout may leave out as `<Tensor>`)."""

    def __init__(self):
        super().__init__(print_source_locations=True, print_scopes=True)
        self.numbers: dict[Value, int] = {}

    def name(self, v: Value) -> str:
        return str(self.numbers.setdefault(v, len(self.numbers)))

    def attribute(self, kind: str, value) -> str:
        if kind == "g":
            return self.nested([value])
        if kind == "gs":
            return self.nested(value)
        if kind == "t":
            return super().attribute(kind, value) + _digest(value.array)
        if kind == "ts":
            if value is None:  # `[<Tensors>]` read from text: data unknown
                return super().attribute(kind, value)
            return "[" + ", ".join(_digest(t.array) for t in value) + "]"
        return super().attribute(kind, value)

    def nested(self, graphs) -> str:
        start = len(self.out)
        for g in graphs:
            self.out.append("{")
            self.graph(g)
            self.out.append("}")
        text = "".join(self.out[start:])
        del self.out[start:]
        return text


def _digest(array) -> str:
    if array is None:
        return "{no data}"
    h = hashlib.sha256(f"{array.dtype.str}{array.shape}".encode())
    h.update(array.tobytes())
    return "{" + h.hexdigest() + "}"


def canonical_text(graph: Graph) -> str:
    """The graph printed in PyTorch's format with values renamed by order of first mention."""
    p = _CanonicalPrinter()
    p.graph(graph)
    return "".join(p.out)


def structural_hash(graph: Graph) -> str:
    """SHA-256 (hex) of `canonical_text(graph)`: node kinds, attributes, types, the use
    structure, nested blocks and subgraphs, scopes and source locations; not value names."""
    return hashlib.sha256(canonical_text(graph).encode()).hexdigest()
