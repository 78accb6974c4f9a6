"""Constant propagation: run nodes whose inputs are all constants and replace their outputs
by `prim::Constant`s, inline `prim::If`s with a constant condition, drop loops that never
run, then remove dead code (PyTorch's ConstantPropagation)."""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from irjit.compiler.ir import Block, Graph, Node, TensorData, Value
from irjit.compiler.ir.constants import Device, constant_value, make_constant, tensor_type_of
from irjit.ops import facts
from irjit.ops.evaluate import evaluate_entry
from irjit.ops.prims import PURE_PRIMS
from irjit.ops.registry import find_op
from irjit.ops.types import (BOOL, FLOAT, INT, NONE, STR, ListType, NamedType, TupleType, Type)

from ._side_effects import AliasDb, has_side_effects, is_mutable_type, is_nondeterministic
from .eliminate_common_subexpression import node_key
from .eliminate_dead_code import eliminate_dead_code
from .registry import register_pass

_NOT_FOLDED = object()


class _ConstantPropagator:
    def __init__(self, graph: Graph, aliasing_types: bool):
        self.graph = graph
        self.aliasing_types = aliasing_types
        self.db: Optional[AliasDb] = AliasDb(graph) if aliasing_types else None
        self.changed = False

    def block(self, block: Block) -> None:
        for n in block.nodes():
            self.node(n)

    def node(self, n: Node) -> None:
        constant_inputs = all(v.node.kind == "prim::Constant" for v in n.inputs)
        if n.kind == "prim::If":
            if constant_inputs:
                self._inline_if(n)
            else:
                for b in n.blocks:
                    self.block(b)
                self._remove_extra_if_outputs(n)
        elif n.kind == "prim::Loop":
            if self._loop_will_not_run(n):
                for i, o in enumerate(n.outputs):
                    o.replace_all_uses_with(n.inputs[2 + i])
                n.destroy()
                self.changed = True
            else:
                for b in n.blocks:
                    self.block(b)
                self._remove_extra_loop_outputs(n)
        elif constant_inputs and self._supported(n):
            self._fold(n)
        else:
            for b in n.blocks:
                self.block(b)

    def _supported(self, n: Node) -> bool:
        if self.aliasing_types:
            no_mutation = not self.db.has_writers(n)
        else:
            no_mutation = not any(is_mutable_type(v.type) for v in list(n.inputs) + list(n.outputs))
        return (no_mutation and not n.kind.startswith("onnx::") and not facts.has_tag(n.kind, "not_foldable")
                and not is_nondeterministic(n) and not has_side_effects(n) and not n.blocks)

    def _fold(self, n: Node) -> None:
        outputs = run_node(n)
        if outputs is None:
            return
        self.graph.set_insert_point(n)
        for o, value in zip(n.outputs, outputs):
            c = insert_constant(self.graph, value, o.type)
            if c is None:
                continue  # not representable: leave the node for DCE to judge
            if value is None:
                c.type = o.type
            o.replace_all_uses_with(c)
            self.changed = True

    def _inline_if(self, n: Node) -> None:
        taken = n.blocks[0 if constant_value(n.inputs[0].node) else 1]
        self.block(taken)
        for m in taken.nodes():
            m.move_before(n)
        for o, bo in zip(n.outputs, taken.outputs):
            o.replace_all_uses_with(bo)
        n.destroy()
        self.changed = True

    def _remove_extra_if_outputs(self, n: Node) -> None:
        if len(n.blocks) != 2:  # a one-branch If (PyTorch's parser accepts it) is left alone
            return
        t, f = n.blocks
        before = len(t.outputs)
        self.graph.set_insert_point(n)
        i = 0
        while i < len(t.outputs):
            to, fo = t.outputs[i], f.outputs[i]
            replacement = None
            if to is fo:
                replacement = to
            elif to.node.kind == "prim::Constant" and fo.node.kind == "prim::Constant" and \
                    node_key(to.node) is not None and node_key(to.node) == node_key(fo.node):
                c = make_constant(self.graph, None, to.type)
                c.copy_attrs(to.node)
                replacement = self.graph.insert_node(c).output
            if replacement is None:
                i += 1
                continue
            n.outputs[i].replace_all_uses_with(replacement)
            n.erase_output(i)
            t.erase_output(i)
            f.erase_output(i)
        self.changed |= before != len(t.outputs)

    @staticmethod
    def _loop_will_not_run(n: Node) -> bool:
        trip, cond = n.inputs[0], n.inputs[1]
        trips = constant_value(trip.node) if trip.node.kind == "prim::Constant" else 1
        go = constant_value(cond.node) if cond.node.kind == "prim::Constant" else True
        return not (go and isinstance(trips, int) and trips > 0)

    def _remove_extra_loop_outputs(self, n: Node) -> None:
        body = n.blocks[0]
        before = len(n.outputs)
        for i in reversed(range(len(n.outputs))):
            if body.inputs[1 + i] is body.outputs[1 + i]:
                init = n.inputs[2 + i]
                n.outputs[i].replace_all_uses_with(init)
                body.inputs[1 + i].replace_all_uses_with(init)
                n.erase_output(i)
                n.remove_input(2 + i)
                body.erase_input(1 + i)
                body.erase_output(1 + i)
        self.changed |= before != len(n.outputs)


