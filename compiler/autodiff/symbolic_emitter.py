"""The emitter that turns registry derivative formulas into IR nodes (the symbolic twin of
`ops.eager_emitter.EagerEmitter`)."""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from irjit.compiler.ir.constants import plain_constant_value
from irjit.compiler.ir.node import Node, Value
from irjit.ops.types import (BOOL, FLOAT, INT, NONE, TENSOR, ListType, NamedType, OptionalType,
                               TensorType, TupleType, Type)
from irjit.ops import facts
from irjit.ops.registry import OpEntry, find_op


class NotSymbolic(Exception):
    """A formula needs something the IR cannot give it (shapes, a non-constant scalar, ...)."""


class NeedsShapes(NotSymbolic):
    pass


def _representative(t: Type) -> Any:
    """A run-time value of IR type `t`, for overload resolution by the registry."""
    if isinstance(t, OptionalType):
        return _representative(t.elem)
    if isinstance(t, TensorType):
        return np.zeros((), dtype=np.float32)
    if isinstance(t, ListType):
        return [_representative(t.elem)]
    if isinstance(t, TupleType):
        return tuple(_representative(e) for e in t.contained())
    if isinstance(t, NamedType):
        return {"int": 0, "float": 0.0, "bool": False, "NoneType": None, "str": "",
                "number": 0.0, "Scalar": 0.0}.get(t.name, 0)
    return None


def _representative_arg(a: Any) -> Any:
    if isinstance(a, Value):
        return _representative(a.type)
    if isinstance(a, (list, tuple)) and any(isinstance(x, Value) for x in a):
        return [_representative_arg(x) for x in a]  # a list the emitter will construct
    return a


def resolve(kind: str, args: list) -> OpEntry:
    """The registry overload for IR values (by type) and Python constants (by value); a Python
    list holding IR values (`[%a, %b]`, which the emitter builds with `prim::ListConstruct`)
    resolves as a list of its elements' types."""
    return find_op(kind, [_representative_arg(a) for a in args])


def is_tensor_list_type(t: Type) -> bool:
    return isinstance(t, ListType) and isinstance(t.elem, TensorType)


def _dummy(v: Any, shape_of) -> Any:
    """A run-time stand-in for `v` (zeros of its static shape for a tensor, a list of them for
    a ListConstruct'ed `Tensor[]`), or raise NotSymbolic when its value or shape is not known
    statically."""
    if isinstance(v, Value):
        if isinstance(v.type, TensorType):
            shape = shape_of(v)
            if shape is None:
                raise NeedsShapes(f"the static shape of %{v.name} is not known")
            from irjit.ops.types import SCALAR_TYPES
            dt = SCALAR_TYPES.get(v.type.scalar_type or "Float") or "float32"
            return np.zeros(shape, dtype=dt)
        if v.node.kind == "prim::Constant":
            return plain_constant_value(v.node)
        if is_tensor_list_type(v.type) and v.node.kind == "prim::ListConstruct":
            return [_dummy(x, shape_of) for x in v.node.inputs]
        raise NotSymbolic(f"%{v.name} is not a constant")
    if isinstance(v, (list, tuple)):
        return type(v)(_dummy(x, shape_of) for x in v)
    return v


def static_eval(entry: OpEntry, args: list, shape_of) -> Any:
    """Run `entry` on zeros of its tensor arguments' static shapes (for output shapes only:
    never for ops whose result shape depends on the data). Raises NotSymbolic when an input's
    shape or a non-tensor argument is not known statically."""
    from irjit.ops.registry import with_defaults
    return entry.impl(*with_defaults(entry, [_dummy(a, shape_of) for a in args]))


def static_list_shapes(entry: OpEntry, args: list, shape_of) -> list[tuple]:
    """The shapes of the tensors of a `Tensor[]`-returning op (chunk, split, unbind, ...)."""
    return [tuple(np.shape(t)) for t in static_eval(entry, args, shape_of)]


_RETURN_TYPES = {"Tensor": TENSOR, "int": INT, "float": FLOAT, "bool": BOOL, "int[]": ListType(INT),
                 "int[]?": OptionalType(ListType(INT)), "Tensor[]": ListType(TENSOR),
                 "Tensor?": OptionalType(TENSOR), "Scalar": NamedType("Scalar")}


def return_type(type_text: str) -> Type:
    if type_text in _RETURN_TYPES:
        return _RETURN_TYPES[type_text]
    from irjit.ops.type_parser import parse_type_text
    try:
        return parse_type_text(type_text)
    except Exception:  # noqa: BLE001 - schema-only types (`t`, `Any`) have no IR spelling
        return NamedType("Any")


