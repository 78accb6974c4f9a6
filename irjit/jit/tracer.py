"""The tracer: while `irjit.jit.trace` runs a function eagerly, every op that
`runtime.autograd.call_op` executes is recorded as a node of a Graph, as PyTorch's tracer
records it: complete tensor types, every schema argument (defaults included) as a constant or
list, Python numbers given for add/sub/mul/div/floor_divide's `other` as wrapped-number tensor
constants, sizes read from traced tensors as `aten::size` + `prim::NumToTensor` (and
`aten::Int` where such a size flows back into an int argument), composite ops recorded as the
ops they decompose into (`trace_decompositions`), and a `# file:line:0` comment naming the
innermost user frame. Module attributes are `prim::TracedAttr` placeholders and each submodule
call is a `prim::TracedModuleForward` node whose block holds the call's ops (its scope:
`__module.seq.0`); `trace_fixup` turns those into PyTorch's traced methods and GetAttrs."""

from __future__ import annotations

import sys
import warnings
from typing import Any, Optional

import numpy as np

from irjit import eager, eager_binding, eager_indexing, functional
from irjit.eager_binding import TracedInt
from irjit.compiler.ir import Graph, SourceLocation, Value
from irjit.compiler.ir.constants import tensor_type_of
from irjit.nn import module as nn_module
from irjit.ops.registry import OpEntry, find_op, with_defaults
from irjit.ops.tensor import Tensor
from irjit.ops.types import (BOOL, FLOAT, INT, TENSOR, ClassType, ListType, OptionalType,
                             TensorType, TupleType, Type)
from irjit.runtime import autograd
from irjit.runtime.module import Module

from . import trace_decompositions
from .calls import attribute_type



class TracerWarning(UserWarning):
    """A Python value computed from a traced tensor: the graph keeps only the path taken."""


class TracingError(RuntimeError):
    """A value the tracer cannot record (e.g. an output that is not a tensor or tuple of them)."""


# ops whose Python number `other` torch's bindings pass as a wrapped-number tensor (the
# `.Scalar` overloads are not exposed to Python), so the trace holds a tensor constant
_WRAPPED_NUMBER_OPS = {"aten::add", "aten::add_", "aten::sub", "aten::sub_", "aten::mul",
                       "aten::mul_", "aten::div", "aten::div_", "aten::floor_divide",
                       "aten::floor_divide_"}
# the element type of the ListConstruct built for a list argument
_LIST_ELEMENT = {"Tensor[]": TENSOR, "Tensor?[]": OptionalType(TENSOR), "int[]": INT,
                 "SymInt[]": INT, "float[]": FLOAT, "bool[]": BOOL}
# PyTorch's NormalizeOps: aliases are recorded as the op they name
_ALIASES = {"aten::true_divide": "aten::div", "aten::true_divide_": "aten::div_",
            "aten::divide": "aten::div", "aten::multiply": "aten::mul", "aten::subtract": "aten::sub",
            "aten::absolute": "aten::abs", "aten::clip": "aten::clamp", "aten::clip_": "aten::clamp_",
            "aten::negative": "aten::neg", "aten::greater": "aten::gt", "aten::greater_equal": "aten::ge",
            "aten::less": "aten::lt", "aten::less_equal": "aten::le", "aten::not_equal": "aten::ne",
            "aten::arccos": "aten::acos", "aten::arcsin": "aten::asin", "aten::arctan": "aten::atan",
            "aten::arccosh": "aten::acosh", "aten::arcsinh": "aten::asinh",
            "aten::arctanh": "aten::atanh", "aten::arctan2": "aten::atan2", "aten::fix": "aten::trunc",
            "aten::ger": "aten::outer", "aten::concatenate": "aten::cat", "aten::concat": "aten::cat",
            "aten::swapdims": "aten::transpose", "aten::swapaxes": "aten::transpose",
            "aten::moveaxis": "aten::movedim", "aten::adjoint": "aten::mH"}


def _files(*modules) -> frozenset:
    return frozenset(m.__file__ for m in modules)


# the frames of irjit's op machinery: the innermost other frame is where the user called an
# op (PyTorch's tracer takes the innermost Python frame, as its ops are C++)
_INTERNAL_FILES = _files(eager, eager_binding, eager_indexing, functional, autograd, nn_module,
                         trace_decompositions, sys.modules[__name__])


def _user_frame():
    f = sys._getframe(2)
    while f is not None and f.f_code.co_filename in _INTERNAL_FILES:
        f = f.f_back
    return f


