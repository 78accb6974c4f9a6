"""`runtime.load`: a parsed graph plus its parameters, as a callable `Function` with gradients."""

from __future__ import annotations

import os
import threading
from typing import Any, Callable, Optional, Sequence, Union

import numpy as np

from irjit.compiler import parse_ir
from irjit.ops.errors import IRTypeError
from irjit.compiler.ir import ClassType, Graph, OptionalType, TensorData, TensorType
from irjit.ops.enums import reset_enum_values, set_enum_values

from .autograd import GRAD_MODE, backward as run_backward, backward_of_sums, outputs_sums_plan
from .interpreter import Interpreter
from .module import Module
from irjit.ops.tensor import Tensor
from .values import from_array, leaves, to_python

_ARG_NAMES = tuple(f"arg{i}" for i in range(64))  # the gradients' names of the inputs
_ndarray, _copy = np.ndarray, np.array  # (globals: a hot loop's module attribute loads cost)
_NO_PARAMETERS: dict = {}  # (a call's parameters when it has none: only read)

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

    # `backward()` of the outputs' sums for a call like the latest one it took that way
    # (`autograd.outputs_sums_plan`; it checks the call's outputs and tape), tried first
    _outputs_sums: Optional[Callable] = None

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
        # gradients, their names when every input is a floating-point Tensor of the call's own)
        # of the last call
        # the number of inputs when every input is a tensor (and no module), else -1
        self._tensor_inputs = len(graph.inputs) if not self.has_self and all(
            type(v.type) is TensorType for v in graph.inputs) else -1
        self._params_lock = threading.Lock()
        # (`run(..., requires_grad=[True, ...])`, one flag per input given)
        self._every_flag = [True] * (len(graph.inputs) - bool(self.has_self))
        self._names = tuple(_ARG_NAMES[i] if i < len(_ARG_NAMES) else f"arg{i}"
                            for i in range(max(self._tensor_inputs, 0)))
        self._made = True
        self._bind_training_path()

    @property
    def interpreter(self):
        """What runs the graph without an executor (the interpreter, or a native runner)."""
        return self._interpreter

    @interpreter.setter
    def interpreter(self, runner) -> None:
        self._interpreter = runner  # (`irjit.compile` and others replace it: the training path
        if self.__dict__.get("_made"):  # follows it)
            self._bind_training_path()

    def _bind_training_path(self) -> None:
        """The training path of calls of tensors only, when this Function has no module nor
        enum values: its executor's (`ProfilingGraphExecutor.train_arrays`) or its runner's
        (`NativeRunner.train_arrays`), `train(arrays, flags, copy)`; else None."""
        self._train_arrays = getattr(self._interpreter if self.executor is None else self.executor,
                                     "train_arrays", None) \
            if self._tensor_inputs >= 0 and not self.enum_values else None

    @property
    def input_values(self):
        return self.graph.inputs[1:] if self.has_self else self.graph.inputs

    def prepare_inputs(self, inputs: Sequence[Any], requires_grad: Union[bool, Sequence[bool]]) -> list:
        """Run-time values for the graph inputs (arrays become Tensors of copies of them, typed
        as the graph says); `requires_grad` is one flag for every floating-point tensor input,
        or a list or tuple of one per input (a Tensor flagged False is detached)."""
        return self._prepare(inputs, requires_grad)[0]

    def _prepare(self, inputs: Sequence[Any], requires_grad: Union[bool, Sequence[bool]]
                 ) -> tuple[list, Optional[tuple]]:
        """`prepare_inputs`' values, and the inputs' gradient names when the call needs
        gradients of every input and each value is a floating-point Tensor this call made (a
        copy of an array, or a Tensor requiring grad of one that did not): `backward` then
        names them without looking, and they are distinct (`autograd.backward_of_sums`)."""
        if len(inputs) == self._tensor_inputs and (requires_grad is True or requires_grad is False):
            # (tensors only, one flag: numpy arrays and Tensors, the usual calls)
            values, named = [], self._names if requires_grad else None
            for x in inputs:
                kind = x.__class__
                if kind is _ndarray:  # (a copy: a caller writing its arrays before `backward`
                    if requires_grad and x.dtype.kind == "f":  # cannot change the gradients)
                        values.append(Tensor(_copy(x), True))
                    else:
                        values.append(Tensor(_copy(x)))
                        named = None
                elif kind is Tensor:
                    if requires_grad and not x.requires_grad and x.data.dtype.kind == "f":
                        values.append(Tensor(x.data, True))
                    else:
                        values.append(x)
                        named = None
                else:
                    break
            else:
                return values, named
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
        return values, None

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
        if requires_grad is not True and requires_grad is not False and (
                requires_grad.__class__ is list and requires_grad == self._every_flag or isinstance(
                    requires_grad, (list, tuple)) and len(requires_grad) == len(inputs) and all(requires_grad)):
            requires_grad = True  # (every input flagged: as one flag)
        train = self._train_arrays
        if train is not None and requires_grad is not False and len(inputs) == self._tensor_inputs:
            # a training call of arrays, or of Tensors that do not require grad yet: the
            # latest native plan's training program for the call's flags (None: every input),
            # when it takes the arrays (copies of those a backward reads; Tensors' arrays
            # shared, as `_prepare` shares them) - the optimized plan's, for an executor
            flags = None if requires_grad is True else _train_flags(requires_grad, len(inputs))
            # (arrays: the program copies and checks them; Tensors, `copy=None`: it checks
            # that none requires grad and shares their arrays)
            copy = True if not inputs or inputs[0].__class__ is not Tensor else None
            if flags is None and requires_grad is not True:
                got = None  # (flags it does not take: the general path checks them)
            elif GRAD_MODE.enabled:
                got = train(inputs, flags, copy)
            else:
                GRAD_MODE.enabled = True  # (a thread-local's write costs several reads)
                try:
                    got = train(inputs, flags, copy)
                finally:
                    GRAD_MODE.enabled = False
            if got is not None:
                outs, leaves = got
                self._calls.last = (leaves, _NO_PARAMETERS, outs, (), self._names) if flags is None \
                    else (leaves, _NO_PARAMETERS, outs, tuple(i for i, f in enumerate(flags) if not f), None)
                return outs
        if requires_grad is True and self.executor is not None and self.module is None and \
                not self.enum_values and len(inputs) == self._tensor_inputs:
            # a training call of an executor's Function (Tensors or arrays, every input
            # requiring grad) that its training path did not take (see above): what the
            # general path below does for it, without its cases
            values, named = self._prepare(inputs, True)
            enabled = GRAD_MODE.enabled
            if not enabled:
                GRAD_MODE.enabled = True
            try:
                outs = self.executor.run(*values)
            finally:
                if not enabled:
                    GRAD_MODE.enabled = False
            self._calls.last = (values, _NO_PARAMETERS, outs, (), named)
            return outs
        if requires_grad is False and not self.has_self and not self.enum_values:
            # a native plan (of the runner, or of the executor's optimized graph) that takes
            # the caller's arrays, and Tensors' arrays, as they are: it only reads them, and
            # without grad mode whether a Tensor requires grad changes nothing it makes
            run_arrays = getattr(self.interpreter if self.executor is None else self.executor,
                                 "run_arrays", None)
            arrays = inputs
            if run_arrays is not None and inputs and inputs[0].__class__ is Tensor:
                # (Tensors in, as the executor's callers give them; arrays go as they are)
                arrays = [x.data if x.__class__ is Tensor else x for x in inputs]
            outs = None if run_arrays is None else run_arrays(arrays, False)
            if outs is not None:
                self._calls.last = (inputs, _NO_PARAMETERS, outs, (), None)
                return outs
        values, named = self._prepare(inputs, requires_grad)
        params = _NO_PARAMETERS
        skipped = ()
        if requires_grad is not True and requires_grad is not False:
            if isinstance(requires_grad, (list, tuple)):
                skipped = tuple(i for i, flag in enumerate(requires_grad) if not flag)
                requires_grad = True  # (grad mode on: the flagged inputs and the parameters)
            else:
                requires_grad = bool(requires_grad)
        if requires_grad and self.module is not None:
            with self._params_lock:  # turns params-file arrays into the module's Tensors, once
                params = self.parameters()
                for p in params.values():
                    p.requires_grad = True
                    p.grad = None
        args = [self.module, *values] if self.has_self else values
        enabled = GRAD_MODE.enabled  # (written only when it changes: a thread-local's write
        if enabled is not requires_grad:  # costs several reads)
            GRAD_MODE.enabled = requires_grad
        token = set_enum_values(self.enum_values)
        try:
            outs = self.interpreter.run(args) if self.executor is None else self.executor.run(*args)
        finally:
            if enabled is not requires_grad:
                GRAD_MODE.enabled = enabled
            reset_enum_values(token)
        self._calls.last = (values, params, outs, skipped, named)
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
        try:
            last = self._calls.last
        except AttributeError:
            raise RuntimeError("backward() needs a call first (in this thread)") from None
        values, params, outs, skipped, named = last
        grads: Optional[list] = None  # (None: seeds of ones, which `autograd.backward` makes)
        plan = self._outputs_sums if grad_outputs is None and named is not None else None
        if plan is not None:
            got = plan(outs, values)
            if got is not None:  # (the roots found as the latest such call's were)
                return got
        if grad_outputs is None:
            roots = []
            for leaf in leaves(outs):
                if (leaf.__class__ is Tensor or isinstance(leaf, Tensor)) and leaf.requires_grad \
                        and leaf.data.dtype.kind == "f":
                    roots.append(leaf)
        else:
            roots, grads = [], []
            for i, leaf in enumerate(leaves(outs)):
                if isinstance(leaf, Tensor) and leaf.data.dtype.kind == "f":
                    g = grad_outputs[i]
                    if g is not None and leaf.requires_grad:
                        roots.append(leaf)
                        grads.append(np.asarray(g, dtype=leaf.dtype))
        got = None
        if named is not None:  # (no parameters, no input skipped; a Tensor of its own each)
            names, tensors = named, values
            got = backward_of_sums(roots, tensors) if grads is None and roots else None
            if got is not None:  # (the roots of calls like this one, found as here: tried
                self._outputs_sums = outputs_sums_plan(outs, roots, names)  # first from now on)
        else:
            names, tensors = self._named_inputs(values, params, skipped)
        if got is None:  # (formulas run on arrays, which record nothing: grad mode may stay)
            got = run_backward(roots, grads, inputs=tensors) if roots else [None] * len(tensors)
        for g in got:
            if g is None:
                return {name: (g if g is not None else np.zeros_like(t.data))
                        for name, t, g in zip(names, tensors, got)}
        return dict(zip(names, got))

    @staticmethod
    def _named_inputs(values: list, params: dict, skipped: tuple) -> tuple[list, list]:
        """The names and Tensors `backward` gives gradients for: the floating-point tensor
        inputs not `skipped`, then the parameters."""
        names, tensors = [], []
        for i, v in enumerate(values):
            if v.__class__ is not Tensor:
                if isinstance(v, np.ndarray):  # (a call without grad took the caller's arrays)
                    v = Tensor(v)
                elif not isinstance(v, Tensor):
                    continue
            if v.data.dtype.kind == "f" and i not in skipped:
                names.append(_ARG_NAMES[i] if i < len(_ARG_NAMES) else f"arg{i}")
                tensors.append(v)
        for name, v in params.items():
            if name not in names:  # (as a dict's update: an input named like a parameter)
                names.append(name)
                tensors.append(v)
            else:
                tensors[names.index(name)] = v
        return names, tensors


def _train_flags(requires_grad: Any, n: int) -> Optional[tuple[bool, ...]]:
    """Per-input flags as a training program takes them: a list or tuple of `n` bools, not
    all False (else None: the general path checks and runs the call)."""
    if requires_grad.__class__ not in (list, tuple) or len(requires_grad) != n:
        return None
    flags = tuple(bool(flag) for flag in requires_grad)
    return flags if any(flags) else None


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
