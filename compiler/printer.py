"""Printing graphs exactly as PyTorch prints them (`Graph::print` and `Node::print` in ir.cpp),
and in the 2017 format (`{ ... uses = [...], scope: ...; }`) for graphs read from it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .ir.attributes import format_attribute
from .ir.node import Node, Value

if TYPE_CHECKING:  # the graph calls the printer (`str(graph)`), so the printer may not import it
    from .ir.graph import Graph


def is_group_node(n: Node) -> bool:
    """Nodes printed as `kind_N(...)` with a `with kind_N = graph(...)` section."""
    return n.attr_kind("Subgraph") == "g" and n.attr("Subgraph") is not None


def format_attributes(n: Node, ignore_subgraph: bool = False,
                      format_value=format_attribute) -> str:
    parts = [f"{name}={format_value(kind, value)}" for name, (kind, value) in n.attrs.items()
             if not (ignore_subgraph and name == "Subgraph")]
    return "[" + ", ".join(parts) + "]"


class _Printer:
    """Writes graphs and nodes as PyTorch does; a subclass may rename values (`name`) and
    format attribute values differently (`attribute`)."""

    def __init__(self, print_source_locations: bool, print_scopes: bool):
        self.locations = print_source_locations
        self.scopes = print_scopes
        self.out: list[str] = []

    def name(self, v: Value) -> str:
        return v.name

    def attribute(self, kind: str, value) -> str:
        return format_attribute(kind, value)

    def _value_list_with_types(self, values, sep: str = ", ") -> str:
        return sep.join(f"%{self.name(v)} : {v.type}" for v in values)

    def _value_list(self, values) -> str:
        return ", ".join("%" + self.name(v) for v in values)

    def graph(self, g: Graph) -> None:
        out = self.out
        out.append("graph(" + self._value_list_with_types(g.inputs, ",\n      ") + "):\n")
        groups: list[Node] = []
        for n in g.nodes():
            self.node(n, 1, groups)
        out.append("  return (" + self._value_list(g.outputs) + ")\n")
        for i, fg in enumerate(groups):
            out.append(f"with {fg.kind}_{i} = ")
            self.graph(fg.attr("Subgraph"))

    def node(self, n: Node, level: int, groups: list[Node]) -> None:
        """`n` and its blocks; nested nodes wait on a stack (no recursion: graphs may nest
        thousands of levels deep)."""
        work: list = [(n, level)]
        while work:
            item, depth = work.pop()
            if isinstance(item, str):
                self.out.append(item)
            else:
                work.extend(reversed(self._node_line(item, depth, groups)))

    def _node_line(self, n: Node, level: int, groups: list[Node]) -> list:
        """Writes `n`'s own line; returns what follows it: block headers and ends (text) and
        the nested nodes with their depth."""
        out = self.out
        out.append("  " * level + self._value_list_with_types(n.outputs) + " = ")
        if n.python_op is not None:
            out.append("^" + n.python_op[0] + format_attributes(n, False, self.attribute)
                       + n.python_op[1])
        elif is_group_node(n):
            out.append(f"{n.kind}_{len(groups)}")
            if len(n.attrs) > 1 and n.kind != "prim::DifferentiableGraph":
                out.append(format_attributes(n, True, self.attribute))
            groups.append(n)
        else:
            out.append(n.kind)
            if n.attrs:
                out.append(format_attributes(n, False, self.attribute))
        out.append("(" + self._value_list(n.inputs) + ")")
        if self.scopes and not n.scope.is_root():
            out.append(", scope: " + n.scope.names_from_root())
        if self.locations and n.source is not None:
            out.append(f" # {n.source}")
        out.append("\n")
        rest: list = []
        for i, b in enumerate(n.blocks):
            rest.append(("  " * (level + 1) + f"block{i}("
                         + self._value_list_with_types(b.inputs) + "):\n", 0))
            rest.extend((nested, level + 2) for nested in b.nodes())
            rest.append(("  " * (level + 2) + "-> (" + self._value_list(b.outputs) + ")\n", 0))
        return rest


def print_graph(g: Graph, print_source_locations: bool = True, print_scopes: bool = True) -> str:
    """The text PyTorch's `str(graph)` gives for this graph (or the 2017 format for graphs
    that were read from it)."""
    if getattr(g, "print_style", "modern") == "legacy":
        return print_legacy_graph(g)
    p = _Printer(print_source_locations, print_scopes)
    p.graph(g)
    return "".join(p.out)


def print_node(n: Node) -> str:
    """One node as PyTorch prints it, without nested blocks' sections."""
    p = _Printer(True, True)
    p.node(n, 0, [])
    return "".join(p.out)


# ---- the 2017 format

def _value_list_with_types(values, sep: str = ", ") -> str:
    return sep.join(f"%{v.name} : {v.type}" for v in values)


def _value_list(values) -> str:
    return ", ".join("%" + v.name for v in values)


def _legacy_kind(kind: str) -> str:
    ns, _, name = kind.partition("::")
    return name if ns in ("prim", "legacy") else kind


def _legacy_uses(n: Node) -> str:
    if n.legacy_uses is not None:
        return n.legacy_uses

    def uses_of(v: Value) -> str:
        refs = []
        for u in v.uses:
            user = u.user
            ref = "%0" if user.kind == "prim::Return" or not user.outputs else "%" + user.outputs[0].name
            refs.append(f"{ref}.i{u.offset}")
        return "[" + ", ".join(refs) + "]"

    if n.python_op is not None or len(n.outputs) != 1:
        return "[" + ", ".join(uses_of(v) for v in n.outputs) + "]"
    return uses_of(n.outputs[0])


def print_legacy_graph(g: Graph) -> str:
    """The 2017 printout: `graph(%1 : T\\n      %2 : T) {`, `..., uses = [...], scope: S;`, `}`."""
    out = ["graph(" + _value_list_with_types(g.inputs, "\n      ") + ") {\n"]
    for n in g.nodes():
        line = "  " + _value_list_with_types(n.outputs) + " = "
        if n.python_op is not None:
            line += "^" + n.python_op[0] + n.python_op[1]
        else:
            line += _legacy_kind(n.kind)
            if n.attrs:
                line += format_attributes(n)
        line += "(" + _value_list(n.inputs) + "), uses = " + _legacy_uses(n)
        if not n.scope.is_root():
            line += ", scope: " + n.scope.names_from_root(".")
        out.append(line + ";\n")
    out.append("  return (" + _value_list(g.outputs) + ");\n}\n")
    return "".join(out)

