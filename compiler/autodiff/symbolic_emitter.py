"""The emitter that turns registry derivative formulas into IR nodes (the symbolic twin of
`ops.eager_emitter.EagerEmitter`)."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Optional

import numpy as np

from irjit.compiler.ir.constants import plain_constant_value
from irjit.compiler.ir.node import Node, Value
from irjit.ops.types import (BOOL, FLOAT, INT, NONE, TENSOR, ListType, NamedType, OptionalType,
                               TensorType, TupleType, Type)
from irjit.ops import facts
from irjit.ops.registry import NO_DEFAULT, OpEntry, find_op


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
    if isinstance(a, str):
        return str(a)
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


def _bind_generics(entry: OpEntry, ins: list[Value]) -> dict:
    """Schema type variables bound by the arguments (`t[] l` with an `int[]` binds `t` to
    `int`): return type text -> IR type, for generic list ops."""
    bound: dict = {}
    for a, v in zip(entry.schema.arguments, ins):
        text = a.type.split("(")[0]
        if text == "t[]" and isinstance(v.type, ListType):
            bound["t"], bound["t[]"] = v.type.elem, v.type
        elif text == "t" and "t" not in bound:
            bound["t"], bound["t[]"] = v.type, ListType(v.type)
    return {f"{k}(*)" if k == "t" else k: t for k, t in bound.items()} | bound


def return_type(type_text: str) -> Type:
    if type_text in _RETURN_TYPES:
        return _RETURN_TYPES[type_text]
    from irjit.ops.type_parser import parse_type_text
    try:
        return parse_type_text(type_text)
    except Exception:  # noqa: BLE001 - schema-only types (`t`, `Any`) have no IR spelling
        return NamedType("Any")


class StrArg(str):
    """A string argument of the node being differentiated (gelu's `approximate`): equal to
    the string, and the emitter passes the node's own constant on (a capture, as PyTorch's
    formulas use the argument) rather than a new one."""

    def __new__(cls, text: str, value: Value):
        s = super().__new__(cls, text)
        s.value = value
        return s


def python_value(v: Value) -> Any:
    """The Python value of a constant input (what formulas compare and negate), else `v`."""
    if v.node.kind == "prim::Constant" and not isinstance(v.type, TensorType):
        value = plain_constant_value(v.node)
        return StrArg(value, v) if isinstance(value, str) else value
    return v


class ListArg(list):
    """A list argument of the node being differentiated, built in the graph (layer_norm's
    `[x.size(-1)]`): formulas read its elements, and the emitter passes the list value itself
    on (a capture, as PyTorch's formulas use the argument)."""

    def __init__(self, items, value: Value):
        super().__init__(items)
        self.value = value


class SymbolicEmitter:
    """Emits a formula's ops at `graph`'s insertion point (a GradOf block of the reverse
    program); `sum_to` adds PyTorch's `_size_if_not_equal` sizes to the forward graph right
    after `node`, so that the backward captures sizes rather than whole tensors.

    Constants land where symbolic_script's land in PyTorch: a number a formula passes (a
    literal of its source, or an argument of the node) is a constant of the forward graph
    (TorchScript materializes number literals at the top of the function, so the backward
    closure captures them), which differentiate lifts into the backward graph, one copy per
    use; a default argument, None, a bool, a string or a `Function` stays in the backward
    block, pooled at its top as ConstantPooling leaves the compiled backward graph."""

    symbolic = True

    def __init__(self, graph, node: Optional[Node] = None, forward_block=None, shape_oracle=None):
        self.graph = graph
        self.node = node
        self.forward_block = forward_block
        self._fwd_after = node
        self._sums: dict[Value, Value] = {}
        # Value -> static shape (or None) for values whose IR type has no complete sizes
        self._shape_oracle = shape_oracle
        # the backward block the formula writes (its insertion point's block) and its pool
        self._block = graph.insert_point.owning_block if node is not None else None
        self._anchor = node.prev if node is not None else None  # the node being replaced
        self._pool: dict = {}
        self._literals: dict = {}
        self._forward_literals: list = []  # literals made while writing the forward graph
        self._forward_mode = 0
        self._blocks: list = []  # blocks the formula opened (loop and if bodies)

    # ---- the emitter interface used by registry formulas
    def op(self, kind: str, *args: Any, unpack: bool = True, returns: Optional[Type] = None) -> Any:
        """`kind(*args)` in the backward block, every argument the formula leaves out given as
        its schema default (TorchScript materializes them all); a `Tensor[]` result comes back
        as a list of values when its length is static, unless `unpack` is false. `returns`
        types the result as symbolic_script's signature does where the values are more
        precise (`-lambd` of a `number` argument is a `Scalar`)."""
        entry = resolve(kind, list(args))
        out = self._emit(kind, entry, self._arguments(entry, args), unpack=unpack)
        if returns is not None:
            out.type = returns
        return out

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

    @staticmethod
    def is_tensor_list(x: Any) -> bool:
        """Whether `x` is one `Tensor[]` value of the graph (not a Python list of tensors)."""
        return isinstance(x, Value) and is_tensor_list_type(x.type)

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
        key = ("Function", name)
        if self._block is not None and key in self._pool:
            return self._pool[key]
        fn = self.graph.create("prim::Constant", output_types=[NamedType("Function")])
        fn.set_attr("name", "s", name)
        if self._block is None:
            return self.graph.insert_node(fn).output
        self._block.prepend_node(fn)
        self._pool[key] = fn.output
        return fn.output

    def call(self, fn: Any, *args: Any, returns: Type = TENSOR) -> Value:
        """`prim::CallFunction` of a helper (its name, or a `Function` from `function`)
        returning a value of type `returns`; a named helper's `Function` constant is made
        after the arguments, as TorchScript emits a call."""
        ins = [self._value(a) for a in args]
        if isinstance(fn, str):
            fn = self.function(fn)
        return self._insert_node(self.graph.create("prim::CallFunction", [fn, *ins],
                                                   output_types=[returns])).output

    def dtype_code(self, x: Any) -> Any:
        """The ScalarType code of `x`, read at run time (`prim::dtype`, as PyTorch's
        `result.dtype` in symbolic_script): IR types may be stale."""
        return self._insert_node(self.graph.create("prim::dtype", [self._value(x)],
                                                   output_types=[INT])).output

    def size(self, x: Any) -> list:
        return list(self.shape(x))

    def zeros_like(self, x: Any) -> Value:
        return self.op("aten::zeros_like", x)

    def ones_like(self, x: Any) -> Value:
        return self.op("aten::ones_like", x)

    def const(self, v: Any) -> Any:
        """`v` as a constant now (formulas that must create a literal before others do, as
        TorchScript emits them in source order)."""
        return self._value(v)

    def replace_forward(self, kind: str, *args: Any) -> tuple:
        """symbolic_script forwards that compute the result with another op (layer_norm's
        `native_layer_norm`): `kind(*args)` replaces the node in the forward graph (its first
        output takes the node's type and uses), and all its outputs are returned for the
        backward to capture."""
        old = self.node
        self._forward_mode += 1
        try:
            ins = [self._value(a) for a in args]
        finally:
            self._forward_mode -= 1
        entry = resolve(kind, list(ins))
        types = [return_type(r.type) for r in entry.schema.returns]
        new = self.graph.create(kind, ins, output_types=types)
        new.insert_after(old)
        new.outputs[0].type = old.outputs[0].type
        old.outputs[0].replace_all_uses_with(new.outputs[0])
        if self._fwd_after is old:
            self._fwd_after = new
        self.node = new
        old.destroy()
        return tuple(new.outputs)

    def cast_like(self, x: Any, like: Any) -> Any:
        return self.op("aten::type_as", x, like)

    # ---- helpers
    def _scalar_overload(self, like: Any) -> bool:
        n = self.node
        if n is None or not (facts.has_tag(n.kind, "arithmetic") or n.kind == "aten::rsub"):
            return False
        tensors = [v for v in n.inputs if isinstance(v.type, TensorType)]
        return tensors == [like]

    def _arguments(self, entry: OpEntry, args) -> list[Value]:
        ins = [self._value(a) for a in args]
        params = entry.schema.arguments
        if not entry.schema.variadic:
            for a in params[len(ins):]:
                if a.default is NO_DEFAULT:
                    break
                ins.append(self._default(a.default))
        return ins

    def _value(self, a: Any) -> Value:
        if isinstance(a, Value):
            return a
        if isinstance(a, (ListArg, StrArg)):
            return a.value
        if isinstance(a, (list, tuple)) and any(isinstance(x, Value) for x in a):
            return self._list(a)
        if isinstance(a, np.ndarray):
            raise NotSymbolic("a formula built a numpy array; it needs run-time values")
        if a is not None and not isinstance(a, (bool, int, float, list, tuple, str, np.generic)):
            raise NotSymbolic(f"cannot make a constant of {type(a).__name__}")
        if isinstance(a, np.generic):
            a = a.item()
        if isinstance(a, tuple):
            a = list(a)
        if a is None or isinstance(a, (bool, str)):
            return self._default(a)
        return self._literal(a)

    @staticmethod
    def _key(a: Any):
        return (type(a).__name__, repr(a))

    def _literal(self, a: Any, first: bool = False) -> Value:
        """A number (or a list of them) the formula passes: a constant of the forward graph,
        right before the op that computes the result (in the forward part of a formula, every
        constant)."""
        if self.node is None or self.forward_block is None:
            return self.graph.insert_constant(a)
        key = self._key(a)
        v = self._literals.get(key)
        if v is None or not v.node.is_inserted():
            from irjit.compiler.ir.constants import make_constant
            c = make_constant(self.graph, a)
            # before the result's op (so it dominates every forward use), the latest first, as
            # ConstantPooling leaves the constants of a symbolic_script forward graph; those the
            # forward statements use (dropout's `1. - p`), in the order the formula makes them
            # and before those statements, as torch 2.13 leaves dropout's forward graph
            if self._anchor is not None and self._anchor.owning_block is self.node.owning_block:
                if self._forward_mode and first:
                    c.insert_after(self._anchor)
                    if self._fwd_after is self._anchor:
                        self._fwd_after = c
                    self._forward_literals.insert(0, c)
                elif self._forward_mode:
                    tail = self._forward_literals[-1] if self._forward_literals else self._anchor
                    c.insert_after(tail)
                    if self._fwd_after is tail:
                        self._fwd_after = c
                    self._forward_literals.append(c)
                else:
                    c.insert_after(self._anchor)
            else:
                c.insert_before(self.node)
            v = self._literals[key] = c.output
        return v

    def _default(self, a: Any) -> Value:
        """A constant of the backward graph itself (a default argument, None, a bool, a
        string): pooled at the top of the backward block."""
        if self._forward_mode or self._block is None:
            return self._literal(a) if self._forward_mode else self.graph.insert_constant(a)
        key = self._key(a)
        v = self._pool.get(key)
        if v is None:
            from irjit.compiler.ir.constants import make_constant
            c = make_constant(self.graph, a)
            self._block.prepend_node(c)
            v = self._pool[key] = c.output
        return v

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
        return self._insert_node(self.graph.create("prim::ListConstruct", elems,
                                                   output_types=[ListType(elem)])).output

    def _insert_node(self, n: Node) -> Node:
        """Insert a node where the formula is writing: the end of the innermost block it
        opened (`loop`, `if_`), else the forward graph (inside `forward()`), else the backward
        block."""
        if self._blocks:
            return n.insert_before(self._blocks[-1].return_node)
        if self._forward_mode:
            n.insert_after(self._fwd_after)
            self._fwd_after = n
            return n
        return self.graph.insert_node(n)

    def _emit(self, kind: str, entry: OpEntry, ins: list[Value], unpack: bool = True) -> Any:
        rets = entry.schema.returns
        bound = _bind_generics(entry, ins)
        types = [bound.get(r.type) or return_type(r.type) for r in rets]
        n = self._insert_node(self.graph.create(kind, ins, output_types=types))
        if unpack and len(n.outputs) == 1 and is_tensor_list_type(n.output.type):
            return self._unpack(n, ins, entry, self.graph)
        return n.outputs[0] if len(n.outputs) == 1 else tuple(n.outputs)

    def pack_context(self, backward_block) -> None:
        """What PyTorch's symbolic_script forward returns besides the result: the values its
        backward closure captured, packed in a context tuple, which stays in the forward graph,
        dead, until after CSE. Alias analysis sees them put into a container, so they may alias
        anything (wildcards), and writes to any of them hold CSE back, as in PyTorch (checked
        against torch 2.13: captured values block CSE of views that graph outputs may alias,
        results that are not captured do not); dead code elimination removes the tuple."""
        if self.node is None or self.forward_block is None:
            return
        captured, seen = [], set()
        for n in backward_block.walk():
            for v in n.inputs:
                if v not in seen and v.node.owning_block is self.forward_block:
                    seen.add(v)
                    captured.append(v)
        for v in backward_block.outputs:
            if v not in seen and v.node.owning_block is self.forward_block:
                seen.add(v)
                captured.append(v)
        self._forward_node("prim::TupleConstruct", captured, [TupleType(tuple(v.type for v in captured))])

    # ---- control flow and literals, for formulas spelled as symbolic_script's
    @contextmanager
    def forward(self, before_result: bool = False):
        """Emit into the forward graph (the part of a symbolic_script function before its
        `def backward`): after the node and what the formula put there, or with
        `before_result` right before the op that computes the result (statements the function
        runs before it, such as `self_size = self.size()` in view's)."""
        self._forward_mode += 1
        saved = self._fwd_after
        if before_result:
            self._fwd_after = self.node.prev
        try:
            yield
        finally:
            self._forward_mode -= 1
            if before_result:
                self._fwd_after = saved

    def result_after_forward(self) -> None:
        """For symbolic_script functions that compute their result after their other forward
        statements (meshgrid's `return torch.meshgrid(tensors), backward`): the op being
        differentiated moves after them (its copy, which CSE merges into it, is there)."""
        original = self._anchor
        if original is not None and original.kind == self.node.kind and \
                original.owning_block is self.node.owning_block:
            original.move_before(self.node)

    def context_literals(self, *values: Any) -> tuple:
        """Literals that are all a symbolic_script backward captures (`memory_format=1` in
        floor's `zeros_like`): TorchScript folds the closure's context tuple of constants into
        a tuple constant of the forward graph (lifted into the backward), which the backward
        unpacks where it starts. Returns the unpacked values."""
        c = self.graph.create("prim::Constant", num_outputs=1)
        c.set_attr("value", "ival", tuple(values))
        from irjit.compiler.ir.constants import make_constant
        c.output.type = TupleType(tuple(make_constant(self.graph, v).output.type for v in values))
        if self._anchor is not None and self._anchor.owning_block is self.node.owning_block:
            c.insert_after(self._anchor)
        else:
            c.insert_before(self.node)
        return self.unpack_tuple(c.output)

    def list(self, *items: Any) -> Value:
        """A list literal (`[0]`): a `prim::ListConstruct`, as TorchScript compiles one."""
        return self._list([self._value(x) for x in items])

    def empty_list(self, elem: Type) -> Value:
        """`[]` of a declared element type (`grads_tensors: List[Tensor] = []`)."""
        return self._insert_node(self.graph.create("prim::ListConstruct", [],
                                                   output_types=[ListType(elem)])).output

    def loop(self, trip_count: Any, body) -> None:
        """`for i in range(trip_count): body(i)`, without carried values. In a forward, the
        loop's condition constant comes before the other literals, as torch 2.13 leaves the
        forward graphs of cat and meshgrid."""
        true = self._literal(True, first=True) if self._forward_mode and self.forward_block is not None \
            else self._value(True)
        n = self._insert_node(self.graph.create("prim::Loop", [self._value(trip_count), true], num_outputs=0))
        block = n.add_block()
        i = block.add_input(INT)
        self._blocks.append(block)
        try:
            body(i)
        finally:
            self._blocks.pop()
        block.register_output(true)

    def if_(self, cond: Any, then, otherwise=None, types: Optional[list] = None) -> Any:
        """`then() if cond else otherwise()`, as TorchScript compiles an `if` that assigns:
        each branch returns None (nothing to yield), a value (or a Python constant) or a tuple
        of them, yielded by its block; the If's outputs are typed by `types`, else by the
        first branch's values. Returns None, the output, or a tuple of the outputs."""
        n = self._insert_node(self.graph.create("prim::If", [self._value(cond)], num_outputs=0))
        results = []
        for branch in (then, otherwise):
            block = n.add_block()
            self._blocks.append(block)
            try:
                r = branch() if branch is not None else None
                values = None if r is None else [self._value(x) for x in (r if isinstance(r, tuple) else (r,))]
            finally:
                self._blocks.pop()
            results.append((block, values, isinstance(r, tuple)))
        if all(values is None for _, values, _ in results):
            return None
        first = next(values for _, values, _ in results if values is not None)
        for block, values, _ in results:
            for v in values:
                block.register_output(v)
        outs = tuple(n.add_output(t) for t in (types or [v.type for v in first]))
        return outs if results[0][2] or len(outs) > 1 else outs[0]

    def unchecked_cast(self, x: Value, to: Type) -> Value:
        """`prim::unchecked_cast` (TorchScript's refinement of an Optional after `is not None`)."""
        return self._insert_node(self.graph.create("prim::unchecked_cast", [x], output_types=[to])).output

    def unwrap_optional(self, x: Value) -> Value:
        """`prim::unchecked_unwrap_optional` (symbolic_script's `.unchecked_unwrap_optional`)."""
        t = x.type.elem if isinstance(x.type, OptionalType) else x.type
        return self._insert_node(self.graph.create("prim::unchecked_unwrap_optional", [x],
                                                   output_types=[t])).output

    def make_tuple(self, *items: Any) -> Value:
        """A tuple literal (`prim::TupleConstruct`), as a `return a, None` TorchScript keeps
        while branches still return; typed as TorchScript typed it when compiling (`Tensor`
        elements, whatever the shapes)."""
        values = [self._value(x) for x in items]
        types = tuple(TENSOR if isinstance(v.type, TensorType) else v.type for v in values)
        return self._insert_node(self.graph.create("prim::TupleConstruct", values,
                                                   output_types=[TupleType(types)])).output

    def unpack_tuple(self, t: Value) -> tuple:
        """`prim::TupleUnpack` of a tuple value."""
        return tuple(self._insert_node(self.graph.create("prim::TupleUnpack", [t], output_types=list(
            t.type.contained()))).outputs)

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

    def forward_sizes(self, *likes: Any) -> None:
        """Take the `_size_if_not_equal` sizes `sum_to` will need for `likes` now, in this
        order (symbolic_script functions that compute `self_size`, `tensor1_size`, ... before
        their backward)."""
        for v in likes:
            if isinstance(v, Value) and isinstance(v.type, TensorType):
                self._size_if_not_equal(v)

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
        """`v.size()` computed in the forward graph (every formula computes its own, as
        symbolic_script's do; CSE merges them)."""
        return self._forward("aten::size", v)

    def size_if_not_equal(self, like: Value) -> Optional[Value]:
        """`_size_if_not_equal(like.size(), result.size())` taken in the forward graph (None
        outside a differentiated graph's forward)."""
        return self._size_if_not_equal(like)

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
