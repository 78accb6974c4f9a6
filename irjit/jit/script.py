"""`irjit.jit.script(fn)`: compile a Python function's source into a `ScriptFunction` whose
graph runs through the graph executor (profiling by default: autodiff and native code)."""

from __future__ import annotations

import ast
import inspect
import textwrap
import threading
from typing import Any, Optional

import numpy as np

from irjit.compiler.ir import Graph, SourceLocation
from irjit.compiler.passes import get_pass
from irjit.compiler.python_printer import FunctionHeader, print_function
from irjit.ops.registry import NO_DEFAULT
from irjit.ops.tensor import Tensor
from irjit.runtime.module import Module as RuntimeModule
from irjit.runtime.nn_modules import BUILTIN_FORWARDS

from .builtin_modules import builtin_children, builtin_forward, builtin_signature
from .emitter import FunctionEmitter
from .signature import Signature
from .errors import ScriptError

_COMPILED: dict[Any, "ScriptFunction"] = {}
_IN_PROGRESS: set = set()
_LOCK = threading.RLock()


class ScriptFunction:
    """A compiled function: `.graph` as PyTorch prints it (calls to other scripted functions
    as `prim::CallFunction`), `.inlined_graph`, `.code`, and calls through a graph executor."""

    def __init__(self, graph: Graph, signature: Signature, qualified_name: str,
                 callees: dict[str, "ScriptFunction"], module: Optional[RuntimeModule] = None):
        self.graph = graph
        self.signature = signature
        self.name = signature.name
        self.qualified_name = qualified_name
        self.callees = callees  # by function name, or "<class>.<method>" for methods
        self.module = module  # the instance a method was compiled for
        self._executor = None
        self._lock = threading.Lock()

    @property
    def inlined_graph(self) -> Graph:
        """The graph with every callee inlined (what the executor runs); each callee's body is
        its `optimized_graph`, as PyTorch's Inline takes it."""
        g = self.graph.copy()
        get_pass("inline").run(g, functions={n: f.optimized_graph for n, f in self.callees.items()})
        return g

    @property
    def optimized_graph(self) -> Graph:
        """PyTorch's `GraphFunction::optimized_graph` (its preoptimizeGraph): the inlined graph
        after peephole (without shape peepholes), constant propagation of immutable types and
        constant pooling; what a caller's inlining inserts."""
        g = self.inlined_graph
        get_pass("peephole").run(g, disable_shape_peepholes=True)
        get_pass("constant_propagation_immutable_types").run(g)
        get_pass("constant_pooling").run(g)
        return g

    @property
    def code(self) -> str:
        """The TorchScript-style Python source PyTorch's `.code` prints for this function."""
        header = FunctionHeader(self.name, [(p.name, p.type, p.default) for p in self.signature.params],
                                self.signature.return_type,
                                self.graph.inputs[0].type if self.module is not None else None)
        qualified = {n: f.qualified_name for n, f in self.callees.items()}
        return print_function(self.graph, header, qualified)

    @property
    def executor(self):
        with self._lock:
            if self._executor is None:
                from irjit.runtime.executor import GraphExecutor
                graph = self.inlined_graph  # types without shapes, as PyTorch's prepareGraph
                get_pass("erase_shape_information").run(graph)  # (a trace's sizes vary)
                self._executor = GraphExecutor(graph)
            return self._executor

    def bind(self, args: tuple, kwargs: dict) -> list:
        """The call's arguments in parameter order, defaults filled in."""
        params = self.signature.params
        if len(args) > len(params):
            raise TypeError(f"{self.name}() takes {len(params)} arguments but {len(args)} were given")
        values = list(args)
        for p in params[len(args):]:
            if p.name in kwargs:
                values.append(kwargs.pop(p.name))
            elif p.default is not NO_DEFAULT:
                values.append(p.default)
            else:
                raise TypeError(f"{self.name}() missing argument {p.name!r}")
        if kwargs:
            raise TypeError(f"{self.name}() got an unexpected keyword argument {next(iter(kwargs))!r}")
        return values

    def __call__(self, *args, **kwargs):
        outs = self.executor.run(*[_runtime_value(a) for a in self.bind(args, dict(kwargs))])
        return outs[0] if len(outs) == 1 else tuple(outs)

    def graph_for(self, *args, **kwargs) -> Graph:
        """The optimized graph the executor runs for these arguments (PyTorch's `graph_for`)."""
        return self.executor.graph_for(*[_runtime_value(a) for a in self.bind(args, dict(kwargs))])

    def __repr__(self) -> str:
        return f"<irjit.jit.ScriptFunction {self.qualified_name}>"