def python_value(v: Value) -> Any:
    """The Python value of a constant input (what formulas compare and negate), else `v`."""
    if v.node.kind == "prim::Constant" and not isinstance(v.type, TensorType):
        return plain_constant_value(v.node)
    return v


class SymbolicEmitter:
    """Emits a formula's ops at `graph`'s insertion point (a GradOf block of the reverse
    program); `sum_to` adds PyTorch's `_size_if_not_equal` sizes to the forward graph right
    after `node`, so that the backward captures sizes rather than whole tensors."""

    symbolic = True

    def __init__(self, graph, node: Optional[Node] = None, forward_block=None,
                 size_cache: Optional[dict] = None, shape_oracle=None):
        self.graph = graph
        self.node = node
        self.forward_block = forward_block
        self._fwd_after = node
        self._sizes = size_cache if size_cache is not None else {}
        self._sums: dict[Value, Value] = {}
        # Value -> static shape (or None) for values whose IR type has no complete sizes
        self._shape_oracle = shape_oracle

    # ---- the emitter interface used by registry formulas
    def op(self, kind: str, *args: Any) -> Any:
        entry = resolve(kind, list(args))
        return self._emit(kind, entry, [self._value(a) for a in args])

    def sum_to(self, x: Any, like: Any) -> Any:
        if self._scalar_overload(like):
            return x  # PyTorch's `add_1`/`mul_1`/... formulas: no broadcasting, no sizes
        if isinstance(like, Value) and isinstance(like.type, TensorType):
            size = self._size_if_not_equal(like)
            if size is None:
                size = self.op("aten::size", like)
        elif isinstance(like, Value):
            size = like
        else:
            size = self._value([int(s) for s in like])
        return self.op("aten::_grad_sum_to_size", x, size)

    def is_tensor(self, x: Any) -> bool:
        return isinstance(x, Value) and isinstance(x.type, TensorType)

    def shape(self, x: Any) -> tuple:
        if isinstance(x, (list, tuple)):
            return tuple(x)
        sizes = self.static_shape(x) if isinstance(x, Value) else None
        if sizes is None:
            raise NeedsShapes(f"the formula needs the static shape of %{getattr(x, 'name', x)}")
        return tuple(sizes)

    def static_shape(self, x: Value) -> Optional[tuple]:
        """`x`'s sizes from its type, else from the shape oracle (None when unknown)."""
        t = x.type
        sizes = t.complete_sizes() if isinstance(t, TensorType) else None
        if sizes is None and self._shape_oracle is not None and isinstance(t, TensorType):
            sizes = self._shape_oracle(x)
        return tuple(sizes) if sizes is not None else None

    def function(self, name: str) -> Value:
        """A `Function` constant for the TorchScript helper `name` (symbolic_script's `AD_...`
        functions, which the runtime provides)."""
        fn = self.graph.create("prim::Constant", output_types=[NamedType("Function")])
        fn.set_attr("name", "s", name)
        return self.graph.insert_node(fn).output

    def call(self, fn: Value, *args: Any) -> Value:
        """`prim::CallFunction` of a helper from `function`, returning a Tensor."""
        return self.graph.insert("prim::CallFunction", [fn, *(self._value(a) for a in args)],
                                 output_types=[TENSOR]).output

    def dtype_code(self, x: Any) -> Any:
        """The ScalarType code of `x`, read at run time (`prim::dtype`, as PyTorch's
        `result.dtype` in symbolic_script): IR types may be stale."""
        return self.graph.insert("prim::dtype", [self._value(x)], output_types=[INT]).output

    def size(self, x: Any) -> list:
        return list(self.shape(x))

    def zeros_like(self, x: Any) -> Value:
        return self.op("aten::zeros_like", x)

    def ones_like(self, x: Any) -> Value:
        return self.op("aten::ones_like", x)

    def const(self, v: Any) -> Any:
        return v

    def cast_like(self, x: Any, like: Any) -> Any:
        return self.op("aten::type_as", x, like)

    # ---- helpers
    def _scalar_overload(self, like: Any) -> bool:
        n = self.node
        if n is None or not (facts.has_tag(n.kind, "arithmetic") or n.kind == "aten::rsub"):
            return False
        tensors = [v for v in n.inputs if isinstance(v.type, TensorType)]
        return tensors == [like]

    def _value(self, a: Any) -> Value:
        if isinstance(a, Value):
            return a
        if isinstance(a, (list, tuple)) and any(isinstance(x, Value) for x in a):
            return self._list(a)
        if isinstance(a, np.ndarray):
            raise NotSymbolic("a formula built a numpy array; it needs run-time values")
        if a is not None and not isinstance(a, (bool, int, float, list, tuple, str, np.generic)):
            raise NotSymbolic(f"cannot make a constant of {type(a).__name__}")
        if isinstance(a, np.generic):
            a = a.item()
        return self.graph.insert_constant(list(a) if isinstance(a, tuple) else a)

    def _list(self, items) -> Value:
        """`prim::ListConstruct` of IR values and Python constants (a `Tensor[]` when every
        element is a tensor, `Tensor?[]` when some are None)."""
        elems = [self._value(x) for x in items]
        types = [v.type for v in elems]
        if all(isinstance(t, TensorType) for t in types):
            elem = TENSOR
        elif any(isinstance(t, TensorType) for t in types):
            elem = OptionalType(TENSOR)
        elif any(t == FLOAT for t in types):
            elem = FLOAT
        elif types and all(t == BOOL for t in types):
            elem = BOOL
        else:
            elem = next((t for t in types if t != NONE), INT)
        return self.graph.insert("prim::ListConstruct", elems, output_types=[ListType(elem)]).output

    def _emit(self, kind: str, entry: OpEntry, ins: list[Value], graph=None) -> Any:
        rets = entry.schema.returns
        types = [return_type(r.type) for r in rets]
        g = graph or self.graph
        n = g.insert(kind, ins, output_types=types)
        if len(n.outputs) == 1 and is_tensor_list_type(n.output.type):
            return self._unpack(n, ins, entry, g)
        return n.outputs[0] if len(n.outputs) == 1 else tuple(n.outputs)

    def _unpack(self, n: Node, ins: list[Value], entry: OpEntry, g) -> Any:
        """A `Tensor[]` result as a Python list of values (`prim::ListUnpack`), as the eager
        emitter returns a list; the list value itself when its length is not static."""
        try:
            shapes = static_list_shapes(entry, ins, self.static_shape)
        except Exception:  # noqa: BLE001 - unknown length: formulas get the list value
            return n.output
        unpack = g.insert("prim::ListUnpack", [n.output], output_types=[TENSOR] * len(shapes))
        return list(unpack.outputs)

    def _forward(self, kind: str, *ins: Value) -> Value:
        """Emit `kind(ins)` into the forward graph, after the node being differentiated."""
        entry = resolve(kind, list(ins))
        return self._forward_node(kind, list(ins), [return_type(r.type) for r in entry.schema.returns]).outputs[0]

    def sizes_up_front(self, likes: list[Value]) -> None:
        """Compute the sizes `sum_to` will need for `likes` now, in this order, packed in a
        TupleConstruct and unpacked, as PyTorch's `AD_sizes_if_not_equal_multi` does, so
        that the forward graph reads as PyTorch's."""
        sizes = [self._size_if_not_equal(v) for v in likes]
        if any(s is None for s in sizes) or len(set(likes)) != len(likes):
            return
        types = [s.type for s in sizes]
        pack = self._forward_node("prim::TupleConstruct", sizes, [TupleType(tuple(types))])
        unpack = self._forward_node("prim::TupleUnpack", [pack.output], types)
        for v, s in zip(likes, unpack.outputs):
            self._sums[v] = s

    def _forward_node(self, kind: str, ins: list[Value], types: list) -> Node:
        n = self.graph.create(kind, ins, output_types=types)
        n.insert_after(self._fwd_after)
        self._fwd_after = n
        return n

    def _forward_size(self, v: Value) -> Value:
        s = self._sizes.get(v)
        if s is None or not s.node.is_inserted():
            s = self._sizes[v] = self._forward("aten::size", v)
        elif s.node.is_after(self._fwd_after):  # computed later in f: recompute here
            s = self._sizes[v] = self._forward("aten::size", v)
        return s

    def _size_if_not_equal(self, like: Value) -> Optional[Value]:
        """`aten::_size_if_not_equal(like.size(), result.size())` in the forward graph."""
        node = self.node
        if node is None or self.forward_block is None or not node.outputs:
            return None
        if like.node.owning_block is not self.forward_block:
            return None
        if like in self._sums:
            return self._sums[like]
        out = node.outputs[0]
        s = self._forward("aten::_size_if_not_equal", self._forward_size(like), self._forward_size(out))
        self._sums[like] = s
        return s
