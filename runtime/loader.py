"""`runtime.load`: a parsed graph plus its parameters, as a callable `Function` with gradients."""

from __future__ import annotations

import os
import threading
from typing import Any, Optional, Sequence, Union

import numpy as np

from irjit.compiler import parse_ir
from irjit.ops.errors import IRTypeError
from irjit.compiler.ir import ClassType, Graph, OptionalType, TensorData, TensorType
from irjit.ops.enums import reset_enum_values, set_enum_values

from .autograd import (GRAD_MODE, backward as run_backward, broadcast_ones, edge_gradients,
                       node_gradients, ones_like, shared_ones)
from .interpreter import Interpreter
from .module import Module
from irjit.ops.tensor import Tensor
from .values import from_array, leaves, to_python

_ARG_NAMES = tuple(f"arg{i}" for i in range(64))  # the gradients' names of the inputs
# Outputs larger than this get a broadcast seed (one element, every stride 0) where the tape's
# node reads it as it is: a materialized one costs a write and a read of the whole output.
_BROADCAST_SEED_SIZE = 1 << 16

# Buffers of the standard modules: tensors that are state, not parameters (no gradients).
BUFFER_NAMES = frozenset({"running_mean", "running_var", "num_batches_tracked"})


def _read_npz(source: Union[None, str, os.PathLike, dict]) -> dict[str, np.ndarray]:
    if source is None:
        return {}
    if isinstance(source, dict):
        return {k: np.asarray(v) for k, v in source.items()}
    with np.load(source, allow_pickle=False) as f:
        return {k: f[k] for k in f.files}


def attribute_types(graph: Graph) -> dict[str, object]:
    """Dotted attribute path -> IR type, read off `prim::GetAttr` chains from `%self`."""
    if not graph.inputs or not isinstance(graph.inputs[0].type, ClassType):
        return {}
    paths = {graph.inputs[0]: ""}
    types: dict[str, object] = {"": graph.inputs[0].type}
    for n in graph.walk():
        if n.kind == "prim::GetAttr" and n.inputs[0] in paths:
            base = paths[n.inputs[0]]
            path = f"{base}.{n.attr('name')}" if base else n.attr("name")
            paths[n.outputs[0]] = path
            types[path] = n.outputs[0].type
    return types


def module_classes(graph: Graph) -> dict[str, str]:
    """Dotted attribute path -> class name of the submodules a graph reaches."""
    return {p: t.qualified_name for p, t in attribute_types(graph).items() if isinstance(t, ClassType)}


def build_module(graph: Graph, params: dict[str, np.ndarray]) -> Module:
    """The `%self` module: submodules typed as the graph says, attributes from `params`."""
    classes = module_classes(graph)
    root = Module(classes.get("", "__torch__.Module"))
    for path, qualname in sorted(classes.items()):
        if path:
            m = root
            for part in path.split("."):
                m = m.submodule(part)
            m.qualified_name = qualname
    for key, value in params.items():
        m = root
        parts = key.split(".")
        for part in parts[:-1]:
            m = m.submodule(part)
        m.set(parts[-1], value)
    return root


def set_attribute(root: Module, path: str, value: Any) -> None:
    """Set the module attribute at dotted `path` to a run-time value (a string, number, None,
    list, dict, Tensor, ... as TorchScript holds it), creating submodules on the way."""
    m = root
    parts = path.split(".")
    for part in parts[:-1]:
        m = m.submodule(part)
    m.set(parts[-1], value)


def attach_constants(graph: Graph, constants: dict[str, np.ndarray]) -> None:
    """Give `<Tensor>` constants (whose data PyTorch does not print) their values, by value
    name, so the graph is self-contained for every pass and executor; printing is unchanged."""
    if not constants:
        return
    for n in graph.walk():
        if n.kind == "prim::Constant" and n.attr_kind("value") == "t":
            name = n.outputs[0].name
            if name in constants:
                data = n.attr("value")
                n.set_attr("value", "t", TensorData(np.array(constants[name]), data.text))


