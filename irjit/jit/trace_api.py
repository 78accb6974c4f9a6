"""`irjit.jit.trace(fn_or_module, example_inputs)`: run it eagerly once with the tracer on and
keep what it recorded (Python control flow erased, as PyTorch's tracer erases it). A module
becomes a `TracedModule` (a ScriptModule: `.graph` with a `prim::CallMethod` per submodule call,
`.inlined_graph`, `.code`, calls through the graph executor, save/load), a function a
`ScriptFunction`. `check_trace` traces again and compares."""

from __future__ import annotations

import inspect
import warnings
from typing import Any, Callable, Optional, Union

import numpy as np

from irjit.compiler.ir import Graph
from irjit.ops.registry import NO_DEFAULT
from irjit.ops.tensor import Tensor
from irjit.runtime import autograd
from irjit.runtime.module import Module

from .module import TracedModule
from .script import ScriptFunction
from .signature import Parameter, Signature
from .trace_fixup import TracedMethods, fixup, unshaped
from .tracer import Tracer, TracerWarning, TracingError


class TracingCheckError(RuntimeError):
    """Tracing the same inputs twice gave different graphs (the trace depends on something
    other than its tensor inputs)."""


def _argument_names(fn: Callable, count: int) -> list[Optional[str]]:
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return (names + [None] * count)[:count]


def _run_tracer(fn: Union[Callable, Module], inputs: tuple) -> tuple[Tracer, TracedMethods]:
    """Run `fn(*inputs)` under a new tracer; returns it with its graph fixed up, and the
    methods the trace made on submodules."""
    module = fn if isinstance(fn, Module) else None
    body = fn.forward if module is not None else fn
    if autograd.TRACER[0] is not None:
        raise TracingError("irjit.jit.trace cannot be called while another trace is running")
    tracer = Tracer(module)
    if module is not None:
        tracer.add_input(module, "self.1")
    args = [tracer.add_input(value, name)
            for value, name in zip(inputs, _argument_names(body, len(inputs)))]
    autograd.TRACER[0] = tracer
    try:
        out = body(*args)
        tracer.set_output(out)
    finally:
        autograd.TRACER[0] = None
    methods = fixup(tracer.graph, tracer.objects if module is not None else None, tracer.type_of)
    return tracer, methods


def _signature(name: str, graph: Graph, has_self: bool) -> Signature:
    """A traced graph's signature as PyTorch's defaultSchemaFor gives it: parameters named
    after their values (`argument_<i>` when unnamed), types without shapes."""
    params = []
    for i, v in enumerate(graph.inputs[1 if has_self else 0:], start=1 if has_self else 0):
        base = v.debug_name.rsplit(".", 1)[0] if v.debug_name and "." in v.debug_name and \
            v.debug_name.rsplit(".", 1)[1].isdigit() else v.debug_name
        params.append(Parameter(base or f"argument_{i}", unshaped(v.type), NO_DEFAULT))
    ret = unshaped(graph.outputs[0].type) if len(graph.outputs) == 1 else None
    return Signature(name, params, ret)


def _traced_module(module: Module, tracer: Tracer, methods: TracedMethods) -> TracedModule:
    """The TracedModule tree of `module`: every submodule wrapped, with the methods the trace
    made for it as ScriptFunctions (callees keyed by the type names the graphs use)."""
    functions: dict[int, dict[str, ScriptFunction]] = {}

    def build(m: Module) -> TracedModule:
        type_name = str(tracer.class_type(m))
        children = {name: build(v) for name, v in m.attributes.items() if isinstance(v, Module)}
        fns = {}
        graphs = methods.methods.get(id(m), {})
        if m is module:
            graphs = {"forward": tracer.graph}
        for name, g in graphs.items():
            fns[name] = ScriptFunction(g, _signature(name, g, True), f"{type_name}.{name}", {}, m)
        functions[id(m)] = fns
        return TracedModule(m, type_name, fns, children, tracer.module_scope_names)

    root = build(module)
    by_type = {f.qualified_name: f for fns in functions.values() for f in fns.values()}
    for fns in functions.values():  # every traced method may call any other
        for f in fns.values():
            f.callees.update({q: c for q, c in by_type.items() if _calls(f.graph, q)})
    return root


