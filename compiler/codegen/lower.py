"""A fully typed group graph -> one kernel: graph inputs become buffers read at broadcast
indices, each node is lowered by its op's rule (ops/lowering_*.py) into the kernel's
expression DAG, and the graph outputs become stores. Intermediates never reach memory."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from irjit.compiler.ir import Graph, Node, Value
from irjit.compiler.ir.constants import constant_value, plain_constant_value
from irjit.ops import facts
from irjit.ops.errors import IRTypeError
from irjit.ops.lowering_common import NotLowerable
from irjit.ops.registry import OpEntry, find_op, with_defaults
from irjit.ops.types import SCALAR_TYPES, ListType, NamedType, OptionalType, TensorType

from .gemm_epilogue import fuse_epilogue
from .index_emitter import LoweringEmitter
from .kernel import Access, Buffer, Kernel, Load, Product, Store
from .scalar_emitter import (DIMENSIONED, NUMBER, ZERO_DIM, ExprEmitter, NeedSpace, Space, Val, View,
                             broadcast_axes)
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
    if is_tensor_list(v):
        return [_dummy(x) for x in v.node.inputs]
    if v.node.kind == "prim::Constant":
        return rule_constant(v.node)
    t = v.type
    if isinstance(t, NamedType):
        return {"int": 0, "float": 0.0, "bool": False, "NoneType": None}.get(t.name, object())
    return object()


def rule_constant(node: Node) -> Any:
    """A constant as lowering rules get it: tuples as lists, values printed with their type
    (`annotate(List[int], [])`) as the values."""
    value = plain_constant_value(node)
    return list(value) if isinstance(value, tuple) else value


def entry_of(node: Node) -> Optional[OpEntry]:
    """The registered overload a typed node calls, or None."""
    return entry_for(node.kind, node.inputs)


def entry_for(kind: str, inputs: list[Value]) -> Optional[OpEntry]:
    """The registered overload of `kind` that typed `inputs` would call, or None."""
    try:
        return find_op(kind, [_dummy(v) for v in inputs])
    except (IRTypeError, KeyError):
        return None


def is_tensor_list(v: Value) -> bool:
    """A list built in the graph from tensors of complete types (the argument of cat/stack),
    or of those and None (`index`'s `Tensor?[]`): inside a kernel it is the list of its
    elements' values."""
    if v.node.kind != "prim::ListConstruct" or not isinstance(v.type, ListType):
        return False
    optional = isinstance(v.type.elem, OptionalType)
    elem = v.type.elem.elem if optional else v.type.elem
    return isinstance(elem, TensorType) and all(
        tensor_layout(x.type) is not None or optional and x.node.kind == "prim::Constant" and
        constant_value(x.node) is None for x in v.node.inputs)


# run-time numbers reach a kernel as 0-dim buffers of these dtypes
NUMBER_DTYPES = {"float": np.dtype(np.float64), "int": np.dtype(np.int64), "bool": np.dtype(np.bool_)}
# schema argument types whose value may be a run-time number (not a size or a dim)
_NUMERIC_ARGS = frozenset({"Scalar", "Scalar?", "float", "float?", "number", "SymInt"})


def number_dtype(t: Any) -> Optional[np.dtype]:
    return NUMBER_DTYPES.get(t.name) if isinstance(t, NamedType) else None


def lowerable_args(node: Node, entry: Optional[OpEntry] = None) -> bool:
    """Tensors of complete types, constants, and run-time numbers where the schema takes a
    Scalar or float."""
    params = entry.schema.arguments if entry is not None else ()
    for i, v in enumerate(node.inputs):
        if isinstance(v.type, TensorType):
            if tensor_layout(v.type) is None:
                return False
        elif is_tensor_list(v):
            continue
        elif v.node.kind != "prim::Constant":
            if number_dtype(v.type) is None or i >= len(params) or \
                    params[i].type not in _NUMERIC_ARGS:
                return False
    return all(tensor_layout(o.type) is not None for o in node.outputs
               if o.uses or len(node.outputs) == 1)  # unread outputs of several may be untyped


def _is_view(node: Node) -> bool:
    """Views are index arithmetic: their shapes take no part in the iteration space."""
    entry = entry_of(node) if node.kind != "prim::Constant" else None
    return entry is not None and entry.schema.is_view


class GroupLowering:
    """Lowers the nodes of one group graph into a kernel. The iteration space is the
    broadcast shape of the node outputs, or, with reductions, the reduced input's shape with
    the reduced dims as inner axes (found on a first attempt that meets the reduction)."""

    def __init__(self, graph: Graph, name: str, allow_pending_lists: bool = False):
        self.graph = graph
        self.name = name
        self.allow_pending_lists = allow_pending_lists  # trial lowerings: a cat may join next
        self.buffers: list[Buffer] = []
        for v in graph.inputs:
            layout = tensor_layout(v.type)
            if layout is None and number_dtype(v.type) is not None:
                layout = (number_dtype(v.type), (), ())
            if layout is None:
                raise NotLowerable(f"input %{v.name} has no complete tensor type")
            self.buffers.append(Buffer(len(self.buffers), *layout, is_output=False))
        for v in graph.outputs:
            layout = tensor_layout(v.type)
            if layout is None and allow_pending_lists and is_tensor_list(v):
                layout = (np.dtype(np.bool_), (), ())  # a pending list: its cat may join next
            if layout is None:
                raise NotLowerable(f"output %{v.name} has no complete tensor type")
            dtype, sizes, _ = layout
            self.buffers.append(Buffer(len(self.buffers), dtype, sizes, contiguous_strides(sizes), True))
        shapes = [tensor_layout(o.type)[1] for n in graph.nodes() if not _is_view(n)
                  for o in n.outputs if tensor_layout(o.type) is not None]
        if not shapes:  # only ops that may return views: the outputs they compute set the space
            shapes = [tensor_layout(o.type)[1] for o in graph.outputs if tensor_layout(o.type) is not None]
        try:
            full = tuple(np.broadcast_shapes(*shapes)) if shapes else ()
        except ValueError:  # reductions make smaller shapes; their input shape decides
            full = max(shapes, key=lambda s: (int(np.prod(s)), len(s)))
        self.default_space = Space(full)

    def run(self) -> "LoweredGroup":
        try:
            return self.lower(self.default_space)
        except NeedSpace as need:
            return self.lower(need.space)

    def lower(self, space: Space) -> "LoweredGroup":
        e = LoweringEmitter(space)
        buffers = list(self.buffers)

        def allocate(dtype, sizes) -> int:
            buffers.append(Buffer(len(buffers), np.dtype(dtype), tuple(sizes),
                                  contiguous_strides(sizes), True))
            return len(buffers) - 1

        e.allocate = allocate
        env: dict[Value, Any] = {}
        for i, v in enumerate(self.graph.inputs):
            buf = self.buffers[i]
            if isinstance(v.type, TensorType):
                env[v] = View(i, buf.dtype, buf.sizes, buf.strides)
            else:  # a run-time number: a weak scalar, as a Python number is to PyTorch
                access = Access(i, (0,) * len(space.full))
                env[v] = Val(Load(access, buf.dtype), buf.dtype, NUMBER)
        for node in self.graph.nodes():
            self.lower_node(e, node, env)
        kernel = Kernel(self.name, tuple(space.full[d] for d in space.kept),
                        tuple(space.full[d] for d in space.reduce_dims), buffers)
        n_in, n_outer = len(self.graph.inputs), len(space.kept)
        n_out = len(self.graph.outputs)
        results: list = []
        views: dict[int, View] = {}
        stored: dict = {}  # (id of a value, dtype) -> the buffer that holds it
        for j, v in enumerate(self.graph.outputs):
            buf = self.buffers[n_in + j]
            val = env[v]
            results.append(buf.position)
            if isinstance(val, View) and val.buffer >= n_in + n_out and val.offset == 0 and \
                    val.sizes == buf.sizes and val.strides == buf.strides and val.dtype == buf.dtype and \
                    np.prod(buffers[val.buffer].sizes) == np.prod(buf.sizes):
                results[-1] = val.buffer  # a product's result (reshaped) is the output itself
                continue
            if isinstance(val, View):  # built per call from its base's array: no store
                results[-1] = None
                views[j] = val
                buffers[buf.position] = Buffer(buf.position, buf.dtype, (), (), True)
                continue
            if isinstance(val, list) and self.allow_pending_lists:
                continue
            if not isinstance(val, Val):
                raise NotLowerable(f"output %{v.name} is not a computed tensor")
            if val.sizes != buf.sizes:
                raise NotLowerable(f"output %{v.name} has sizes {val.sizes}, not {buf.sizes}")
            if any(ax is None and n != 1 for n, ax in zip(val.sizes, val.axes)):
                raise NotLowerable(f"output %{v.name} does not run along the kernel's axes")
            key = (id(val), buf.dtype)
            if key in stored:  # `y` and `dropout(y)` in eval mode are one tensor: one array
                results[-1] = stored[key]
                continue
            stored[key] = buf.position
            val = e.cast(val, buf.dtype)
            strides = [0] * len(space.full)
            for n, st, ax in zip(buf.sizes, buf.strides, val.axes):
                if ax is not None:
                    strides[ax] = st
            inner = any(ax is not None and ax >= n_outer for ax in val.axes)
            kernel.stores.append(Store(Access(buf.position, tuple(strides)), val.expr, inner))
        products, kernel, buffers = fuse_epilogue(list(e.products), kernel if kernel.stores else None,
                                                  buffers, results, views)
        return LoweredGroup(buffers, products, kernel, results, views)

    def node_axes(self, e: ExprEmitter, node: Node, env: dict, sizes: tuple) -> Optional[tuple]:
        """The kernel axes of the node's output: those of its computed operands where they
        say, else the full space's."""
        computed = [(x.sizes, x.axes) for x in (env.get(v) for v in node.inputs) if isinstance(x, Val)]
        try:
            csizes, caxes = broadcast_axes(computed) if computed else ((), ())
        except NotLowerable:
            raise
        lead = len(sizes) - len(csizes)
        try:
            full = e.space.full_axes(sizes)
        except NotLowerable:
            full = None
        axes = []
        for k, n in enumerate(sizes):
            c = k - lead
            if c >= 0 and csizes[c] != 1:
                axes.append(caxes[c])
            elif n == 1:
                axes.append(None)
            elif full is not None:
                axes.append(full[k])
            else:
                return None  # only a reduction's rule can place this node's output
        placed = [a for a in axes if a is not None]
        if len(set(placed)) != len(placed):  # a computed value moved to other dims by a view
            raise NotLowerable(f"{node.kind}: two dims of its output along one kernel axis")
        return tuple(axes)

    def lower_node(self, e: ExprEmitter, node: Node, env: dict) -> None:
        if node.kind == "prim::Constant":
            env[node.output] = rule_constant(node)
            return
        if facts.has_tag(node.kind, "identity"):
            env[node.output] = env[node.inputs[0]]
            return
        if len(node.outputs) == 1 and is_tensor_list(node.outputs[0]):
            env[node.output] = [env[v] for v in node.inputs]
            return
        entry = entry_of(node)
        if entry is None or entry.lowering is None:
            raise NotLowerable(f"{node.kind} has no lowering")
        # the first typed output (outputs nothing reads, such as gradients an output mask
        # leaves out, may have no type)
        dtype, sizes, _ = next(layout for layout in map(tensor_layout, (o.type for o in node.outputs))
                               if layout is not None)
        e.node_sizes, e.node_dtype = sizes, dtype
        e.node_axes = self.node_axes(e, node, env, sizes)
        inputs = [env[v] for v in node.inputs]
        result = entry.lowering(e, *with_defaults(entry, inputs))
        results = result if len(node.outputs) > 1 else (result,)  # a tuple for (values, indices)
        if len(results) != len(node.outputs):
            raise NotLowerable(f"{node.kind}: {len(results)} results for {len(node.outputs)} outputs")
        for out, r in zip(node.outputs, results):
            if r is None:  # an output the rule does not compute (not asked for)
                if out.uses:
                    raise NotLowerable(f"{node.kind}: no result for a used output")
                continue
            if isinstance(r, Val) and any(r is x for x in inputs) and \
                    (r.dtype, r.sizes) == tensor_layout(out.type)[:2]:
                env[out] = r  # the op returns its input: one tensor, stored once
            else:
                env[out] = self.bound(e, node, out, r)

    def bound(self, e: ExprEmitter, node: Node, out: Value, result) -> Any:
        """A rule's result as the value of `out`: a view as it is, else cast to its dtype and
        expanded to its sizes."""
        dtype, sizes, _ = tensor_layout(out.type)
        if isinstance(result, View):
            if result.dtype != dtype or result.sizes != sizes:
                raise NotLowerable(f"{node.kind}: view of unexpected type")
            return result
        result = e.cast(result, dtype)
        if result.sizes != sizes:
            if len(result.sizes) > len(sizes) or any(
                    n != 1 for n in result.sizes[:len(result.sizes) - len(sizes)]):
                raise NotLowerable(f"{node.kind}: result sizes {result.sizes}, expected {sizes}")
            result = e.expand(result, sizes) if result.sizes else Val(  # a number fills the output
                result.expr, dtype, result.priority, sizes,
                e.node_axes if e.node_axes is not None else (None,) * len(sizes))
            if result.sizes != sizes:
                raise NotLowerable(f"{node.kind}: result sizes {result.sizes}, expected {sizes}")
        return Val(result.expr, dtype, DIMENSIONED if sizes else ZERO_DIM, sizes, result.axes)


@dataclass
class LoweredGroup:
    """A group as kernels over its buffers (inputs, outputs, then scratch): the products,
    then the loop nest (None when the products compute every output), per graph output the
    buffer that holds it, and the outputs that are views (by output index: the window of an
    input or scratch buffer they are; their result is None, their output buffer 0-dim)."""

    buffers: list[Buffer]
    products: list[Product]
    kernel: Optional[Kernel]
    results: list[Optional[int]]
    views: dict[int, View] = field(default_factory=dict)

    @property
    def is_metadata_only(self) -> bool:
        """Every output is a view of an input: nothing to compile, nothing to compute."""
        n_in = sum(not b.is_output for b in self.buffers)
        return self.kernel is None and not self.products and len(self.views) == len(self.results) \
            and all(v.buffer < n_in for v in self.views.values())


def lower_group(graph: Graph, name: str, allow_pending_lists: bool = False) -> LoweredGroup:
    return GroupLowering(graph, name, allow_pending_lists).run()


def is_candidate(node: Node) -> bool:
    """Whether `node` may join a native group: typed outputs (one, or several of one shape that
    its rule returns as a tuple), typed or constant arguments, no blocks, an op with a lowering
    rule (or a pass-through prim)."""
    if node.blocks or not node.outputs:
        return False
    if len(node.outputs) == 1 and is_tensor_list(node.outputs[0]):
        return True
    if facts.has_tag(node.kind, "identity"):
        return len(node.inputs) == 1 and len(node.outputs) == 1 and lowerable_args(node)
    entry = entry_of(node)
    return entry is not None and entry.lowering is not None and lowerable_args(node, entry)