class Function:
    """A runnable graph: `fn(*inputs)` returns the outputs (numpy arrays for tensors, in
    the graph's structure); `fn.backward()` then returns gradients by name.

    `executor` picks what runs it: "interp" (the plain interpreter), "legacy" or "profiling"
    (a GraphExecutor of that kind, optimizing per input specialization).

    One Function may be shared between threads: each thread's `backward()` differentiates
    that thread's latest call (grad mode is per thread too), and the executors compile each
    plan once however many threads ask. A graph that writes module attributes
    (`prim::SetAttr`) or its inputs in place shares that state between threads, as a
    TorchScript module does."""

    def __init__(self, graph: Graph, params: Optional[dict] = None, constants: Optional[dict] = None,
                 functions: Optional[dict[str, Graph]] = None, filename: Optional[str] = None,
                 executor: str = "interp", attributes: Optional[dict[str, Any]] = None,
                 backend: Optional[str] = None):
        self.graph = graph
        self.filename = filename or "<graph>"
        self.has_self = bool(graph.inputs) and isinstance(graph.inputs[0].type, ClassType)
        attributes = dict(attributes or {})
        # enum class -> member -> value (`"$enums"`): this Function's, active while it runs
        self.enum_values = attributes.pop("$enums", {})
        if attributes and not self.has_self:
            raise IRTypeError(f"{self.filename}: module attributes given, but the graph has no "
                              "module (%self) input")
        self.module = build_module(graph, _read_npz(params)) if self.has_self else None
        for path, value in (attributes or {}).items():
            set_attribute(self.module, path, value)
        self.attribute_types = attribute_types(graph)
        constants = _read_npz(constants)
        attach_constants(graph, constants)
        self.interpreter = Interpreter(graph, constants, functions, self.filename)
        self.executor = None
        if executor != "interp":
            from .executor import make_executor
            from dataclasses import replace
            from irjit.compiler.settings import get_settings
            from .executor.plan import runner_factory
            settings = None
            if backend is not None:
                runner_factory(backend)  # an unknown name is an error naming the valid ones
                settings = replace(get_settings(), backend=backend)
            self.executor = make_executor(graph, executor, functions=functions, settings=settings)
        elif backend not in (None, "interp"):
            from .executor.plan import RunnerContext, runner_factory
            factory = runner_factory(backend)  # an unknown name is an error naming the valid ones
            self.interpreter = factory(RunnerContext(
                graph, functions or {}, self.filename,
                lambda interp, node, args: interp.sub_interpreter(node.attr("Subgraph")).run(args)))
        self._calls = threading.local()  # per thread: (values, params, outs, inputs without
        # gradients) of the last call
        # the number of inputs when every input is a tensor (and no module), else -1
        self._tensor_inputs = len(graph.inputs) if not self.has_self and all(
            type(v.type) is TensorType for v in graph.inputs) else -1
        self._params_lock = threading.Lock()
        # `_gradients_of_sums`' route of the latest one-node tape's edges to the inputs' names
        self._route: list = [None]

    @property
    def input_values(self):
        return self.graph.inputs[1:] if self.has_self else self.graph.inputs

    def prepare_inputs(self, inputs: Sequence[Any], requires_grad: Union[bool, Sequence[bool]]) -> list:
        """Run-time values for the graph inputs (arrays become Tensors, typed as the graph
        says); `requires_grad` is one flag for every floating-point tensor input, or a list or
        tuple of one per input (a Tensor flagged False is detached)."""
        params = self.input_values
        if len(inputs) != len(params):
            raise IRTypeError(f"{self.filename}: the graph takes {len(params)} inputs "
                              f"({', '.join('%' + v.name for v in params)}) but {len(inputs)} were given")
        flags = None if requires_grad is True or requires_grad is False else \
            _input_flags(requires_grad, len(inputs), self.filename)
        values = list(inputs)
        for i, x in enumerate(values):
            if flags is not None:
                requires_grad = flags[i]
            kind = type(x)
            if kind is Tensor:  # (as it is, unless it must require grad, or must not)
                if requires_grad and not x.requires_grad and x.data.dtype.kind == "f":
                    values[i] = Tensor(x.data, True)
                elif flags is not None and not requires_grad and x.requires_grad:
                    values[i] = x.detach()
                continue
            v = params[i]
            if kind is np.ndarray and type(v.type) is TensorType:  # (from_array's common case)
                x = Tensor(np.array(x), requires_grad and x.dtype.kind == "f")
            elif isinstance(x, np.ndarray) or (isinstance(x, np.generic)):
                try:
                    x = from_array(np.asarray(x), v.type, requires_grad)
                except IRTypeError as e:
                    raise IRTypeError(f"{self.filename}: input %{v.name}: {e}") from None
            elif isinstance(x, Tensor) and requires_grad and x.dtype.kind == "f" and not x.requires_grad:
                x = Tensor(x.data, True)
            values[i] = x
        return values

    def parameters(self) -> dict[str, Tensor]:
        """Floating-point tensor parameters (not buffers) by dotted path."""
        out: dict[str, Tensor] = {}

        def visit(m: Module, prefix: str):
            for name, v in m.attributes.items():
                path = f"{prefix}{name}"
                if isinstance(v, Module):
                    visit(v, path + ".")
                elif name not in BUFFER_NAMES and self._is_tensor_attribute(path) and \
                        isinstance(v, (Tensor, np.ndarray)) and \
                        np.asarray(v.data if isinstance(v, Tensor) else v).dtype.kind == "f":
                    if isinstance(v, np.ndarray):
                        v = Tensor(np.array(v))
                        m.set(name, v)
                    out[path] = v
        if self.module is not None:
            visit(self.module, "")
        return out

    def _is_tensor_attribute(self, path: str) -> bool:
        t = self.attribute_types.get(path)
        t = getattr(t, "elem", t) if isinstance(t, OptionalType) else t
        return t is None or isinstance(t, TensorType)

    def run(self, *inputs: Any, requires_grad: Union[bool, Sequence[bool]] = True) -> list:
        """Run and return the raw run-time outputs (Tensors and Python values).
        `requires_grad`: whether the floating-point tensor inputs (and parameters) require
        grad, or a list or tuple of one flag per input (parameters then require grad), as a
        caller of a torch module sets `requires_grad` on each tensor it passes; `backward`
        then leaves out the inputs flagged False."""
        if requires_grad is not True and requires_grad is not False and isinstance(
                requires_grad, (list, tuple)) and len(requires_grad) == len(inputs) and all(requires_grad):
            requires_grad = True  # (every input flagged: as one flag)
        if requires_grad is False and self.executor is None and not self.has_self and not self.enum_values:
            # a native runner whose latest plan takes the caller's arrays as they are
            run_arrays = getattr(self.interpreter, "run_arrays", None)
            outs = run_arrays(inputs) if run_arrays is not None else None
            if outs is not None:
                self._calls.last = (inputs, {}, outs, (), False)
                return outs
        values = _copies_as_tensors(inputs) if requires_grad is True and \
            len(inputs) == self._tensor_inputs else None
        copies = values is not None  # (Tensors of this call's own: distinct objects)
        if values is None:
            values = self.prepare_inputs(inputs, requires_grad)
        params: dict = {}
        skipped = ()
        if requires_grad is not True and requires_grad is not False and \
                isinstance(requires_grad, (list, tuple)):
            skipped = tuple(i for i, flag in enumerate(requires_grad) if not flag)
            requires_grad = True  # (grad mode on: the flagged inputs and the parameters)
        if requires_grad and self.module is not None:
            with self._params_lock:  # turns params-file arrays into the module's Tensors, once
                params = self.parameters()
                for p in params.values():
                    p.requires_grad = True
                    p.grad = None
        args = [self.module, *values] if self.has_self else values
        enabled, GRAD_MODE.enabled = GRAD_MODE.enabled, bool(requires_grad)
        token = set_enum_values(self.enum_values)
        try:
            outs = self.interpreter.run(args) if self.executor is None else self.executor.run(*args)
        finally:
            GRAD_MODE.enabled = enabled
            reset_enum_values(token)
        self._calls.last = (values, params, outs, skipped, copies)
        return outs

    def __call__(self, *inputs: Any) -> Any:
        outs = self.run(*inputs)
        result = [to_python(o) for o in outs]
        return result[0] if len(result) == 1 else tuple(result)

    def backward(self, grad_outputs: Optional[Sequence[Optional[np.ndarray]]] = None) -> dict[str, np.ndarray]:
        """Gradients of the last call: of `sum(out.sum())` over floating-point tensor outputs,
        or of the given output gradients (one per flattened output), w.r.t. floating-point
        tensor inputs (`arg0`, ...; not those the call's per-input `requires_grad` flagged
        False) and parameters (dotted paths); zeros where unused."""
        last = getattr(self._calls, "last", None)
        if last is None:
            raise RuntimeError("backward() needs a call first (in this thread)")
        values, params, outs, skipped, copies = last
        if grad_outputs is None and not params:
            enabled, GRAD_MODE.enabled = GRAD_MODE.enabled, False
            try:
                found = _gradients_of_sums(values, outs, skipped, self._route if copies else None)
            finally:
                GRAD_MODE.enabled = enabled
            if found is not None:
                return found
        roots, grads = [], []
        for i, leaf in enumerate(leaves(outs)):
            if isinstance(leaf, Tensor) and leaf.data.dtype.kind == "f":
                if grad_outputs is None:
                    if leaf.requires_grad:  # (an output returned twice shares its ones:
                        # backward only reads the gradients it is given)
                        grads.append(grads[-1] if roots and roots[-1] is leaf else ones_like(leaf.data))
                        roots.append(leaf)
                    continue
                g = grad_outputs[i]
                if g is not None and leaf.requires_grad:
                    roots.append(leaf)
                    grads.append(np.asarray(g, dtype=leaf.dtype))
        names, tensors = [], []
        for i, v in enumerate(values):
            if isinstance(v, np.ndarray):  # (a call without grad took the caller's arrays)
                v = Tensor(v)
            if isinstance(v, Tensor) and v.data.dtype.kind == "f" and i not in skipped:
                names.append(_ARG_NAMES[i] if i < len(_ARG_NAMES) else f"arg{i}")
                tensors.append(v)
        for name, v in params.items():
            if name not in names:  # (as a dict's update: an input named like a parameter)
                names.append(name)
                tensors.append(v)
            else:
                tensors[names.index(name)] = v
        enabled, GRAD_MODE.enabled = GRAD_MODE.enabled, False
        try:
            got = run_backward(roots, grads, inputs=tensors) if roots else [None] * len(tensors)
        finally:
            GRAD_MODE.enabled = enabled
        return {name: (g if g is not None else np.zeros_like(t.data))
                for name, t, g in zip(names, tensors, got)}


