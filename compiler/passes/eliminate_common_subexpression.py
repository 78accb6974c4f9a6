"""Common subexpression elimination: a node equal to an earlier one (same kind, inputs,
attributes and output types) in the same or an enclosing block is replaced by it
(PyTorch's EliminateCommonSubexpression, with node_hashing.cpp's HashNode/EqualNode)."""

from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from irjit.compiler.ir import Block, Graph, Node, TensorData

from ._side_effects import AliasDb, has_side_effects, is_nondeterministic
from .registry import register_pass


def _attr_key(kind: str, value: Any) -> Any:
    """A hashable stand-in for an attribute value; None when it never compares equal."""
    if kind in ("g", "gs"):
        return None
    if kind == "t":
        return _tensor_key(value)
    if kind == "ts":
        if value is None:
            return None  # `[<Tensors>]` read from text: data unknown
        keys = tuple(_tensor_key(t) for t in value)
        return None if any(k is None for k in keys) else keys
    if kind == "f" and isinstance(value, float) and value != value:
        return None  # NaN != NaN
    if kind == "ival":
        return ("ival", _ival_key(value))
    if isinstance(value, list):
        return tuple(value)
    return value


def _ival_key(v: Any) -> Any:
    if isinstance(v, (list, tuple)):
        return (type(v).__name__,) + tuple(_ival_key(x) for x in v)
    if isinstance(v, TensorData):
        return ("tensor", id(v)) if v.array is None else _tensor_key(v)
    if isinstance(v, dict):
        return ("dict",) + tuple((_ival_key(k), _ival_key(x)) for k, x in v.items())
    return (type(v).__name__, v)


def _tensor_key(t: TensorData) -> Any:
    if t.array is None:
        return ("unprinted", id(t))  # data unknown: equal only to itself
    a = np.ascontiguousarray(t.array)
    return (str(a.dtype), a.shape, a.tobytes())


def node_key(n: Node) -> Optional[tuple]:
    """The identity CSE and constant pooling compare nodes by (PyTorch's EqualNode), or None
    when the node never equals another (graph attributes, NaN, ...)."""
    attrs = []
    for name in sorted(n.attrs):
        kind, value = n.attrs[name]
        key = _attr_key(kind, value)
        if key is None:
            return None
        attrs.append((name, kind, key))
    return (n.kind, tuple(o.type for o in n.outputs), tuple(id(v) for v in n.inputs), tuple(attrs))


def _cse_block(block: Block, db: AliasDb, parent_lookup: Callable[[tuple], Optional[Node]]) -> bool:
    changed = False
    table: dict[tuple, Node] = {}

    def lookup(key: tuple) -> Optional[Node]:
        return table.get(key) or parent_lookup(key)

    graph_outputs = block.graph.outputs
    for n in block.nodes():
        if has_side_effects(n) or is_nondeterministic(n) or db.has_writers(n):
            continue
        if n.blocks:
            for b in n.blocks:
                changed |= _cse_block(b, db, lookup)
            continue
        key = node_key(n)
        if key is None:
            continue
        existing = parent_lookup(key)
        if existing is not None:
            if not db.safe_to_change_aliasing(n.outputs, existing.outputs):
                continue
        else:
            existing = table.get(key)
            if existing is None:
                table[key] = n
                continue
            # don't introduce new aliasing among graph outputs
            if db.may_contain_alias(n.outputs, graph_outputs) and \
                    db.may_contain_alias(existing.outputs, graph_outputs):
                continue
        for old, new in zip(n.outputs, existing.outputs):
            old.replace_all_uses_with(new)
        n.destroy()
        changed = True
    return changed


@register_pass("eliminate_common_subexpression")
def run(graph: Graph) -> bool:
    """Replace nodes equal to an earlier, dominating node by that node (PyTorch's EliminateCommonSubexpression)."""
    return _cse_block(graph.block, AliasDb(graph), lambda key: None)
