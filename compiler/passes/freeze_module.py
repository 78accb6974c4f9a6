"""Freeze a module's forward graph, mirroring PyTorch's freeze_module (freeze_module.cpp, what
`torch.jit.freeze` runs before optimize_frozen_graph): every attribute read through a
`prim::GetAttr` chain from `%self` becomes a constant named `self.<path>` (tensors by value,
from `params`), then the graph is cleaned up as PyTorch's runOptimization does. Attributes the
graph writes (`prim::SetAttr`) stay attributes, as in PyTorch."""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from irjit.compiler.ir import ClassType, Graph, OptionalType
from irjit.compiler.ir.constants import make_constant
from irjit.ops.errors import IRTypeError
from irjit.ops.types import BOOL, TensorType

from .manager import PassManager
from .peephole_helpers import has_writers
from .registry import get_pass, register_pass

# PyTorch's runOptimization(unroll_non_constant_loops=false, const_prop_user_classes=false)
_CLEANUP = ("eliminate_dead_code,eliminate_common_subexpression,peephole,"
            "constant_propagation,constant_pooling")
_AFTER_UNROLLING = "peephole,constant_propagation"


class FreezingError(IRTypeError):
    """The graph cannot be frozen as given: an attribute's value is missing, or module
    methods are still called (not inlined)."""


def _may_hold_tensor(t) -> bool:
    return isinstance(t, TensorType) or (isinstance(t, OptionalType) and isinstance(t.elem, TensorType))


def _attribute_paths(graph: Graph) -> tuple[dict, set]:
    """GetAttr output value -> its dotted path from `%self`, and the paths the graph writes
    (`prim::SetAttr`, or an in-place op on the attribute's value: PyTorch's mutable attributes)."""
    paths = {graph.inputs[0]: ""}
    written = set()
    for n in graph.walk():
        if n.kind in ("prim::GetAttr", "prim::SetAttr") and n.inputs[0] in paths:
            base = paths[n.inputs[0]]
            path = f"{base}.{n.attr('name')}" if base else n.attr("name")
            if n.kind == "prim::GetAttr":
                paths[n.output] = path
                if _may_hold_tensor(n.output.type) and has_writers(n.output):
                    written.add(path)
            else:
                written.add(path)
    return paths, written


def _value_of(path: str, type_, params: dict) -> Any:
    if path in params:
        value = np.asarray(params[path])
        if isinstance(type_, (TensorType, OptionalType)):
            return np.ascontiguousarray(value)
        return value.item()
    if path.split(".")[-1] == "training" and type_ == BOOL:
        return False  # frozen modules are in eval mode
    if isinstance(type_, OptionalType):
        return None  # an optional attribute left out of params is None (`bias=False`)
    raise FreezingError(f"freeze_module: no value for attribute '{path}' ({type_}); "
                      f"give it in params (dotted path -> array)")


def _constant_for(graph: Graph, path: str, type_, params: dict):
    value = _value_of(path, type_, params)
    return make_constant(graph, bool(value) if type_ == BOOL else value)


@register_pass("freeze_module")
def run(graph: Graph, params: Optional[dict] = None) -> bool:
    """PyTorch's freeze_module: inline `%self`'s attributes as constants named `self.<path>`
    (values from `params`, dotted path -> array), then clean up. The graph must be inlined."""
    if not graph.inputs or not isinstance(graph.inputs[0].type, ClassType):
        return False
    params = params or {}
    paths, written = _attribute_paths(graph)
    for n in graph.walk():
        if n.kind == "prim::CallMethod" and n.inputs[0] in paths:
            raise FreezingError("freeze_module: the graph still calls methods of the module; "
                              "inline it first (pass `inline` with the method graphs)")
    constants: dict[str, Any] = {}
    first = next(iter(graph.nodes()), graph.return_node)
    changed = False
    for n in list(graph.walk()):
        if n.kind != "prim::GetAttr" or n.output not in paths or isinstance(n.output.type, ClassType):
            continue
        path = paths[n.output]
        if path in written or any(w.startswith(path + ".") for w in written):
            continue
        if path not in constants:
            node = _constant_for(graph, path, n.output.type, params)
            node.insert_before(first)
            node.output.set_debug_name("self." + path)
            constants[path] = node.output
        n.output.replace_all_uses_with(constants[path])
        n.destroy()
        changed = True
    _run_optimization(graph)
    return changed


def _run_optimization(graph: Graph) -> None:
    PassManager(_CLEANUP).run(graph)
    if get_pass("unroll_constant_loops").run(graph):
        PassManager(_AFTER_UNROLLING).run(graph)
    get_pass("eliminate_common_subexpression").run(graph)
