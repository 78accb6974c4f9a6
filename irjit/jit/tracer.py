"""The tracer: while `irjit.jit.trace` runs a function eagerly, every op that
`runtime.autograd.call_op` executes is recorded as a node of a Graph, typed with the complete
tensor types PyTorch's tracer gives; module calls push `__module.<path>` scopes and module
attributes become `prim::GetAttr` chains from `%self`, prepended to the calling module's body
as PyTorch's tracer does (so they read in reverse order of first use)."""

from __future__ import annotations

import warnings
from typing import Any, Optional

from irjit.compiler.ir import Graph
from irjit.compiler.ir.constants import tensor_type_of
from irjit.ops.registry import OpEntry, with_defaults
from irjit.ops.tensor import Tensor
from irjit.ops.types import ClassType, ListType, INT, FLOAT, BOOL, TENSOR, TupleType
from irjit.runtime import autograd
from irjit.runtime.module import Module


class TracerWarning(UserWarning):
    """A Python value computed from a traced tensor: the graph keeps only the path taken."""


class TracingError(RuntimeError):
    """A value the tracer cannot record (e.g. an output that is not a tensor or tuple of them)."""


class _Frame:
    """One module call being traced: its `%self` value and where its body starts."""

    def __init__(self, module: Optional[Module], self_value, anchor):
        self.module, self.self_value, self.anchor = module, self_value, anchor
        self.attr_values: dict[int, Any] = {}


def _type_of(t: Tensor):
    return tensor_type_of(t.data, bool(t.requires_grad))