def _gradients_of_sums(values: list, outs: list, skipped: tuple, route: Optional[list] = None
                       ) -> Optional[dict[str, np.ndarray]]:
    """`Function.backward()` (the gradients of the sum of the outputs' sums) of a call whose
    tape is one node with leaves for edges (a graph run as one native group or
    DifferentiableGraph, what `irjit.compile` records): the node's formula runs on shared
    read-only ones per output (a large one broadcast from one element where the node takes it:
    `takes_broadcast_seed`; an output returned twice gets twos, as the walk sums them) and
    its edges' gradients go to the inputs' names directly, without the walk's bookkeeping
    (a gradient that is a seed itself is copied out); None when the tape is not such a node
    (then `autograd.backward`, which this must equal). `route` (a one-element list, for calls
    whose inputs are distinct Tensors of their own) holds which input each edge is and the
    names, found on a call and checked by identity on the next (`_routed`)."""
    node = grads = None
    for leaf in leaves(outs):
        if leaf.__class__ is not Tensor:
            if isinstance(leaf, (Tensor, np.ndarray)):
                return None
            continue
        if not leaf.requires_grad or leaf.data.dtype.kind != "f":
            continue
        grad_fn = leaf.grad_fn
        if grad_fn is None:
            return None  # (an input returned as it is)
        if node is None:
            node = grad_fn[0]
            grads = [None] * node.n_outputs
            seed = broadcast_ones if getattr(node.entry, "takes_broadcast_seed", False) else None
        elif grad_fn[0] is not node:
            return None
        i = grad_fn[1]
        data = leaf.data
        one = seed(data) if seed is not None and data.size > _BROADCAST_SEED_SIZE else shared_ones(data)
        grads[i] = one if grads[i] is None else grads[i] + one  # (an output returned again)
    if node is None:
        return None
    if route is not None:
        found = route[0]
        if found is not None and found[0] is node.entry and found[1] == len(values) and \
                found[2] == skipped and _routed(found, node, values):
            return _route_gradients(found, node, grads, values)
    names, tensors, want = [], [], {}
    for i, v in enumerate(values):
        if v.__class__ is not Tensor:
            if isinstance(v, (Tensor, np.ndarray)):
                return None
            continue
        if v.data.dtype.kind == "f" and i not in skipped:
            want[id(v)] = len(tensors)  # (a tensor given twice: its last position, as the walk's)
            names.append(_ARG_NAMES[i] if i < len(_ARG_NAMES) else f"arg{i}")
            tensors.append(v)
    in_grads = edge_gradients(node, grads)
    if in_grads is None:
        return None
    got: list = [None] * len(tensors)
    for e, g in zip(node.edges, in_grads):
        if g is None or e is None or not e.requires_grad:
            continue
        k = want.get(id(e))
        if k is not None:
            dtype = e.data.dtype
            if g.__class__ is not np.ndarray or (g.dtype is not dtype and g.dtype != dtype):
                g = np.asarray(g, dtype)
            got[k] = g if got[k] is None else got[k] + g
    if route is not None:
        route[0] = _new_route(node, values, skipped, names, tensors, want)
    result = {}
    for name, t, g in zip(names, tensors, got):
        result[name] = np.zeros_like(t.data) if g is None else g if g.flags.writeable else g.copy()
    return result


