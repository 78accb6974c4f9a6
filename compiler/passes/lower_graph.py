"""Lower a module's method graph to a plain function, mirroring PyTorch's LowerGraph
(lower_graph.cpp, `torch._C._jit_pass_lower_graph`): every attribute read through a
`prim::GetAttr` chain from `%self` becomes a new graph input, typed from its value, and `%self`
goes away. The attributes are visited as PyTorch visits its module slots (a stack of uses), so
the new inputs come in PyTorch's order; `lower_graph` returns their dotted paths, the list
PyTorch returns as the parameters and buffers to pass."""

from __future__ import annotations

from typing import Optional

import numpy as np

from irjit.compiler.ir import ClassType, Graph, OptionalType
from irjit.compiler.ir.constants import tensor_type_of
from irjit.ops.errors import IRTypeError
from irjit.ops.types import NONE, TensorType

from .registry import register_pass


class LoweringError(IRTypeError):
    """The graph cannot be lowered as given: the module is used other than through
    `prim::GetAttr` (method calls not inlined), or an attribute's value is missing."""


def _is_module(type_) -> bool:
    return isinstance(type_, ClassType) and not type_.qualified_name.startswith("__torch__.torch.classes.")


def _input_type(path: str, declared, params: dict, requires_grad: frozenset):
    may_be_tensor = isinstance(declared, TensorType) or (
        isinstance(declared, OptionalType) and isinstance(declared.elem, TensorType))
    if not may_be_tensor:
        return declared
    if path not in params:
        if isinstance(declared, OptionalType):
            return NONE  # an optional attribute left out of params is None (`bias=False`)
        raise LoweringError(f"lower_graph: no value for attribute '{path}' ({declared}); "
                            f"give it in params (dotted path -> array)")
    return tensor_type_of(np.asarray(params[path]), path in requires_grad)


def lower_graph(graph: Graph, params: Optional[dict] = None, requires_grad=()) -> list[str]:
    """Replace `%self`'s attribute reads by new inputs; return the attribute paths in input order.
    `params` (dotted path -> array) types the tensor inputs; paths in `requires_grad` are the
    module's parameters (`requires_grad=1`, as PyTorch types nn.Parameters)."""
    if not graph.inputs or not _is_module(graph.inputs[0].type):
        return []
    params = params or {}
    grad_paths = frozenset(requires_grad)
    unknown = sorted(grad_paths - set(params))
    if unknown:
        raise LoweringError(f"lower_graph: requires_grad names attributes without a value in params: "
                            f"{', '.join(unknown)}")
    reads, submodules = _attribute_reads(graph.inputs[0])
    slots: list[str] = []
    types = {}
    for n, path in reads:
        if path not in types:
            slots.append(path)
            types[path] = _input_type(path, n.output.type, params, grad_paths)
    first_slot = len(graph.inputs)
    for path in slots:
        graph.add_input(type=types[path])
    for n, path in reads:
        n.output.replace_all_uses_with(graph.inputs[first_slot + slots.index(path)])
        n.destroy()
    for n in reversed(submodules):
        n.destroy()
    graph.erase_input(0)
    return slots


def _attribute_reads(self_value) -> tuple[list, list]:
    """The `prim::GetAttr` nodes reading attributes (with their dotted paths) and those reading
    submodules, in the order PyTorch's stack of uses visits them; nothing is changed yet."""
    reads, submodules = [], []
    to_scan = [("", use.user) for use in self_value.uses]
    while to_scan:
        prefix, n = to_scan.pop()
        if n.kind != "prim::GetAttr":
            raise LoweringError(f"lower_graph: the module is used by {n.kind}, not only read through "
                                f"prim::GetAttr; inline method calls first")
        path = prefix + n.attr("name")
        if _is_module(n.output.type):
            to_scan.extend((path + ".", use.user) for use in n.output.uses)
            submodules.append(n)
        else:
            reads.append((n, path))
    return reads, submodules


@register_pass("lower_graph")
def run(graph: Graph, params: Optional[dict] = None, requires_grad: tuple = ()) -> bool:
    """PyTorch's LowerGraph: module attributes become graph inputs and `%self` is removed."""
    lowers = bool(graph.inputs) and _is_module(graph.inputs[0].type)
    lower_graph(graph, params, requires_grad)
    return lowers
