"""An execution plan: an optimized graph plus the runner that executes it, with
DifferentiableGraph nodes run as forward/backward pairs (DifferentiableGraphOp).

The runner comes from the `backend` setting, through a registry of runner factories
(`register_backend(name, factory)`; "interp" is built in, code generation adds "native").
A factory is called once per plan with a `RunnerContext` and returns a runner:

- `RunnerContext.graph` is the optimized graph to run (the runner must not change it);
  `functions` maps names to graphs for `prim::CallFunction`/`prim::CallMethod`; `filename`
  names the graph in errors;
- `run_subgraph(runner, node, args) -> outputs` runs a `prim::DifferentiableGraph` (or other
  subgraph node) through the plan, so its `f` and `df` get executors of their own;
  `subgraph_op(node)` is the op it runs a DifferentiableGraph with, which a runner may call
  itself (`op(args) -> outputs`);
- `fallback(fn, args) -> outputs` runs the fallback function of a failed 2.x guard, and
  `bailout(runner, node, args, env)` handles a failing `prim::BailOut` (it raises to resume
  elsewhere); both belong to the executor that made the plan and may be None.

A runner has `graph` and `run(inputs) -> outputs` (one value per graph input and output). A
runner whose entry guards reject the inputs (shapes, strides, dtypes it was not compiled for)
raises `EntryGuardFailed` from `run` before doing any work: the plan then runs those inputs
through the interpreter (counted in `COUNTERS.bailouts`), so the executor falls back per call.
The `f` and `df` graphs of DifferentiableGraphs reach runners as plans of their own, run with
grad mode off (DifferentiableGraphOp records their backward); anywhere else the interpreter
records ops on the autograd tape when grad mode is on, so a runner that cannot must reject
inputs that require grad with `EntryGuardFailed`.
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass
from typing import Any, Callable, Optional, Protocol

from irjit.compiler.ir import Graph, Node
from irjit.compiler.settings import ExecutorSettings, get_settings

from irjit.runtime.interpreter import Interpreter
from .counters import COUNTERS
from .differentiable_graph import DifferentiableGraphOp


class EntryGuardFailed(Exception):
    """Raised by a runner's `run` when its inputs fail the checks it was compiled under."""


@dataclass(frozen=True)
class RunnerContext:
    """Everything a runner factory gets: the graph and the executor's hooks."""
    graph: Graph
    functions: dict
    filename: Optional[str]
    run_subgraph: Callable[[Any, Node, list], list]
    fallback: Optional[Callable[[Any, list], list]] = None
    bailout: Optional[Callable] = None
    # `subgraph_op(node)`: what `run_subgraph` calls for a DifferentiableGraph node (`op(args)
    # -> outputs`), for runners that call it directly; None for other nodes
    subgraph_op: Optional[Callable[[Node], Optional[Callable[[list], list]]]] = None


class Runner(Protocol):
    graph: Graph

    def run(self, inputs: list) -> list: ...


def _interpreter_runner(ctx: RunnerContext) -> Interpreter:
    return Interpreter(ctx.graph, None, ctx.functions, ctx.filename, ctx.bailout,
                       fallback=ctx.fallback, subgraph_runner=ctx.run_subgraph)


_BACKENDS: dict[str, Callable[[RunnerContext], Runner]] = {"interp": _interpreter_runner}


def register_backend(name: str, factory: Callable[[RunnerContext], Runner]) -> None:
    """Make `factory(context) -> runner` available as the `backend` setting `name`."""
    if name in _BACKENDS and _BACKENDS[name] is not factory:
        raise ValueError(f"backend {name!r} is already registered")
    _BACKENDS[name] = factory


def backend_names() -> list[str]:
    return sorted(_BACKENDS)


def runner_factory(name: str) -> Callable[[RunnerContext], Runner]:
    """The factory registered as `name`; an unknown name is an error listing the valid ones
    (the name may come from the IRJIT_BACKEND environment variable)."""
    try:
        return _BACKENDS[name]
    except KeyError:
        raise ValueError(f"unknown backend {name!r} (valid backends: "
                         f"{', '.join(backend_names())}; set by set_backend or IRJIT_BACKEND)"
                         ) from None


def set_backend(name: str) -> str:
    """Choose the backend of plans made from now on; returns the previous one."""
    from irjit.compiler.settings import update_settings
    runner_factory(name)
    return update_settings(backend=name).backend