def _runtime_value(x: Any) -> Any:
    """Arrays inside lists, tuples and dicts as the runtime's Tensors (top-level arrays the
    executor converts itself)."""
    if isinstance(x, np.ndarray):
        return Tensor(x)
    if isinstance(x, list):
        return [_runtime_value(e) for e in x]
    if isinstance(x, tuple):
        return tuple(_runtime_value(e) for e in x)
    if isinstance(x, dict):
        return {k: _runtime_value(v) for k, v in x.items()}
    return x


def _function_def(fn) -> tuple[ast.FunctionDef, str, int, int]:
    try:
        lines, first = inspect.getsourcelines(fn)
        filename = inspect.getsourcefile(fn) or "<unknown>"
    except (OSError, TypeError) as e:
        raise TypeError(f"irjit.jit.script needs the source of {fn!r}: {e}") from None
    text = "".join(lines)
    dedented = textwrap.dedent(text)
    indent = len(text.splitlines()[0]) - len(dedented.splitlines()[0])
    tree = ast.parse(dedented)
    fn_def = tree.body[0]
    if not isinstance(fn_def, ast.FunctionDef):
        raise ScriptError("expected a function definition", SourceLocation(filename, first, 0))
    return fn_def, filename, first - 1, indent


def script_function(fn) -> ScriptFunction:
    """Compile a Python function (annotated as TorchScript expects; unannotated parameters are
    Tensors) into a ScriptFunction; a ScriptFunction is returned as it is."""
    if isinstance(fn, ScriptFunction):
        return fn
    if not inspect.isfunction(fn):
        raise TypeError(f"irjit.jit.script expects a Python function or a module, got "
                        f"{type(fn).__name__}")
    return _compile(fn, None)


def compile_method(module: RuntimeModule, name: str, call_node) -> Optional[ScriptFunction]:
    """The method `name` of `module` compiled for this instance (attribute types come from its
    values); for a built-in torch.nn module the forward PyTorch's inlined graphs show, or None
    when irjit has no graph for it (the runtime's built-in forward then runs the call)."""
    fn = getattr(type(module), name, None)
    if name == "forward" and module.class_name in BUILTIN_FORWARDS and \
            module.qualified_name.startswith("__torch__.torch.nn."):
        graph = builtin_forward(module)
        if graph is None:
            return None
        callees = {}
        for child in builtin_children(module):  # a Sequential calls its modules in order
            compiled = compile_method(child, "forward", call_node)
            if compiled is not None:
                callees[f"{child.qualified_name}.forward"] = compiled
        return ScriptFunction(graph, builtin_signature(module), f"{module.qualified_name}.forward",
                              callees, module)
    if not inspect.isfunction(fn):
        raise TypeError(f"{module.qualified_name} has no method {name!r} to script")
    return _compile(fn, module)


def _compile(fn, module: Optional[RuntimeModule]) -> ScriptFunction:
    key = fn if module is None else (id(module), fn)
    with _LOCK:
        cached = _COMPILED.get(key)
        if cached is not None and (module is None or cached.module is module):
            return cached
        fn_def, filename, line_offset, col_offset = _function_def(fn)
        if key in _IN_PROGRESS:
            raise ScriptError(f"{fn.__name__} calls itself: recursion is not supported",
                              SourceLocation(filename, line_offset + 1, 0))
        _IN_PROGRESS.add(key)
        callees: dict[str, ScriptFunction] = {}

        def compile_callee(target, call_node):
            callee = script_function(target)
            callees[callee.name] = callee
            return callee

        def compile_member(owner, method, call_node):
            compiled = compile_method(owner, method, call_node)
            if compiled is not None:
                callees[f"{owner.qualified_name}.{method}"] = compiled
            return compiled
        try:
            emitter = FunctionEmitter(fn_def, filename, line_offset, col_offset, fn.__globals__,
                                      compile_callee, module, compile_member)
            graph, signature = emitter.emit()
        finally:
            _IN_PROGRESS.discard(key)
        if module is None:
            qualified = f"__torch__.{fn.__module__}.{fn.__qualname__}".replace(".<locals>", "")
        else:
            qualified = f"{module.qualified_name}.{fn.__name__}"
        compiled = ScriptFunction(graph, signature, qualified, callees, module)
        _COMPILED[key] = compiled
        return compiled


__all__ = ["ScriptFunction", "compile_method", "script_function"]
