"""Constant propagation: run nodes whose inputs are all constants and replace their outputs
by `prim::Constant`s, inline `prim::If`s with a constant condition, drop loops that never
run, then remove dead code (PyTorch's ConstantPropagation)."""

from __future__ import annotations

from typing import Any, Optional


from irjit.compiler.ir import Block, Graph, Node, TensorData, Value
from irjit.compiler.ir.constants import Device, constant_value, make_constant
from irjit.ops import facts
from irjit.ops.evaluate import evaluate_entry
from irjit.ops.prims import PURE_PRIMS
from irjit.ops.registry import find_op
from irjit.ops.types import TENSOR, ListType, NamedType, TupleType, Type

from ._ivalue_constants import NOT_INSERTABLE, generic_attribute, insertable, is_tensor_list, value_type
from ._side_effects import AliasDb, has_side_effects, is_mutable_type, is_nondeterministic
from .eliminate_common_subexpression import node_key
from .eliminate_dead_code import eliminate_dead_code
from .registry import register_pass



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
    if kind == "ts" and value is None:
        raise ValueError("tensor list constant without data")
    if kind == "ival" and hasattr(value, "value"):
        value = value.value
    if isinstance(value, tuple) and not isinstance(v.type, TupleType):
        value = list(value)
    return _unboxed(value)


def _unboxed(value: Any) -> Any:
    """Tensors held inside list and tuple constants, as arrays."""
    if isinstance(value, TensorData):
        if value.array is None:
            raise ValueError("tensor constant without data")
        return value.array.copy()
    if isinstance(value, list):
        return [_unboxed(x) for x in value]
    if isinstance(value, tuple):
        return tuple(_unboxed(x) for x in value)
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


def insert_constant(graph: Graph, value: Any, type_: Optional[Type] = None) -> Optional[Value]:
    """A `prim::Constant` for `value` at the insertion point (PyTorch's tryInsertConstant), or
    None when the value cannot be a constant (objects, dicts)."""
    value = insertable(value)
    if value is NOT_INSERTABLE:
        return None
    if isinstance(value, tuple):
        t = value_type(value, type_)
        n = graph.create("prim::Constant", output_types=[t])
        n.set_attr("value", "ival", generic_attribute(value, t))
        return graph.insert_node(n).output
    if isinstance(value, list):
        if is_tensor_list(value, type_):
            n = graph.create("prim::Constant", output_types=[ListType(TENSOR)])
            n.set_attr("value", "ts", tuple(TensorData(x) for x in value))
            return graph.insert_node(n).output
        if not value and not isinstance(type_, ListType):
            return None  # an empty list's element type is unknown
        if not value or not _plain_list(value):
            t = value_type(value, type_)
            n = graph.create("prim::Constant", output_types=[t])
            n.set_attr("value", "ival", generic_attribute(value, t))
            return graph.insert_node(n).output
    if isinstance(value, str) and isinstance(type_, NamedType) and type_.name == "Device":
        value = Device(value)
    return graph.insert_node(make_constant(graph, value)).output


def _plain_list(value: list) -> bool:
    """A list of one scalar kind, which PyTorch stores as an `is`/`fs`/`ss` attribute."""
    kinds = {type(x) for x in value}
    return len(kinds) == 1 and kinds <= {bool, int, float, str}


def propagate_constants(graph: Graph, aliasing_types: bool = True) -> bool:
    cp = _ConstantPropagator(graph, aliasing_types)
    cp.block(graph.block)
    graph.set_insert_point(graph.block)
    if cp.changed:
        eliminate_dead_code(graph)
    return cp.changed


@register_pass("constant_propagation")
def run(graph: Graph) -> bool:
    """Fold nodes with constant inputs, constant-condition Ifs and never-run Loops, then DCE
    (PyTorch's ConstantPropagation). PyTorch's `ignore_custom_classes` option is not offered:
    irjit never folds nodes on objects, so it could change nothing."""
    return propagate_constants(graph, aliasing_types=True)
