"""Specialization-time decompositions for native code: multi-output ops of a fully typed
graph, and ops whose lowering is a composition of others (normalizations),
become single-output nodes that have lowering rules, and in-place ops on fresh tensors their
functional ops, so they join native groups."""

from __future__ import annotations

import numpy as np

from irjit.compiler.ir import Graph, Node
from irjit.compiler.ir.constants import constant_value
from irjit.compiler.passes.remove_mutation import remove_tensor_mutation
from irjit.ops import facts
from irjit.ops.types import TensorType

from . import decompose_nn, decompose_tensor  # noqa: F401  (register their rules)
from .decompose_rules import RULES, decomposes
from .lower import contiguous_strides, entry_for, tensor_layout


def _typed(node: Node, like: TensorType, sizes) -> Node:
    node.output.type = like.with_(sizes=tuple(sizes), strides=contiguous_strides(sizes))
    return node


def _constant_list(v):
    """The value of a constant list (a list constant or a ListConstruct of constants)."""
    if v.node.kind == "prim::Constant":
        return list(constant_value(v.node))
    if v.node.kind == "prim::ListConstruct" and all(i.node.kind == "prim::Constant" for i in v.node.inputs):
        return [constant_value(i.node) for i in v.node.inputs]
    return None


@decomposes("aten::linear_backward", under_grad=lambda n: False)
def _decompose_linear_backward(n: Node) -> bool:
    """`aten::linear_backward(x, g, w, mask)` with a 2-D weight: grad_input = g @ w,
    grad_weight = g2ᵀ @ x2 (g and x flattened to 2-D), grad_bias = g summed over the leading
    dims; outputs the constant mask leaves out must be unused, and unused ones are not
    computed (a backward whose input needs no gradient discards grad_input)."""
    x, g, w, mask_v = n.inputs
    layouts = [tensor_layout(v.type) for v in (x, g, w)]
    mask = _constant_list(mask_v)
    if mask is None or len(mask) != 3 or any(l is None for l in layouts):
        return False
    (xd, xs, _), (gd, gs, _), (wd, ws, _) = layouts
    if len(ws) != 2 or len(xs) < 2 or len(gs) != len(xs) or not xd == gd == wd:
        return False
    if any(not m and o.uses for m, o in zip(mask, n.outputs)) or \
            any(m and tensor_layout(o.type) is None for m, o in zip(mask, n.outputs)):
        return False
    mask = [m and bool(o.uses) for m, o in zip(mask, n.outputs)]
    graph = n.graph
    graph.set_insert_point(n)
    out_features, in_features = ws
    gt = g.type
    if mask[0]:
        gi = graph.insert_node(graph.create("aten::matmul", [g, w]))
        gi.output.type = n.outputs[0].type
        n.outputs[0].replace_all_uses_with(gi.output)
    if mask[1]:
        rows = 1
        for s in gs[:-1]:
            rows *= s
        g2 = _typed(graph.insert_node(graph.create(
            "aten::reshape", [g, graph.insert_constant([rows, out_features])])), gt, (rows, out_features))
        x2 = _typed(graph.insert_node(graph.create(
            "aten::reshape", [x, graph.insert_constant([rows, in_features])])), gt, (rows, in_features))
        g2t = _typed(graph.insert_node(graph.create("aten::t", [g2.output])), gt, (out_features, rows))
        g2t.output.type = g2t.output.type.with_(strides=(1, out_features))
        gw = graph.insert_node(graph.create("aten::matmul", [g2t.output, x2.output]))
        gw.output.type = n.outputs[1].type
        n.outputs[1].replace_all_uses_with(gw.output)
    if mask[2]:
        gb = graph.insert_node(graph.create("aten::sum", [
            g, graph.insert_constant(list(range(len(gs) - 1))), graph.insert_constant(False),
            graph.insert_constant(None)]))
        gb.output.type = n.outputs[2].type
        n.outputs[2].replace_all_uses_with(gb.output)
    n.destroy()
    return True


def decompose_for_native(graph: Graph, grad_enabled: bool = False) -> bool:
    """Rewrite the decomposable nodes of every block, and in-place ops on fresh tensors that
    nothing aliases into their functional ops (which fuse); True when anything changed. With
    `grad_enabled` (the mode the graph is specialized under), only the decompositions that
    hold under grad mode apply."""
    changed = False
    for n in list(graph.walk()):
        for rule in RULES.get(n.kind, ()):
            if rule(n, grad_enabled):
                changed = True
                break
    changed |= remove_tensor_mutation(graph, _writes_a_pointwise_result, later_views=True)
    return changed


def _writes_a_pointwise_result(node: Node) -> bool:
    """Whether the in-place `node` may become its functional op here: it writes the result of
    a pointwise op, a fresh tensor (not dropout, which returns its very input in eval mode);
    the functional op has a lowering rule and computes in the written tensor's dtype."""
    producer = node.inputs[0].node.kind
    if not facts.has_tag(producer, "pointwise") or facts.has_tag(producer, "dropout"):
        return False
    entry = entry_for(node.kind[:-1], node.inputs)
    return entry is not None and entry.lowering is not None and _keeps_dtype(node)


def _keeps_dtype(node: Node) -> bool:
    """No operand of the in-place op promotes the written tensor's dtype (the in-place op
    keeps it; the functional op would not)."""
    layout = tensor_layout(node.inputs[0].type)
    if layout is None:
        return False
    kind = layout[0].kind  # "f", "i" or "b"
    order = {"b": 0, "i": 1, "f": 2}
    for v in node.inputs[1:]:
        if isinstance(v.type, TensorType):
            other = tensor_layout(v.type)
            if other is None or other[0] != layout[0]:
                return False
        elif v.node.kind == "prim::Constant":
            value = constant_value(v.node)
            if isinstance(value, (bool, int, float)) and \
                    order[np.array(value).dtype.kind] > order.get(kind, 2):
                return False
        elif getattr(v.type, "name", None) in ("int", "float") and \
                order["f" if v.type.name == "float" else "i"] > order.get(kind, 2):
            return False
    return True