class Tracer:
    """Records ops into `graph`; install with `autograd.TRACER[0] = tracer` (see `tracing`)."""

    def __init__(self, root: Optional[Module]):
        self.graph = Graph()
        self.values: dict[int, Any] = {}
        self._keep: list = []  # the traced objects, so their ids stay unique while tracing
        self._owner: dict[int, tuple[Module, str]] = {}
        self.frames: list[_Frame] = []
        # each module call's scope as the 2017 tracer named it: `Sequential[layer1]`
        self.module_scope_names: dict[Any, str] = {}
        if root is not None:
            self._index(root)

    def _index(self, module: Module) -> None:
        for name, value in module.attributes.items():
            if isinstance(value, (Module, Tensor)):
                self._owner[id(value)] = (module, str(name))
                if isinstance(value, Module):
                    self._index(value)

    # ---- inputs, outputs, values

    def add_input(self, value: Any, name: str):
        if isinstance(value, Module):
            v = self.graph.add_input(name, ClassType(value.qualified_name))
            self.frames.append(_Frame(value, v, None))
            return v
        if not isinstance(value, Tensor):
            raise TracingError(f"trace inputs must be tensors (argument {name!r} is "
                               f"{type(value).__name__})")
        v = self.graph.add_input(name, _type_of(value))
        self._bind(value, v)
        return v

    def _bind(self, obj: Any, v) -> None:
        self.values[id(obj)] = v
        self._keep.append(obj)

    def set_output(self, out: Any) -> None:
        if isinstance(out, (tuple, list)):
            items = [self._tensor_value(o) for o in out]
            n = self.graph.insert("prim::TupleConstruct", items,
                                  output_types=[TupleType(tuple(i.type for i in items))])
            self.graph.register_output(n.output)
        else:
            self.graph.register_output(self._tensor_value(out))

    def _tensor_value(self, t: Any):
        if not isinstance(t, Tensor) or id(t) not in self.values and id(t) not in self._owner:
            raise TracingError(f"a traced function must return tensors computed from its inputs "
                               f"or tuples of them (got {type(t).__name__})")
        return self._value(t, "Tensor")

    def _attr(self, owner: Module, name: str, obj: Any):
        """`prim::GetAttr[name=..]` of `obj` in the current module call, created once per call."""
        frame = self.frames[-1]
        hit = frame.attr_values.get(id(obj))
        if hit is not None:
            return hit
        base = frame.self_value if owner is frame.module else self._attr(*self._owner[id(owner)], owner)
        kind = ClassType(obj.qualified_name) if isinstance(obj, Module) else TENSOR
        n = self.graph.create("prim::GetAttr", [base], output_types=[kind])
        n.set_attr("name", "s", name)
        n.scope = self.graph.scope_root
        if frame.anchor is None or frame.anchor.next is None:  # the body starts the graph
            n.insert_before(next(iter(self.graph.nodes()), self.graph.return_node))
        else:
            n.insert_after(frame.anchor)
        n.output.set_debug_name(name if not name.isdigit() else f"_{name}")
        frame.attr_values[id(obj)] = n.output
        return n.output

    def _value(self, v: Any, type_: str):
        if isinstance(v, Tensor):
            hit = self.values.get(id(v))
            if hit is not None:
                return hit
            owner = self._owner.get(id(v))
            if owner is not None and self.frames:
                return self._attr(owner[0], owner[1], v)
            return self.graph.insert_constant(v.data)
        if isinstance(v, (list, tuple)):
            items = [self._value(x, type_.rstrip("?").removesuffix("[]")) for x in v]
            elem = items[0].type if items else INT
            return self.graph.insert("prim::ListConstruct", items,
                                     output_types=[ListType(elem)]).output
        return self.graph.insert_constant(v)

    # ---- hooks called by runtime.autograd.call_op and irjit.nn.Module.__call__

    def record_op(self, entry: OpEntry, args: list, label: str) -> Any:
        autograd.TRACER[0] = None
        try:
            result = autograd.call_op(entry, args, label)
        finally:
            autograd.TRACER[0] = self
        schema = entry.schema
        if schema.variadic:
            return result
        args = with_defaults(entry, args)
        inputs = [self._value(a, p.type) for a, p in zip(args, schema.arguments)]
        outs = list(result) if len(schema.returns) > 1 else [result]
        types = [_type_of(o) if isinstance(o, Tensor) else _scalar_type(o) for o in outs]
        n = self.graph.insert(schema.name, inputs, num_outputs=len(outs), output_types=types)
        for o, v in zip(outs, n.outputs):
            if isinstance(o, Tensor):
                self._bind(o, v)
        return result

    def call_module(self, module: Module, args: tuple, kwargs: dict) -> Any:
        if not self.frames:
            return module.forward(*args, **kwargs)
        owner = self._owner.get(id(module))
        if owner is None:
            raise TracingError(f"{type(module).__name__} is called while tracing but is not a "
                               "submodule of the traced module")
        self_value = self._attr(owner[0], owner[1], module)
        path = _module_path(self, module)
        prev = self.graph.insert_point.prev
        self.frames.append(_Frame(module, self_value, prev if prev is not self.graph.param_node else None))
        scope = self.graph.push_scope("__module." + path)
        self.module_scope_names[scope] = f"{type(module).__name__}[{owner[1]}]"
        try:
            return module.forward(*args, **kwargs)
        finally:
            self.graph.pop_scope()
            self.frames.pop()

    def data_dependent(self, what: str) -> None:
        warnings.warn(f"Converting a tensor to a Python {what} might cause the trace to be "
                      "incorrect. We can't record the data flow of Python values, so this value "
                      "will be treated as a constant in the future. This means that the trace "
                      "might not generalize to other inputs!", TracerWarning, stacklevel=3)


def _scalar_type(v: Any):
    if isinstance(v, bool):
        return BOOL
    if isinstance(v, int):
        return INT
    if isinstance(v, float):
        return FLOAT
    raise TracingError(f"the tracer cannot record an op returning {type(v).__name__}")


def _module_path(tracer: Tracer, module: Module) -> str:
    """`layer1.0`: the attribute path from the traced root to `module`."""
    names = []
    while id(module) in tracer._owner:
        module, name = tracer._owner[id(module)]
        names.append(name)
    return ".".join(reversed(names))