def _new_route(node, values: list, skipped: tuple, names: list, tensors: list, want: dict
               ) -> Optional[tuple]:
    """(entry, number of inputs, skipped, names, per name its input's position, per edge its
    name's index, the unnamed inputs not skipped) when every input is a Tensor and every edge is a named input requiring
    grad, once each; else None."""
    if any(v.__class__ is not Tensor for v in values):
        return None
    slots = []
    for e in node.edges:
        k = None if e is None or not e.requires_grad else want.get(id(e))
        if k is None or k in slots:
            return None
        slots.append(k)
    position = {id(v): i for i, v in enumerate(values)}
    positions = tuple(position[id(t)] for t in tensors)
    others = tuple(i for i in range(len(values)) if i not in positions and i not in skipped)
    return (node.entry, len(values), skipped, tuple(names), positions, tuple(slots), others)


def _routed(route: tuple, node, values: list) -> bool:
    """Whether `route` holds for this call's tape and inputs: each edge is the input it was,
    a leaf (so every named input that is an edge is a floating-point Tensor requiring grad), the
    other named inputs are floating-point Tensors still and the unnamed ones are not, and the
    inputs' Tensors are distinct (the caller's promise: they are the call's own copies)."""
    _, _, _, _, positions, slots, others = route
    edges = node.edges
    if len(edges) != len(slots):
        return False
    for e, k in zip(edges, slots):
        if e is not values[positions[k]] or not e.requires_grad or e.grad_fn is not None:
            return False
    if len(positions) != len(slots):  # (named inputs that are no edge: zeros)
        for k in positions:
            v = values[k]
            if v.__class__ is not Tensor or v.data.dtype.kind != "f":
                return False
    for k in others:
        v = values[k]
        if v.__class__ is not Tensor or v.data.dtype.kind == "f":
            return False
    return True