def _calls(graph: Graph, qualified: str) -> bool:
    cls, _, method = qualified.rpartition(".")
    return any(n.kind == "prim::CallMethod" and str(n.inputs[0].type) == cls
               and n.attr("name") == method for n in graph.walk())


def _kinds(g: Graph) -> list[str]:
    return [n.kind for n in g.walk()]


def trace(fn: Union[Callable, Module], example_inputs: Any, check_trace: bool = True,
          check_inputs: Optional[list] = None, check_tolerance: float = 1e-5
          ) -> Union[TracedModule, ScriptFunction]:
    """Trace `fn` (a module or a function) on `example_inputs` (a tensor or a tuple of
    tensors, or of tuples or lists of them). With `check_trace`, trace again on each of
    `check_inputs` (default: the example inputs) and raise TracingCheckError if the graphs
    differ; outputs that differ from the Python function's warn `TracerWarning`."""
    inputs = example_inputs if isinstance(example_inputs, tuple) else (example_inputs,)
    traced = _build(fn, inputs)
    if check_trace:
        for check in check_inputs or [inputs]:
            _check(fn, check if isinstance(check, tuple) else (check,), traced, check_tolerance)
    return traced


def _build(fn: Union[Callable, Module], inputs: tuple) -> Union[TracedModule, ScriptFunction]:
    tracer, methods = _run_tracer(fn, inputs)
    if isinstance(fn, Module):
        return _traced_module(fn, tracer, methods)
    name = getattr(fn, "__name__", "fn").replace("<lambda>", "_lambda")
    module = getattr(fn, "__module__", None) or "__main__"
    qualified = f"__torch__.{name}" if module == "__main__" else f"__torch__.{module}.{name}"
    return ScriptFunction(tracer.graph, _signature(name, tracer.graph, False), qualified, {})


# ops whose results are random (dropout only while training: its `train` argument is True)
_NONDETERMINISTIC = {"aten::dropout", "aten::dropout_", "aten::feature_dropout",
                     "aten::alpha_dropout", "aten::bernoulli", "aten::bernoulli_", "aten::rand",
                     "aten::rand_like", "aten::randn", "aten::randn_like", "aten::randint",
                     "aten::randint_like", "aten::randperm", "aten::normal", "aten::poisson",
                     "aten::multinomial", "aten::rrelu", "aten::uniform_", "aten::normal_"}


def _nondeterministic(graph: Graph) -> list:
    out = []
    for n in graph.walk():
        if n.kind not in _NONDETERMINISTIC:
            continue
        if "dropout" in n.kind:
            train = n.inputs[2].node
            if train.kind == "prim::Constant" and not train.attr("value"):
                continue
        out.append(n)
    return out


def _check(fn, inputs: tuple, traced, tolerance: float) -> None:
    random = _nondeterministic(traced.inlined_graph)
    if random:
        warnings.warn("Trace had nondeterministic nodes. Did you forget call .eval() on your "
                      "model? Nodes:\n" + "\n".join(f"\t{n!r}" for n in random) +
                      "\nThis may cause errors in trace checking. To disable trace checking, "
                      "pass check_trace=False to irjit.jit.trace()", TracerWarning, stacklevel=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        again = _build(fn, inputs)
        if _kinds(again.inlined_graph) != _kinds(traced.inlined_graph):
            raise TracingCheckError("Tracing failed sanity checks: the graph differs across "
                                    f"invocations:\n{traced.inlined_graph}\nthen\n"
                                    f"{again.inlined_graph}")
        expected, got = fn(*inputs), traced(*inputs)
    exp = expected if isinstance(expected, (tuple, list)) else (expected,)
    out = got if isinstance(got, (tuple, list)) else (got,)
    for i, (e, o) in enumerate(zip(_flat(exp), _flat(out))):
        if not np.allclose(np.asarray(e.data), np.asarray(o.data), rtol=tolerance, atol=tolerance):
            warnings.warn(f"Output nr {i + 1}. of the traced function does not match the "
                          "corresponding output of the Python function", TracerWarning,
                          stacklevel=3)


def _flat(values) -> list:
    out = []
    for v in values:
        if isinstance(v, (tuple, list)):
            out.extend(_flat(v))
        elif isinstance(v, Tensor):
            out.append(v)
    return out


__all__ = ["TracedModule", "TracingCheckError", "trace"]
