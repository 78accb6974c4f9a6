"""A fully typed group graph -> one kernel: graph inputs become buffers read at broadcast
indices, each node is lowered by its op's rule (ops/lowering_*.py) into the kernel's
expression DAG, and the graph outputs become stores. Intermediates never reach memory."""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from irjit.compiler.ir import Graph, Node, Value
from irjit.compiler.ir.constants import constant_value
from irjit.ops.errors import IRTypeError
from irjit.ops.lowering_common import NotLowerable
from irjit.ops.registry import OpEntry, find_op, with_defaults
from irjit.ops.types import SCALAR_TYPES, NamedType, TensorType

from .kernel import Access, Buffer, Kernel, Load, Store
from .scalar_emitter import DIMENSIONED, ZERO_DIM, ExprEmitter, Val
from .scalar_ops import SUPPORTED_DTYPES


def tensor_layout(t: Any) -> Optional[tuple[np.dtype, tuple[int, ...], tuple[int, ...]]]:
    """(dtype, sizes, strides in elements) of a complete tensor type of a supported dtype;
    strides default to contiguous. None when anything is unknown."""
    if not isinstance(t, TensorType) or t.scalar_type is None:
        return None
    sizes = t.complete_sizes()
    name = SCALAR_TYPES.get(t.scalar_type)
    if sizes is None or name is None or np.dtype(name) not in SUPPORTED_DTYPES:
        return None
    strides = t.strides
    if strides is None or len(strides) != len(sizes) or any(s is None for s in strides):
        strides = contiguous_strides(sizes)
    return np.dtype(name), tuple(sizes), tuple(strides)


def contiguous_strides(sizes) -> tuple[int, ...]:
    out, acc = [], 1
    for s in reversed(sizes):
        out.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(out))


def _dummy(v: Value) -> Any:
    """A run-time stand-in for overload resolution."""
    if isinstance(v.type, TensorType):
        layout = tensor_layout(v.type)
        return np.empty(0, layout[0] if layout else np.float32)
    if v.node.kind == "prim::Constant":
        value = constant_value(v.node)
        return list(value) if isinstance(value, tuple) else value
    t = v.type
    if isinstance(t, NamedType):
        return {"int": 0, "float": 0.0, "bool": False, "NoneType": None}.get(t.name, object())
    return object()


def entry_of(node: Node) -> Optional[OpEntry]:
    """The registered overload a typed node calls, or None."""
    try:
        return find_op(node.kind, [_dummy(v) for v in node.inputs])
    except (IRTypeError, KeyError):
        return None


def lowerable_args(node: Node) -> bool:
    """Tensors of complete types and constants only (no run-time scalars yet)."""
    for v in node.inputs:
        if isinstance(v.type, TensorType):
            if tensor_layout(v.type) is None:
                return False
        elif v.node.kind != "prim::Constant":
            return False
    return all(tensor_layout(o.type) is not None for o in node.outputs)


def _broadcast_strides(sizes, strides, shape) -> tuple[int, ...]:
    lead = len(shape) - len(sizes)
    assert lead >= 0, "a value has more dimensions than the iteration space"
    out = [0] * lead
    for n, s, full in zip(sizes, strides, shape[lead:]):
        assert n == full or n == 1, "value does not broadcast to the iteration space"
        out.append(s if n == full and n != 1 else 0)
    return tuple(out)


class GroupLowering:
    """Lowers the nodes of one group graph into a kernel over the broadcast output shape."""

    def __init__(self, graph: Graph, name: str):
        self.graph = graph
        self.emitter = ExprEmitter()
        tensors = [v for v in graph.inputs]
        self.buffers: list[Buffer] = []
        for v in tensors:
            layout = tensor_layout(v.type)
            if layout is None:
                raise NotLowerable(f"input %{v.name} has no complete tensor type")
            self.buffers.append(Buffer(len(self.buffers), *layout, is_output=False))
        out_layouts = []
        for v in graph.outputs:
            layout = tensor_layout(v.type)
            if layout is None:
                raise NotLowerable(f"output %{v.name} has no complete tensor type")
            out_layouts.append(layout)
        self.shape = tuple(np.broadcast_shapes(*[sizes for _, sizes, _ in out_layouts]))
        for dtype, sizes, _ in out_layouts:
            self.buffers.append(Buffer(len(self.buffers), dtype, sizes, contiguous_strides(sizes), True))
        self.kernel = Kernel(name, self.shape, (), self.buffers)
        self.env: dict[Value, Any] = {}

    def input_val(self, i: int) -> Val:
        buf = self.buffers[i]
        access = Access(i, _broadcast_strides(buf.sizes, buf.strides, self.shape))
        return Val(Load(access, buf.dtype), buf.dtype, ZERO_DIM if not buf.sizes else DIMENSIONED)

    def run(self) -> Kernel:
        for i, v in enumerate(self.graph.inputs):
            self.env[v] = self.input_val(i)
        for node in self.graph.nodes():
            self.lower_node(node)
        n_in = len(self.graph.inputs)
        for j, v in enumerate(self.graph.outputs):
            buf = self.buffers[n_in + j]
            val = self.env[v]
            if not isinstance(val, Val):
                raise NotLowerable(f"output %{v.name} is not a tensor")
            val = self.emitter.cast(val, buf.dtype)
            access = Access(buf.position, _broadcast_strides(buf.sizes, buf.strides, self.shape))
            self.kernel.stores.append(Store(access, val.expr))
        return self.kernel

    def lower_node(self, node: Node) -> None:
        if node.kind == "prim::Constant":
            value = constant_value(node)
            self.env[node.output] = list(value) if isinstance(value, tuple) else value
            return
        entry = entry_of(node)
        if entry is None or entry.lowering is None:
            raise NotLowerable(f"{node.kind} has no lowering")
        args = with_defaults(entry, [self.env[v] for v in node.inputs])
        result = entry.lowering(self.emitter, *args)
        out = node.output
        dtype, sizes, _ = tensor_layout(out.type)
        result = self.emitter.cast(result, dtype)
        self.env[out] = Val(result.expr, dtype, DIMENSIONED if sizes else ZERO_DIM)


def lower_group(graph: Graph, name: str) -> Kernel:
    return GroupLowering(graph, name).run()


def can_lower(node: Node) -> bool:
    """Whether `node` alone lowers into a kernel (typed args, a rule that accepts them)."""
    if node.blocks or len(node.outputs) != 1 or not lowerable_args(node):
        return False
    entry = entry_of(node)
    if entry is None or entry.lowering is None:
        return False
    emitter = ExprEmitter()
    args = []
    for i, v in enumerate(node.inputs):
        if isinstance(v.type, TensorType):
            dtype, sizes, _ = tensor_layout(v.type)
            args.append(Val(Load(Access(i, ()), dtype), dtype, DIMENSIONED if sizes else ZERO_DIM))
        else:
            args.append(_dummy(v))
    try:
        result = entry.lowering(emitter, *with_defaults(entry, args))
        emitter.cast(result, tensor_layout(node.output.type)[0])
    except NotLowerable:
        return False
    return isinstance(result, Val)
