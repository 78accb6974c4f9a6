"""`irjit.jit.trace(fn_or_module, example_inputs)`: run it eagerly once with the tracer on and
keep the recorded graph (Python control flow erased, as PyTorch's tracer erases it); the result
calls that graph through the graph executor. `check_trace` traces again and compares."""

from __future__ import annotations

import inspect
import warnings
from typing import Any, Callable, Union

import numpy as np

from irjit.compiler.ir import Graph
from irjit.compiler.passes.eliminate_dead_code import eliminate_dead_code
from irjit.ops.tensor import Tensor
from irjit.ops.types import ClassType
from irjit.runtime import autograd
from irjit.runtime.executor import GraphExecutor
from irjit.runtime.module import Module

from .tracer import Tracer, TracingError


class TracingCheckError(RuntimeError):
    """Tracing the same inputs twice gave different graphs or outputs (the trace depends on
    something other than its tensor inputs)."""


class TracedFunction:
    """A traced function or module: `.graph` (the inlined traced graph, nodes with their module
    scopes), calls run that graph through the graph executor with the module as `%self`."""

    def __init__(self, graph: Graph, module: Union[Module, None],
                 module_scope_names: Union[dict, None] = None):
        self.graph, self.module = graph, module
        self.executor = GraphExecutor(graph)
        self._module_scope_names = module_scope_names or {}

    def legacy_scope_name(self, node) -> str:
        """The node's scope in the 2017 tracer's form, `Net/Sequential[layer1]/Linear[0]`: the
        traced module's class, then `Class[attribute]` per submodule call, user scopes as named."""
        names, s = [], node.scope
        while s.parent is not None:
            names.append(self._module_scope_names.get(s, s.name))
            s = s.parent
        if self.module is not None:
            names.append(type(self.module).__name__)
        return "/".join(reversed(names))

    @property
    def inlined_graph(self) -> Graph:
        return self.graph

    def __call__(self, *args: Any) -> Any:
        inputs = ([self.module] if self.module is not None else []) + list(args)
        outs = self.executor.run(*inputs)
        return outs[0] if len(outs) == 1 else tuple(outs)


def _argument_names(fn: Callable, count: int) -> list[str]:
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return (names + [f"input.{i}" for i in range(len(names), count)])[:count]


def trace_graph(fn: Union[Callable, Module], example_inputs: tuple) -> Graph:
    """The graph of the ops `fn(*example_inputs)` runs."""
    return _run_tracer(fn, example_inputs).graph


def _run_tracer(fn: Union[Callable, Module], example_inputs: tuple) -> Tracer:
    """The tracer after `fn(*example_inputs)` ran under it (its graph dead-code eliminated)."""
    if isinstance(example_inputs, Tensor):
        example_inputs = (example_inputs,)
    module = fn if isinstance(fn, Module) else None
    body = fn.forward if module is not None else fn
    if autograd.TRACER[0] is not None:
        raise TracingError("irjit.jit.trace cannot be called while another trace is running")
    tracer = Tracer(module)
    if module is not None:
        tracer.add_input(module, "self.1")
    for value, name in zip(example_inputs, _argument_names(body, len(example_inputs))):
        tracer.add_input(value, name)
    autograd.TRACER[0] = tracer
    try:
        out = body(*example_inputs)
    finally:
        autograd.TRACER[0] = None
    tracer.set_output(out)
    _eliminate_dead_ops(tracer.graph)
    return tracer


def _eliminate_dead_ops(graph: Graph) -> None:
    """Drop ops whose results only decided Python control flow, as PyTorch's tracer does; a
    submodule's `prim::GetAttr` stays even when its call recorded nothing (PyTorch's traced
    graph calls it), so those are held as outputs while the pass runs."""
    held = [n.output for n in graph.nodes()
            if n.kind == "prim::GetAttr" and isinstance(n.output.type, ClassType)]
    first = len(graph.outputs)
    for v in held:
        graph.register_output(v)
    eliminate_dead_code(graph)
    for _ in held:
        graph.erase_output(first)


def _kinds(g: Graph) -> list[str]:
    return [n.kind for n in g.nodes()]


def trace(fn: Union[Callable, Module], example_inputs: Any, check_trace: bool = True) -> TracedFunction:
    """Trace `fn` on `example_inputs` (a tensor or a tuple of them)."""
    inputs = example_inputs if isinstance(example_inputs, tuple) else (example_inputs,)
    tracer = _run_tracer(fn, inputs)
    traced = TracedFunction(tracer.graph, fn if isinstance(fn, Module) else None,
                            tracer.module_scope_names)
    if check_trace:
        _check(fn, inputs, traced)
    return traced


def _check(fn, inputs: tuple, traced: TracedFunction) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        again = trace_graph(fn, inputs)
    if _kinds(again) != _kinds(traced.graph):
        raise TracingCheckError("Tracing failed sanity checks: the graph differs across "
                                f"invocations:\n{traced.graph}\nthen\n{again}")
    expected, got = fn(*inputs), traced(*inputs)
    exp = expected if isinstance(expected, tuple) else (expected,)
    out = got if isinstance(got, tuple) else (got,)
    for e, o in zip(exp, out):
        if not np.allclose(np.asarray(e.data), np.asarray(o.data), rtol=1e-5, atol=1e-5):
            raise TracingCheckError("Tracing failed sanity checks: the traced graph's outputs "
                                    "differ from the Python function's on the example inputs")
