"""What decompositions are written with: the registry of rules by op kind, and a builder
inserting fully typed nodes into a specialized graph (each new tensor gets a complete
contiguous type of the given sizes, so the new nodes can join native groups)."""

from __future__ import annotations

from typing import Any, Callable, Optional

from irjit.compiler.ir import Node, Value
from irjit.compiler.ir.constants import constant_value
from irjit.ops.types import TensorType

from .lower import contiguous_strides, tensor_layout


class _Rule:
    """A decomposition `rewrite(node) -> bool` (False: the node is left whole) and whether it
    holds under grad mode."""

    def __init__(self, rewrite: Callable[[Node], bool], under_grad: Callable[[Node], bool]):
        self.rewrite, self.under_grad = rewrite, under_grad

    def __call__(self, node: Node, grad_enabled: bool = False) -> bool:
        return (not grad_enabled or self.under_grad(node)) and self.rewrite(node)


# op kind -> [rule(node, grad_enabled) -> bool]: each rewrites a node in place or returns False
RULES: dict[str, list[_Rule]] = {}


def decomposes(*kinds: str, outputs: Optional[int] = None,
               under_grad: Callable[[Node], bool] = lambda n: True):
    """Decorator: a decomposition of nodes of these kinds (with `outputs` outputs, when given,
    to tell overloads apart). `under_grad(node)` says whether the decomposition also holds in a
    graph specialized under grad mode (whose groups are differentiated symbolically): its
    derivative must be the op's, and what it writes in place must not be recorded."""
    def wrap(fn):
        rule = fn if outputs is None else (lambda n: len(n.outputs) == outputs and fn(n))
        rule = _Rule(rule, under_grad)
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