def _route_gradients(route: tuple, node, grads: list, values: list) -> dict:
    _, _, _, names, positions, slots, _ = route
    in_grads = node_gradients(node, grads)  # (its edges are inputs, leaves: `_routed`)
    got: list = [None] * len(names)
    for e, k, g in zip(node.edges, slots, in_grads):
        if g is not None:
            dtype = e.data.dtype
            if g.__class__ is not np.ndarray or (g.dtype is not dtype and g.dtype != dtype):
                g = np.asarray(g, dtype)
            got[k] = g
    result = {}
    for name, k, g in zip(names, positions, got):
        result[name] = np.zeros_like(values[k].data) if g is None else g if g.flags.writeable \
            else g.copy()
    return result


def _copies_as_tensors(inputs: Sequence[Any]) -> Optional[list]:
    """What `prepare_inputs` makes of numpy arrays for tensor inputs under grad (copies, the
    floating-point ones requiring grad), or None when an input is not a numpy array."""
    values = []
    for x in inputs:
        if x.__class__ is not np.ndarray:
            return None
        values.append(Tensor(np.array(x), x.dtype.kind == "f"))
    return values


def _input_flags(requires_grad: Union[bool, Sequence[bool]], n: int, filename: str
                 ) -> Optional[list[bool]]:
    """None for one flag for every input, else the list of per-input flags (checked)."""
    if isinstance(requires_grad, bool) or not isinstance(requires_grad, (list, tuple)):
        return None
    if len(requires_grad) != n:
        raise ValueError(f"{filename}: requires_grad gives {len(requires_grad)} flags for "
                         f"{n} inputs")
    return [bool(flag) for flag in requires_grad]