def _type_of(t: Tensor) -> TensorType:
    """The complete type PyTorch's tracer gives a tensor: a view keeps its own strides."""
    arr = t.data
    tt = tensor_type_of(arr, bool(t.requires_grad))
    if not arr.size or not arr.itemsize:
        return tt
    return tt.with_(strides=tuple(s // arr.itemsize for s in arr.strides))


class Tracer:
    """Records ops into `graph`; installed as `autograd.TRACER[0]` while tracing."""

    def __init__(self, root: Optional[Module]):
        self.graph = Graph()
        self.root = root
        self.values: dict[int, Value] = {}
        self._keep: list = []  # the traced objects, so their ids stay unique while tracing
        self.paths: dict[int, str] = {}  # id of a module or tensor attribute -> `__module.a.b`
        self.objects: dict[str, Any] = {}  # and back
        self._attr_values: dict[str, Value] = {}
        # each module call's scope (by path) as the 2017 tracer named it: `Sequential[layer1]`
        self.module_scope_names: dict[str, str] = {}
        self.frame: Any = None  # the user frame of the op being recorded
        self._decomposing = 0
        self._class_types: dict[int, ClassType] = {}
        self._class_names: set[str] = set()
        if root is not None:
            self._index(root, "__module")

    def class_type(self, module: Module) -> ClassType:
        """The type of a module instance in the traced graphs: its class's qualified name, with
        `___torch_mangle_N` before the class name for every further instance of that class, as
        PyTorch gives each traced module instance a type of its own."""
        t = self._class_types.get(id(module))
        if t is None:
            name = module.qualified_name
            if name in self._class_names:
                head, _, cls = name.rpartition(".")
                name = f"{head}.___torch_mangle_{len(self._class_types)}.{cls}"
            self._class_names.add(module.qualified_name)
            t = self._class_types[id(module)] = ClassType(name)
        return t

    def type_of(self, path: str) -> Type:
        """The type of a module attribute (by scope path) in the traced graphs."""
        obj = self.objects[path]
        return self.class_type(obj) if isinstance(obj, Module) else TENSOR

    def _index(self, module: Module, path: str) -> None:
        self.paths.setdefault(id(module), path)
        self.objects.setdefault(path, module)
        for name, value in module.attributes.items():
            if isinstance(value, Module):
                self._index(value, f"{path}.{name}")
            elif isinstance(value, Tensor) and id(value) not in self.paths:
                self.paths[id(value)] = f"{path}.{name}"
                self.objects[f"{path}.{name}"] = value

    # ---- inputs and outputs

    def add_input(self, value: Any, name: Optional[str]) -> Any:
        """A graph input for `value` (a tensor, or a tuple or list of them); returns the object
        the traced function receives (a view when the same tensor is passed twice)."""
        if isinstance(value, Module):
            self.graph.add_input(name, self.class_type(value))
            return value
        v = self.graph.add_input(None, self._input_type(value, name))
        if name is not None:
            v.set_debug_name(name)
        return self._bind_input(value, v)

    def _input_type(self, value: Any, name: Optional[str]) -> Type:
        if isinstance(value, Tensor):
            return _type_of(value)
        if isinstance(value, tuple):
            return TupleType(tuple(self._input_type(x, name) for x in value))
        if isinstance(value, list) and value and all(isinstance(x, Tensor) for x in value):
            return ListType(TENSOR)
        raise TracingError(f"trace inputs must be tensors or tuples or lists of them (argument "
                           f"{name!r} is {type(value).__name__})")

    def _bind_input(self, value: Any, v: Value) -> Any:
        if isinstance(value, Tensor):
            if id(value) in self.values:  # the same tensor twice: the second is a view
                value = Tensor(value.data, value.requires_grad, None, value._version)
            self._bind(value, v)
            return value
        kind = "prim::TupleUnpack" if isinstance(value, tuple) else "prim::ListUnpack"
        types = list(v.type.elems) if isinstance(value, tuple) else [_type_of(x) for x in value]
        n = self.graph.insert(kind, [v], output_types=types)
        items = [self._bind_input(x, o) for x, o in zip(value, n.outputs)]
        return tuple(items) if isinstance(value, tuple) else items

    def _bind(self, obj: Any, v: Value) -> None:
        self.values[id(obj)] = v
        self._keep.append(obj)

    def set_output(self, out: Any) -> None:
        self.frame = None  # PyTorch reads the outputs from its own frame: they get no names
        self.graph.register_output(self._output_value(out))

    def _output_value(self, out: Any) -> Value:
        if isinstance(out, (tuple, list)):
            items = [self._output_value(o) for o in out]
            if isinstance(out, tuple):
                t = TupleType(tuple(i.type for i in items))
                return self.graph.insert("prim::TupleConstruct", items, output_types=[t]).output
            return self.graph.insert("prim::ListConstruct", items,
                                     output_types=[ListType(TENSOR)]).output
        if not isinstance(out, Tensor) or (id(out) not in self.values and id(out) not in self.paths):
            raise TracingError(f"a traced function must return tensors computed from its inputs "
                               f"or tuples or lists of them (got {type(out).__name__})")
        return self.tensor_value(out)

    # ---- values of the run-time objects an op receives

    def tensor_value(self, t: Tensor) -> Value:
        """The traced value of `t`: bound by an earlier op or input, a module attribute, or
        else a constant (named after the user's variable when it is one)."""
        v = self.values.get(id(t))
        if v is None:
            path = self.paths.get(id(t))
            if path is not None:
                return self._attr_value(path)
            if t.requires_grad:
                raise TracingError("Cannot insert a Tensor that requires grad as a constant. "
                                   "Consider making it a parameter or input, or detaching it")
            v = self.graph.insert_constant(t.data)
            self._locate(v.node)
            return v
        if v.debug_name is None and self.frame is not None:
            name = self._local_name(t)
            if name:
                v.set_debug_name(name)
        return v

    def _local_name(self, t: Tensor) -> str:
        for k, x in self.frame.f_locals.items():
            if x is t:
                return k if k != "self" else ""
        return ""

    def _attr_value(self, path: str) -> Value:
        """The `prim::TracedAttr` placeholder of a module attribute (trace_fixup turns its uses
        into GetAttr chains)."""
        v = self._attr_values.get(path)
        if v is None:
            n = self.graph.create("prim::TracedAttr", output_types=[self.type_of(path)])
            n.set_attr("scope", "s", path)
            n.scope = self.graph.scope_root
            n.insert_before(self.graph.block.first_node)
            v = self._attr_values[path] = n.output
        return v

    def _int_value(self, x: TracedInt) -> Value:
        """`aten::Int` of the size tensor `x` came from, right after that tensor's node."""
        ten = self.tensor_value(x.tensor)
        n = self.graph.create("aten::Int", [ten], output_types=[INT])
        after = ten.node
        if after.kind == "prim::Param":
            n.insert_before(after.owning_block.first_node)
        else:
            n.insert_after(after)
        return n.output

    def _constant(self, value: Any) -> Value:
        v = self.graph.insert_constant(value)
        if value is not None:
            self._locate(v.node)
        return v

    def _argument_value(self, a: Any, type_: str) -> Value:
        if isinstance(a, Tensor):
            return self.tensor_value(a)
        if isinstance(a, TracedInt):
            return self._int_value(a)
        if isinstance(a, (list, tuple)) and type_.rstrip("?").endswith("[]"):
            elem = _LIST_ELEMENT.get(type_.rstrip("?"))
            items = [self._argument_value(x, type_.rstrip("?")[:-2]) for x in a]
            if elem is None:
                elem = items[0].type if items else INT
            return self.graph.insert("prim::ListConstruct", items,
                                     output_types=[ListType(elem)]).output
        if isinstance(a, np.ndarray):
            return self._constant(a)
        return self._constant(a)

    def _locate(self, node) -> None:
        f = self.frame
        if f is not None:
            node.source = SourceLocation(f.f_code.co_filename, f.f_lineno, 0)

    # ---- hooks called by runtime.autograd.call_op, the eager tensor and irjit.nn.Module

    def record_op(self, entry: OpEntry, args: list, label: str) -> Any:
        schema = entry.schema
        if self._decomposing == 0:
            self.frame = _user_frame()
        decompose = trace_decompositions.DECOMPOSITIONS.get(schema.name)
        if decompose is not None:
            self._decomposing += 1
            try:
                result = decompose(*with_defaults(entry, args))
            finally:
                self._decomposing -= 1
            if result is not NotImplemented:
                return result
        plain = [_plain(a) for a in args]
        autograd.TRACER[0] = None
        try:
            result = autograd.call_op(entry, plain, label)
        finally:
            autograd.TRACER[0] = self
        if schema.variadic:
            return result
        args = with_defaults(entry, args)
        alias = _ALIASES.get(schema.name)
        if alias is not None:
            entry = find_op(alias, [_plain(a) for a in args])
        entry, args = _torch_binding(entry, args)
        schema = entry.schema
        inputs = [self._argument_value(a, p.type) for a, p in zip(args, schema.arguments)]
        outs = list(result) if len(schema.returns) > 1 else [result]
        types = [self._result_type(o, r.type) for o, r in zip(outs, schema.returns)]
        n = self.graph.insert(schema.name, inputs, output_types=types)
        self._locate(n)
        for o, v in zip(outs, n.outputs):
            if isinstance(o, Tensor):
                self._bind(o, v)
            elif isinstance(o, list) and all(isinstance(x, Tensor) for x in o):
                unpack = self.graph.insert("prim::ListUnpack", [v],
                                           output_types=[_type_of(x) for x in o])
                for x, u in zip(o, unpack.outputs):
                    self._bind(x, u)
        return result

    def _result_type(self, o: Any, declared: str) -> Type:
        if isinstance(o, Tensor):
            return _type_of(o)
        if isinstance(o, list) and declared.startswith("Tensor"):
            return ListType(TENSOR)
        t = attribute_type(o)
        if t is None:
            raise TracingError(f"the tracer cannot record an op returning {type(o).__name__}")
        return t

    def size(self, t: Tensor, dim: int) -> Tensor:
        """`t.size(dim)` while tracing: `aten::size` + `prim::NumToTensor`, returned as the
        0-dim int64 tensor PyTorch's tracer gives (arithmetic on it is traced too)."""
        self.frame = _user_frame()
        x = self.tensor_value(t)
        d = self._constant(int(dim))
        n = self.graph.insert("aten::size", [x, d], output_types=[INT])
        self._locate(n)
        num = self.graph.insert("prim::NumToTensor", [n.output],
                                output_types=[TensorType("Long", (), (), None, "cpu")])
        out = Tensor(np.array(t.data.shape[dim], np.int64))
        self._bind(out, num.output)
        return out

    def call_module(self, module: Module, args: tuple, kwargs: dict) -> Any:
        """A submodule call: its ops go into a `prim::TracedModuleForward` block under the
        scope `__module.<path>`."""
        path = self.paths.get(id(module))
        if path is None or module is self.root:
            if self.root is not None and path is None:
                raise TracingError(f"{type(module).__name__} is called while tracing but is not "
                                   "a submodule of the traced module")
            return module.forward(*args, **kwargs)
        g = self.graph
        self._attr_value(path)
        scope = g.push_scope(path)
        owner, attr = path.rsplit(".", 1)
        self.module_scope_names[scope.names_from_root()] = f"{type(module).__name__}[{attr}]"
        node = g.insert("prim::TracedModuleForward", [], num_outputs=0)
        node.set_attr("scope", "s", path)
        g.set_insert_point(node.add_block())
        try:
            return module.forward(*args, **kwargs)
        finally:
            g.pop_scope()
            g.set_insert_point(node.next)

    def data_dependent(self, what: str) -> None:
        warnings.warn(f"Converting a tensor to a Python {what} might cause the trace to be "
                      "incorrect. We can't record the data flow of Python values, so this value "
                      "will be treated as a constant in the future. This means that the trace "
                      "might not generalize to other inputs!", TracerWarning, stacklevel=3)

    def warn(self, message: str) -> None:
        warnings.warn(message, TracerWarning, stacklevel=3)


def _plain(a: Any) -> Any:
    """An argument as the op computes with it (sizes read from traced tensors are ints)."""
    if isinstance(a, TracedInt):
        return int(a)
    if isinstance(a, list) and any(isinstance(x, TracedInt) for x in a):
        return [int(x) if isinstance(x, TracedInt) else x for x in a]
    return a


def _torch_binding(entry: OpEntry, args: list) -> tuple[OpEntry, list]:
    """The overload and arguments torch's Python bindings would have recorded: a Python number
    given as `other` of add/sub/mul/div/floor_divide becomes a wrapped-number tensor (int64 for
    ints, float64 for floats) of the `.Tensor` overload."""
    schema = entry.schema
    if schema.name not in _WRAPPED_NUMBER_OPS or len(args) < 2 or \
            schema.arguments[1].type != "Scalar" or isinstance(args[1], Tensor):
        return entry, args
    other = args[1]
    dtype = np.float64 if isinstance(other, float) else np.bool_ if isinstance(other, bool) \
        else np.int64
    wrapped = [args[0], Tensor(np.array(other, dtype))] + list(args[2:])
    return find_op(schema.name, wrapped), wrapped


__all__ = ["Tracer", "TracerWarning", "TracingError"]
