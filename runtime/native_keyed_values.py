"""Specialization-time folds of what a native plan's key records beyond its inputs' layouts:
the module attributes the graph reads are keyed like inputs (bools and int lists by value, None,
ints that size lists by value, anything else by type), so bool, None, int-list and those int
attributes become constants (batch norm's or dropout's `training` flag, an attention block's
head count in a reshape's sizes), and whether an optional input or attribute is None is
known, so `x is None` / `x is not None` of one that is not None fold to constants."""

from __future__ import annotations

from typing import Any

from irjit.compiler.ir import Graph, Node, Value
from irjit.compiler.passes.constant_propagation import run as constant_propagation
from irjit.compiler.passes.eliminate_dead_code import run as eliminate_dead_code
from irjit.ops import facts
from irjit.ops.registry import get

from .module import Module
from .native_specialization import _never_mutated, attribute_reads, is_size_list

def keyed_values(graph: Graph, inputs: list) -> list[tuple[Value, Any]]:
    """(value, what it holds in this call) for the graph's inputs and the attribute reads the
    plan's key records (`attribute_reads`)."""
    found = list(zip(graph.inputs, inputs))
    for v, (i, path) in attribute_reads(graph).items():
        obj = inputs[i] if i < len(inputs) else None
        for name in path:
            obj = obj.get(name, None) if isinstance(obj, Module) else None
        found.append((v, obj))
    return found


def _is_none_constant(v: Value) -> bool:
    return v.node.kind == "prim::Constant" and str(v.type) == "NoneType"


def _replace(node: Node, value) -> None:
    g = node.graph
    g.set_insert_point(node)
    node.output.replace_all_uses_with(g.insert_constant(value))
    node.destroy()


def fold_keyed_values(graph: Graph, inputs: list, by_value: frozenset = frozenset()) -> bool:
    """Fold the keyed attribute reads holding bools, None or int lists (never changed in
    place), and the ints the key records by value (`by_value`: input position and path, see
    `sizing_attributes`), to constants, and the None checks of keyed values that are not None,
    then propagate the constants (branches on them fold); True if anything changed."""
    changed = False
    reads = attribute_reads(graph)
    for v, x in keyed_values(graph, inputs):
        if v.node.kind == "prim::GetAttr" and v.uses and (
                x is None or type(x) is bool or type(x) is int and reads.get(v) in by_value
                or is_size_list(x) and _never_mutated(v)):
            _replace(v.node, list(x) if isinstance(x, list) else x)
            changed = True
        elif x is not None:
            for n in [u.user for u in v.uses if facts.has_tag(u.user.kind, "identity_test")]:
                other = n.inputs[1] if n.inputs[0] is v else n.inputs[0]
                if len(n.inputs) == 2 and _is_none_constant(other):
                    _replace(n, get(n.kind).impl(x, None))  # the op on this call's value
                    changed = True
    if changed:
        constant_propagation(graph)
        eliminate_dead_code(graph)
    return changed
