"""The legacy graph executor (PyTorch's GraphExecutorImpl): a plan per ArgumentSpec, compiled
on a miss by specializing the graph's input types and running the `autodiff` pipeline."""

from __future__ import annotations

import threading
from typing import Any, Optional

from irjit.compiler.ir import Graph

from irjit.runtime.autograd import is_grad_enabled
from .argument_spec import (argument_spec, executor_inputs, attribute_nodes, attribute_values,
                            module_attribute_paths, specialized_type)
from .counters import COUNTERS, count_invocation, record_last_executed
from .plan import ExecutionPlan, stats_summary
from irjit.compiler.settings import ExecutorSettings, get_settings


def run_autodiff_pipeline(graph: Graph, settings: ExecutorSettings, grad_enabled: bool = True) -> None:
    """Optimize `graph` in place the way compileSpec does (autodiff only where some input,
    as specialized, requires grad)."""
    from irjit.compiler.passes.autodiff_pipeline import autodiff
    node_threshold, inline_threshold = settings.autodiff_thresholds()
    autodiff(graph, node_threshold=node_threshold, inline_threshold=inline_threshold,
             grad_enabled=grad_enabled)


class LegacyGraphExecutor:
    """Plan cache keyed on ArgumentSpec; counters for hits and misses; thread safe (one
    compilation per spec, however many threads ask at once)."""

    shows_last = True  # whether a run records its graph as `last_executed_optimized_graph()`
    # (not a backward graph's executor, nor the executors it makes: see ExecutionPlan)
    counts_runs = True  # whether a run counts as an invocation (see ProfilingGraphExecutor)

    def __init__(self, graph: Graph, optimize: bool = True, functions: Optional[dict] = None,
                 settings: Optional[ExecutorSettings] = None):
        self.graph = graph
        self.optimize = optimize
        self.functions = functions or {}
        self.settings = settings or get_settings()
        self.plans: dict[tuple, ExecutionPlan] = {}
        self.attr_paths = module_attribute_paths(graph)
        self.hits = self.misses = 0
        self.last_graph: Optional[Graph] = None  # what this executor's latest run executed
        self._lock = threading.Lock()
        self._compiling: dict[tuple, threading.Lock] = {}
        COUNTERS.inc("executors_constructed")

    def _spec(self, inputs: list) -> tuple:
        values = list(inputs) + attribute_values(inputs, self.attr_paths)
        return argument_spec(values, is_grad_enabled())

    def _compile(self, inputs: list, spec: tuple) -> ExecutionPlan:
        g = self.graph.copy()
        if self.optimize:
            n_inputs = len(g.inputs)
            for v, s in zip(g.inputs, spec[1]):
                v.type = specialized_type(v.type, s)
            for path, s in zip(self.attr_paths, spec[1][n_inputs:]):
                for node in attribute_nodes(g, path):
                    node.outputs[0].type = specialized_type(node.outputs[0].type, s)
            run_autodiff_pipeline(g, self.settings, grad_enabled=spec[0])
        return ExecutionPlan(g, self._make_child, self.functions, settings=self.settings)

    def _make_child(self, graph: Graph) -> "LegacyGraphExecutor":
        child = LegacyGraphExecutor(graph, self.optimize, self.functions, self.settings)
        child.shows_last = self.shows_last
        return child

    def plan_for(self, inputs: list, count: bool = True) -> ExecutionPlan:
        """The plan for these inputs, compiled on first use of their ArgumentSpec."""
        spec = self._spec(inputs)
        plan = self.plans.get(spec)
        if plan is not None:
            if count:
                with self._lock:
                    self.hits += 1
                COUNTERS.inc("cache_hits")
            return plan
        with self._lock:
            lock = self._compiling.setdefault(spec, threading.Lock())
        with lock:
            plan = self.plans.get(spec)
            if plan is None:
                plan = self._compile(inputs, spec)
                with self._lock:
                    self.plans[spec] = plan
                    self.misses += 1
                COUNTERS.inc("cache_misses")
            elif count:
                with self._lock:
                    self.hits += 1
                COUNTERS.inc("cache_hits")
        return plan

    def run(self, *inputs: Any) -> list:
        if self.counts_runs:
            count_invocation()
        inputs = executor_inputs(self.graph, inputs)
        plan = self.plan_for(inputs)
        outs = plan.run(inputs)
        self.last_graph = plan.graph
        if self.shows_last:  # after running, as PyTorch does: nested executors ran first
            record_last_executed(plan.graph)
        return outs

    def graph_for(self, *inputs: Any) -> Graph:
        """The optimized graph these inputs run (compiled if needed; nothing is counted)."""
        return self.plan_for(executor_inputs(self.graph, inputs), count=False).graph

    def debug_state(self) -> str:
        parts = [f"LegacyGraphExecutor: {len(self.plans)} plan(s), {self.hits} hit(s), "
                 f"{self.misses} miss(es)"]
        for spec, plan in self.plans.items():
            parts.append(f"# plan for {describe_spec(spec)}\n{plan.graph}")
        stats = stats_summary(self.runner_stats())
        if stats:
            parts[0] += f"; {stats}"
        return "\n".join(parts)

    def runner_stats(self) -> list:
        """Each plan's runner statistics (and its DifferentiableGraphs' executors')."""
        return [s for plan in list(self.plans.values()) for s in plan.runner_stats()]


def describe_spec(spec: tuple) -> str:
    grad, specs = spec
    items = []
    for s in specs:
        if s is None:
            items.append("-")
        elif not s[0]:
            items.append("undefined")
        else:
            items.append(f"{s[1]}[rank {s[2]}{', requires_grad' if s[3] else ''}]")
    return f"grad={'on' if grad else 'off'} (" + ", ".join(items) + ")"
