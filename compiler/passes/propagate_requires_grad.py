"""PyTorch's RequiresGradAnalysis (passes/requires_grad_analysis.cpp): writes `requires_grad`
into tensor types from the inputs' types, through prim::If and prim::Loop."""

from __future__ import annotations

from irjit.compiler.autodiff.differentiate import type_requires_grad
from irjit.compiler.ir.node import Block, Node, Value
from irjit.ops import facts
from irjit.ops.dtypes import is_complex_name, is_floating_name
from irjit.ops.types import TensorType

from .registry import register_pass


def _get(v: Value) -> bool:
    return type_requires_grad(v.type)


def _set(v: Value, value: bool) -> bool:
    t = v.type
    if isinstance(t, TensorType) and t.requires_grad != value:
        v.type = t.with_(requires_grad=value)
        return True
    return False


# schema argument types TorchScript passes as ints
_INT_ENUMS = ("ScalarType", "MemoryFormat", "Layout")


def _fits(t, want: str) -> bool:
    from .peephole_helpers import type_fits
    want = want.split("(")[0] if want.startswith("Tensor(") else want
    for enum in _INT_ENUMS:
        want = want.replace(enum, "int")
    return type_fits(t, want)


def _constant_dtype_category(node: Node):
    """The category ("int", "float", ...) of the constant `dtype` argument the node passes
    to the schema its input types fit, or None."""
    from irjit.ops.dtypes import SCALAR_TYPE_TABLE
    from irjit.ops.registry import NO_DEFAULT, overloads
    from .peephole_helpers import const_int
    for entry in overloads(node.kind):
        args = entry.schema.arguments
        if entry.schema.variadic or len(node.inputs) > len(args) or \
                any(a.default is NO_DEFAULT for a in args[len(node.inputs):]):
            continue
        if not all(_fits(v.type, a.type) for v, a in zip(node.inputs, args)):
            continue
        for v, a in zip(node.inputs, args):
            if a.name == "dtype" and a.type.startswith("ScalarType"):
                code = const_int(v)
                return next((t.category for t in SCALAR_TYPE_TABLE if t.code == code), None)
        return None
    return None


def _casts_to_non_differentiable_dtype(node: Node) -> bool:
    """An op given a constant integral or bool `dtype` (`aten::to(%x, 4, ...)`) makes a
    tensor of that dtype, which cannot require grad: PyTorch knows the output's scalar type
    (from shape analysis or a profile) and so marks it; here the schema's argument says it."""
    return node.kind.startswith("aten::") and _constant_dtype_category(node) in ("int", "bool")


def _simple(node: Node) -> None:
    kind = node.kind
    if facts.has_tag(kind, "comparison") or kind == "aten::detach" or \
            _casts_to_non_differentiable_dtype(node):
        _set(node.outputs[0], False)
        return
    if kind == "aten::type_as":
        _set(node.outputs[0], _get(node.inputs[0]))
        return
    should = any(_get(v) for v in node.inputs)
    for out in node.outputs:
        t = out.type
        if isinstance(t, TensorType):
            ok = t.scalar_type is None or is_floating_name(t.scalar_type) or is_complex_name(t.scalar_type)
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
