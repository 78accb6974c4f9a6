"""What decompositions are written with: the registry of rules by op kind, and a builder
inserting fully typed nodes into a specialized graph (each new tensor gets a complete
contiguous type of the given sizes, so the new nodes can join native groups)."""

from __future__ import annotations

from typing import Any, Callable, Optional

from irjit.compiler.ir import Node, Value
from irjit.compiler.ir.constants import constant_value
from irjit.ops.types import TensorType

from .lower import contiguous_strides, tensor_layout


# op kind -> [rule(node) -> bool]: each rewrites a node in place or returns False
RULES: dict[str, list[Callable[[Node], bool]]] = {}


def decomposes(*kinds: str, outputs: Optional[int] = None):
    """Decorator: a decomposition of nodes of these kinds (with `outputs` outputs, when given,
    to tell overloads apart)."""
    def wrap(fn):
        rule = fn if outputs is None else (lambda n: len(n.outputs) == outputs and fn(n))
        for kind in kinds:
            RULES.setdefault(kind, []).append(rule)
        return fn
    return wrap


def is_none(v: Value) -> bool:
    return v.node.kind == "prim::Constant" and constant_value(v.node) is None


def constant_of(v: Value) -> Any:
    """The Python value of a constant input (lists from a ListConstruct of constants), or
    raise LookupError for a run-time value."""
    if v.node.kind == "prim::Constant":
        value = constant_value(v.node)
        return list(value) if isinstance(value, tuple) else value
    if v.node.kind == "prim::ListConstruct" and all(i.node.kind == "prim::Constant" for i in v.node.inputs):
        return [constant_value(i.node) for i in v.node.inputs]
    raise LookupError(f"%{v.name} is not a constant")


def sizes_of(v: Value) -> Optional[tuple]:
    layout = tensor_layout(v.type)
    return None if layout is None else layout[1]


class NodeBuilder:
    """Builds nodes before `at`; tensors are typed like `like` (dtype, device) with new sizes."""

    def __init__(self, at: Node, like: TensorType):
        self.graph = at.graph
        self.graph.set_insert_point(at)
        self.like = like

    def value(self, x: Any) -> Value:
        return x if isinstance(x, Value) else self.graph.insert_constant(x)

    def op(self, kind: str, inputs: list, sizes, like: Optional[TensorType] = None) -> Value:
        """A new `kind` node of `inputs` (values or constants) whose output has `sizes`."""
        node = self.graph.insert_node(self.graph.create(kind, [self.value(x) for x in inputs]))
        sizes = tuple(sizes)
        node.output.type = (like or self.like).with_(sizes=sizes, strides=contiguous_strides(sizes))
        return node.output

    def replace(self, old: Value, new: Value) -> None:
        """Every use of `old` reads `new`, which takes `old`'s type when their sizes agree."""
        if sizes_of(new) == sizes_of(old):
            new.type = old.type.with_(strides=new.type.strides)
        old.replace_all_uses_with(new)