def gradient_for(node: Node):
    """The Gradient of a DifferentiableGraph node: the one the autodiff pipeline recorded,
    or else differentiate its subgraph now."""
    from irjit.compiler.autodiff import differentiate
    from irjit.compiler.autodiff.gradient import unpack_gradient
    grad = unpack_gradient(node)
    return grad if grad is not None else differentiate(node.subgraph.copy())


class ExecutionPlan:
    """Runs one optimized graph with the runner the `backend` setting names. `make_executor(graph)`
    builds the executors for the `f` and `df` graphs of its DifferentiableGraph nodes (PyTorch
    gives each its own GraphExecutor)."""

    def __init__(self, graph: Graph, make_executor: Callable[[Graph], Any],
                 functions: Optional[dict] = None, fallback: Optional[Callable] = None,
                 bailout: Optional[Callable] = None, filename: Optional[str] = None,
                 settings: Optional[ExecutorSettings] = None):
        self.graph = graph
        self.make_executor = make_executor
        self.backend = (settings or get_settings()).backend
        self.context = RunnerContext(graph, functions or {}, filename, self._run_subgraph,
                                     fallback, bailout, self._subgraph_op)
        self.runner = runner_factory(self.backend)(self.context)
        # `run_arrays(arrays, raw)` of runners that take inputs' arrays as they are (native)
        self.run_arrays = getattr(self.runner, "run_arrays", None)
        self._interpreter: Optional[Interpreter] = None
        self._ops: dict[int, DifferentiableGraphOp] = {}
        self._executors: dict[int, Any] = {}
        self._lock = threading.RLock()  # (making an op makes its graphs' executors)

    def run(self, inputs: list) -> list:
        try:
            return self.runner.run(inputs)
        except EntryGuardFailed:
            COUNTERS.inc("bailouts")
            return self._fallback_interpreter().run(inputs)

    def runner_stats(self) -> list:
        """The statistics objects (`line()`, `add`, `copy`: the native backend's units, nodes,
        compile time, cache hits, bailouts) of this plan's runner and of the executors of its
        DifferentiableGraphs' f and df."""
        stats = getattr(self.runner, "stats", None)
        found = [stats] if stats is not None and hasattr(stats, "line") else []
        for ex in list(self._executors.values()):
            found.extend(ex.runner_stats() if hasattr(ex, "runner_stats") else [])
        return found


    def _fallback_interpreter(self) -> Interpreter:
        with self._lock:
            if self._interpreter is None:
                self._interpreter = _interpreter_runner(self.context)
        return self._interpreter

    def _executor(self, graph: Graph):
        ex = self._executors.get(id(graph))
        if ex is None:
            with self._lock:
                ex = self._executors.get(id(graph))
                if ex is None:
                    ex = self._executors[id(graph)] = self.make_executor(graph)
        return ex

    def _run_subgraph(self, interp: Interpreter, node: Node, args: list) -> list:
        op = self._subgraph_op(node)
        return interp.sub_interpreter(node.attr("Subgraph")).run(args) if op is None else op(args)

    def _subgraph_op(self, node: Node) -> Optional[DifferentiableGraphOp]:
        """The op running a DifferentiableGraph node (made on first use); None for others."""
        if node.kind != "prim::DifferentiableGraph":
            return None
        op = self._ops.get(id(node))
        if op is None:
            with self._lock:
                op = self._ops.get(id(node))
                if op is None:
                    op = DifferentiableGraphOp(gradient_for(node),
                                               lambda g, xs: self._executor(g).run(*xs),
                                               self._arrays_runner)
                    # a backward run leaves the forward's graph the one last executed, and the
                    # executor running this plan records its graph after f's ran
                    self._executor(op.gradient.df).shows_last = False
                    f = self._executor(op.gradient.f)
                    f.shows_last = f.counts_runs = False  # (see ProfilingGraphExecutor)
                    self._ops[id(node)] = op
        return op

    def _arrays_runner(self, graph: Graph) -> Optional[Any]:
        """`graph`'s executor when it runs arrays (its `raw_call(arrays)`: outputs for arrays,
        without gradients, when its plan takes them as they are; else None), or None."""
        ex = self._executor(graph)
        return ex if hasattr(ex, "raw_call") else None


def stats_summary(stats: list) -> str:
    """One line summing runner statistics ("" when there are none)."""
    if not stats:
        return ""
    total = stats[0].copy()
    for s in stats[1:]:
        total.add(**asdict(s))
    return total.line()
