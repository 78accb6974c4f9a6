"""PyTorch's RequiresGradAnalysis (passes/requires_grad_analysis.cpp): writes `requires_grad`
into tensor types from the inputs' types, through prim::If and prim::Loop."""

from __future__ import annotations

from irjit.compiler.autodiff.differentiate import type_requires_grad
from irjit.compiler.ir.node import Block, Node, Value
from irjit.ops.types import TensorType

from .registry import register_pass

_COMPARISONS = frozenset({"aten::lt", "aten::le", "aten::gt", "aten::ge", "aten::eq", "aten::ne"})
_DIFFERENTIABLE_DTYPES = frozenset({"Float", "Double", "Half", "BFloat16", "ComplexFloat",
                                    "ComplexDouble", "ComplexHalf"})


def _get(v: Value) -> bool:
    return type_requires_grad(v.type)


def _set(v: Value, value: bool) -> bool:
    t = v.type
    if isinstance(t, TensorType) and t.requires_grad != value:
        v.type = t.with_(requires_grad=value)
        return True
    return False


def _simple(node: Node) -> None:
    kind = node.kind
    if kind in _COMPARISONS or kind == "aten::detach":
        _set(node.outputs[0], False)
        return
    if kind == "aten::type_as":
        _set(node.outputs[0], _get(node.inputs[0]))
        return
    should = any(_get(v) for v in node.inputs)
    for out in node.outputs:
        t = out.type
        if isinstance(t, TensorType):
            ok = t.scalar_type is None or t.scalar_type in _DIFFERENTIABLE_DTYPES
            _set(out, should and ok)


def _node(node: Node) -> None:
    if node.kind == "prim::If" and len(node.blocks) != 2:
        for b in node.blocks:
            _block(b)
    elif node.kind == "prim::If":
        t, f = node.blocks
        _block(t)
        _block(f)
        for out, a, b in zip(node.outputs, t.outputs, f.outputs):
            _set(out, _get(a) or _get(b))
    elif node.kind == "prim::Loop":
        body = node.blocks[0]
        loop_in = [_get(v) for v in node.inputs[2:]]
        body_in, body_out = list(loop_in), [False] * len(node.outputs)
        while True:
            new_in = [a or b for a, b in zip(body_in, body_out)]
            for v, r in zip(body.inputs[1:], new_in):
                _set(v, r)
            _block(body)
            new_out = [_get(v) for v in body.outputs[1:]]
            if new_in == body_in and new_out == body_out:
                break
            body_in, body_out = new_in, new_out
        for out, a, b in zip(node.outputs, body_out, loop_in):
            _set(out, a or b)
    else:
        _simple(node)


def _block(block: Block) -> None:
    for n in block.nodes():
        _node(n)


@register_pass("propagate_requires_grad")
def run(graph) -> bool:
    """Mark which tensor values require grad (PyTorch's PropagateRequiresGrad)."""
    before = [str(v.type) for n in graph.walk() for v in n.outputs]
    _block(graph.block)
    return before != [str(v.type) for n in graph.walk() for v in n.outputs]
