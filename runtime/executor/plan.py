"""An execution plan: an optimized graph plus the interpreter that runs it, with
DifferentiableGraph nodes run as forward/backward pairs (DifferentiableGraphOp)."""

from __future__ import annotations

import threading
from typing import Any, Callable, Optional

from irjit.compiler.ir import Graph, Node

from irjit.runtime.interpreter import Interpreter
from .differentiable_graph import DifferentiableGraphOp


def gradient_for(node: Node):
    """The Gradient of a DifferentiableGraph node: the one the autodiff pipeline recorded,
    or else differentiate its subgraph now."""
    from irjit.compiler.autodiff import differentiate
    from irjit.compiler.autodiff.side_table import get_gradient
    grad = get_gradient(node)
    return grad if grad is not None else differentiate(node.subgraph.copy())


class ExecutionPlan:
    """Runs one optimized graph. `make_executor(graph)` builds the executors for the `f` and
    `df` graphs of its DifferentiableGraph nodes (PyTorch gives each its own GraphExecutor)."""

    def __init__(self, graph: Graph, make_executor: Callable[[Graph], Any],
                 functions: Optional[dict] = None, fallback: Optional[Callable] = None,
                 bailout: Optional[Callable] = None, filename: Optional[str] = None):
        self.graph = graph
        self.make_executor = make_executor
        self.interpreter = Interpreter(graph, None, functions, filename, bailout)
        self.interpreter.subgraph_runner = self._run_subgraph
        self.interpreter.fallback = fallback
        self._ops: dict[int, DifferentiableGraphOp] = {}
        self._executors: dict[int, Any] = {}
        self._lock = threading.Lock()

    def run(self, inputs: list) -> list:
        return self.interpreter.run(inputs)

    def _executor(self, graph: Graph):
        ex = self._executors.get(id(graph))
        if ex is None:
            with self._lock:
                ex = self._executors.get(id(graph))
                if ex is None:
                    ex = self._executors[id(graph)] = self.make_executor(graph)
        return ex

    def _run_subgraph(self, interp: Interpreter, node: Node, args: list) -> list:
        if node.kind != "prim::DifferentiableGraph":
            return interp.sub_interpreter(node.attr("Subgraph")).run(args)
        op = self._ops.get(id(node))
        if op is None:
            with self._lock:
                op = self._ops.get(id(node))
                if op is None:
                    op = self._ops[id(node)] = DifferentiableGraphOp(
                        gradient_for(node), lambda g, xs: self._executor(g).run(*xs))
        return op(args)