# ---- running one node on constant inputs

def _input_value(v: Value) -> Any:
    node = v.node
    kind = node.attr_kind("value")
    if v.type == NamedType("Function") or node.has_attr("name"):
        raise ValueError("function constants are not values")
    if kind == "t":
        data: TensorData = node.attr("value")
        if data.array is None:
            raise ValueError("tensor constant without data")
        return data.array.copy()
    value = constant_value(node)
    if kind == "ival" and hasattr(value, "value"):
        value = value.value
    if isinstance(value, tuple) and not isinstance(v.type, TupleType):
        value = list(value)
    return value


def run_node(n: Node) -> Optional[list]:
    """The node's outputs computed from its constant inputs, or None when it cannot run."""
    try:
        args = [_input_value(v) for v in n.inputs]
        pure_prim = PURE_PRIMS.get(n.kind)
        if pure_prim is not None:
            result = pure_prim(n, args)
        else:
            entry = find_op(n.kind, args)
            if entry.schema.variadic:
                return None
            result = evaluate_entry(entry, args)
    except Exception:  # noqa: BLE001 - an op that fails on these constants is not folded
        return None
    if len(n.outputs) == 1:
        return [result]
    if not isinstance(result, (tuple, list)) or len(result) != len(n.outputs):
        return None
    return list(result)


def _to_constant(value: Any, type_: Type) -> Any:
    """A value `make_constant` can hold, or _NOT_FOLDED."""
    if isinstance(value, np.ndarray):
        return np.array(value)
    if isinstance(value, np.generic):
        return value.item()
    if value is None or isinstance(value, (bool, int, float, str, complex)):
        return value
    if isinstance(value, (list, tuple)):
        items = [_to_constant(x, None) for x in value]
        if any(x is _NOT_FOLDED for x in items):
            return _NOT_FOLDED
        if isinstance(value, list) and any(isinstance(x, (np.ndarray, list, tuple, type(None)))
                                           for x in items):
            return _NOT_FOLDED
        return tuple(items) if isinstance(value, tuple) else items
    return _NOT_FOLDED


def _constant_type(value: Any, declared: Optional[Type] = None) -> Type:
    """The type PyTorch gives a constant of `value` (`IValue::type`): containers keep their
    element types, taken from the folded node's declared type where the value cannot tell
    (an empty list)."""
    if value is None:
        return NONE
    if isinstance(value, bool):
        return BOOL
    if isinstance(value, int):
        return INT
    if isinstance(value, float):
        return FLOAT
    if isinstance(value, str):
        return STR
    if isinstance(value, np.ndarray):
        return tensor_type_of(value)
    if isinstance(value, tuple):
        elems = declared.elems if isinstance(declared, TupleType) and \
            len(declared.elems) == len(value) else (None,) * len(value)
        return TupleType(tuple(_constant_type(x, t) for x, t in zip(value, elems)))
    if isinstance(value, list):
        if isinstance(declared, ListType):
            return declared
        kinds = {_constant_type(x) for x in value}
        if len(kinds) == 1:
            return ListType(kinds.pop())
    return NamedType("Any")


def insert_constant(graph: Graph, value: Any, type_: Optional[Type] = None) -> Optional[Value]:
    """A `prim::Constant` for `value` at the insertion point (PyTorch's tryInsertConstant), or
    None when the value cannot be a constant (objects, dicts, lists of tensors)."""
    value = _to_constant(value, type_)
    if value is _NOT_FOLDED:
        return None
    if isinstance(value, tuple):
        n = graph.create("prim::Constant", output_types=[_constant_type(value, type_)])
        n.set_attr("value", "ival", value)
        return graph.insert_node(n).output
    if isinstance(value, list):
        if value and all(isinstance(x, str) for x in value):
            pass
        elif value and not all(isinstance(x, (bool, int, float)) for x in value):
            return None
        elif value and len({type(x) for x in value}) > 1:
            return None
        if not value:
            if not isinstance(type_, ListType):
                return None
            n = graph.create("prim::Constant", output_types=[type_])
            from irjit.compiler.ir.attributes import AnnotatedValue
            elem = {"int": "int", "float": "float", "bool": "bool", "str": "str"}.get(
                getattr(type_.elem, "name", ""), None)
            if elem is None:
                return None
            n.set_attr("value", "ival", AnnotatedValue(f"annotate(List[{elem}], [])", []))
            return graph.insert_node(n).output
    if isinstance(value, str) and isinstance(type_, NamedType) and type_.name == "Device":
        value = Device(value)
    return graph.insert_node(make_constant(graph, value)).output


def propagate_constants(graph: Graph, aliasing_types: bool = True) -> bool:
    cp = _ConstantPropagator(graph, aliasing_types)
    cp.block(graph.block)
    graph.set_insert_point(graph.block)
    if cp.changed:
        eliminate_dead_code(graph)
    return cp.changed


@register_pass("constant_propagation")
def run(graph: Graph, ignore_custom_classes: bool = False) -> bool:
    """Fold nodes with constant inputs, constant-condition Ifs and never-run Loops, then DCE (PyTorch's ConstantPropagation).

    `ignore_custom_classes` is accepted for PyTorch parity; irjit never folds objects."""
    return propagate_constants(graph, aliasing_types=True)