def load(source: Union[str, os.PathLike, Graph], params=None, constants=None,
         functions: Optional[dict] = None, executor: str = "interp",
         attributes: Optional[dict[str, Any]] = None, backend: Optional[str] = None) -> Function:
    """A Function from a graph, `.ir` path or IR text; `params` / `constants` are `.npz`
    paths or dicts of arrays (dotted attribute paths / value names); `attributes` maps dotted
    paths to other module attribute values (strings, None, lists of Tensors, dicts), and its
    `"$enums"` entry gives this Function's enum values (`{"__torch__.Color": {"RED": 1}}`);
    `executor` is "interp", "legacy" or "profiling"; `backend` ("native" or "interp", default:
    the settings') is what runs the graph (with "interp" executor, "native" runs native units)."""
    fns = {k: (parse_ir(v, k) if isinstance(v, str) else v) for k, v in (functions or {}).items()}
    if isinstance(source, Graph):
        return Function(source, params, constants, fns, executor=executor, attributes=attributes,
                        backend=backend)
    text, filename = source, "<string>"
    if isinstance(source, os.PathLike) or (isinstance(source, str) and "\n" not in source
                                           and os.path.exists(source)):
        filename = os.fspath(source)
        with open(filename, encoding="utf-8") as f:
            text = f.read()
    graph = parse_ir(text, filename)
    return Function(graph, params, constants, fns, filename, executor=executor,
                    attributes=attributes, backend=backend)


def grad(fn: Function, inputs: Sequence[Any], grad_outputs=None) -> dict[str, np.ndarray]:
    """Run `fn` on `inputs` and return the gradients `fn.backward` gives."""
    fn.run(*inputs)
    return fn.backward(grad_outputs)
