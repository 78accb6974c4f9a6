"""The profiling executor (PyTorch's ProfilingGraphExecutorImpl): the first runs execute the
graph instrumented with `prim::profile` nodes that record observed types; then the graph is
specialized behind guards and optimized (autodiff included). A failing guard continues in
the unoptimized code — a fallback function (2.x guards) or the BailoutTemplate graph
(BailOut guards) — and is counted; each fallback is itself a profiling executor with one
less re-specialization left, so a shape-changing workload stops compiling after
`bailout_depth` levels and then runs unoptimized.
"""

from __future__ import annotations

import threading
from typing import Any, Optional

from irjit.compiler.ir import Graph, Node
from irjit.ops.tensor import Tensor

from irjit.runtime.autograd import is_grad_enabled
from irjit.runtime.interpreter import Interpreter, _BailOut
from irjit.runtime.profiling import ProfilingInterpreter
from .argument_spec import attribute_values, executor_inputs, module_attribute_paths
from .counters import COUNTERS, LAST_EXECUTED, count_invocation, record_last_executed
from .plan import ExecutionPlan, stats_summary
from .profiling_pipeline import (needs_gradient, optimize_profiled, profiled_types,
                                 profiling_insensitive)
from irjit.compiler.settings import ExecutorSettings, get_settings


class ProfilingGraphExecutor:
    """Profile for `num_profiled_runs` runs, then run an optimized, guarded plan."""

    shows_last = True  # whether a run records its graph as `last_executed_optimized_graph()`
    # (not a backward graph's executor, nor the executors it makes: see ExecutionPlan)
    # whether a run counts as an invocation: not a DifferentiableGraph's f's, whose plan
    # PyTorch's op takes with `getPlanFor` and runs itself (only `GraphExecutor::run` counts)
    counts_runs = True

    def __init__(self, graph: Graph, optimize: bool = True, functions: Optional[dict] = None,
                 settings: Optional[ExecutorSettings] = None,
                 remaining_depth: Optional[int] = None):
        self.graph = graph
        self.optimize = optimize
        self.functions = functions or {}
        self.settings = settings or get_settings()
        self.remaining_depth = self.settings.bailout_depth if remaining_depth is None \
            else remaining_depth
        self.profiled_graph: Optional[Graph] = None
        self.profiling_runs_left = self.settings.num_profiled_runs
        self.profiling_interpreter: Optional[Interpreter] = None
        self.optimized_plan: Optional[ExecutionPlan] = None
        self.simple_plan: Optional[ExecutionPlan] = None
        self.fallbacks: dict[Node, Graph] = {}
        self._fallback_executors: dict[int, ProfilingGraphExecutor] = {}
        self._unguarded: dict[int, Graph] = {}
        self._template_interpreters: dict[int, Interpreter] = {}
        self.bailouts = 0
        self.last_graph: Optional[Graph] = None  # what this executor's latest run executed
        self.plan_needs_gradient = False  # whether the optimized plan was built for gradients
        self._bails_out = False  # whether the optimized graph has prim::BailOut guards
        self._profiled_with_gradient = False  # whether a profiled call needed gradients
        self._attr_paths = module_attribute_paths(graph)
        self._lock = threading.RLock()
        # `run_arrays(arrays)` as fast as this executor can make it: at first that method, then
        # (see `_direct`) the call of the native plan that took the latest arrays
        self.raw_call = self.run_arrays
        self._train_program = None  # `train_arrays`' program of the latest such call, tried first
        COUNTERS.inc("executors_constructed")

    # ---- plans
    def _make_child(self, graph: Graph) -> "ProfilingGraphExecutor":
        child = ProfilingGraphExecutor(graph, self.optimize, self.functions, self.settings)
        child.shows_last = self.shows_last
        return child

    def _unoptimized_plan(self) -> ExecutionPlan:
        """Depth exhausted or optimization off: the graph after profiling-insensitive passes."""
        if self.simple_plan is None:
            g = self.graph.copy()
            if self.optimize:
                profiling_insensitive(g)
            self.simple_plan = ExecutionPlan(g, self._make_child, self.functions,
                                             settings=self.settings)
        return self.simple_plan

    def _profiling_interpreter(self) -> Interpreter:
        if self.profiling_interpreter is None:
            from irjit.compiler.passes import get_pass
            g = self.graph.copy()
            profiling_insensitive(g)
            get_pass("insert_profiling").run(g)
            self.profiled_graph = g
            self.profiling_interpreter = ProfilingInterpreter(g, functions=self.functions)
        return self.profiling_interpreter

    def _build_optimized(self) -> ExecutionPlan:
        g = self.profiled_graph.copy()
        # copy() renumbers values and does not carry the profile attributes' identity issues
        node_threshold, inline_threshold = self.settings.autodiff_thresholds()
        self.plan_needs_gradient = self._profiled_with_gradient or needs_gradient(
            profiled_types(g), is_grad_enabled())
        self.fallbacks = optimize_profiled(g, node_threshold, inline_threshold,
                                           self.settings.guard_style, is_grad_enabled())
        self._bails_out = any(n.kind == "prim::BailOut" for n in g.walk())
        plan = ExecutionPlan(g, self._make_child, self.functions,
                             fallback=self._run_fallback, bailout=self._bailout,
                             settings=self.settings)
        COUNTERS.inc("specializations")
        return plan

    def _plan(self):
        """The plan for the next run: ('profile', interpreter) or ('run', plan)."""
        plan = self.optimized_plan  # (once made, it stays: no lock needed to read it)
        if plan is not None and self.optimize and self.remaining_depth > 0:
            return "run", plan
        with self._lock:
            if not self.optimize or self.remaining_depth <= 0:
                return "run", self._unoptimized_plan()
            if self.optimized_plan is not None:
                return "run", self.optimized_plan
            interp = self._profiling_interpreter()
            if self.profiling_runs_left > 0:
                self.profiling_runs_left -= 1
                return "profile", interp
            self.optimized_plan = self._build_optimized()
            return "run", self.optimized_plan

    # ---- running
    def run(self, *inputs: Any) -> list:
        if self.counts_runs:
            count_invocation()
        inputs = executor_inputs(self.graph, inputs)
        runner = self.optimized_plan  # (`_plan`'s first test, without its call)
        if runner is not None and self.optimize and self.remaining_depth > 0:
            what = "run"
        else:
            what, runner = self._plan()
        if what == "profile":
            COUNTERS.inc("profiled_runs")
            self._profiled_with_gradient |= self._call_needs_gradient(inputs)
            with self._lock:  # profile recording writes node attributes
                outs = runner.run(list(inputs))
            self.last_graph = runner.graph
            if self.shows_last:
                record_last_executed(runner.graph)
            return outs
        if runner is self.optimized_plan and self._needs_gradient_plan(inputs):
            self._count_bailout()
            fallback = self._fallback_executor(self.graph)
            outs = fallback.run(*inputs)
            self.last_graph = fallback.last_graph
            return outs
        try:
            outs = runner.run(list(inputs))
        except _BailOut as b:
            outs = self._resume_after_bailout(b, list(inputs))
        self.last_graph = runner.graph
        if self.shows_last:
            record_last_executed(runner.graph)
        return outs

    def run_arrays(self, arrays: list, raw: bool = True) -> Optional[list]:
        """`run` of a call without gradients whose tensor inputs are numpy arrays, when the
        optimized plan's runner takes them as they are (a native straight plan's array
        program: see `NativeRunner.run_arrays`; with `raw`, outputs its units made may stay
        arrays); else None, having counted and run nothing (then wrap them in Tensors and
        `run`)."""
        plan = self.optimized_plan
        if plan is None or plan.run_arrays is None or not self.optimize or self.remaining_depth <= 0:
            return None
        call = getattr(plan.runner, "raw_arrays", None) if raw else None  # (without lookups)
        outs = call(arrays) if call is not None else plan.run_arrays(arrays, raw)
        if outs is not None:
            if self.counts_runs:
                count_invocation()
            graph = self.last_graph = plan.graph
            if self.shows_last:
                record_last_executed(graph)
            elif call is not None:
                self.raw_call = self._direct(call, graph)
        return outs

    def _direct(self, call, graph: Graph):
        """`run_arrays(arrays)` for an executor that does not record itself as last executed
        (a DifferentiableGraph's f and df): the native plan's call `call` that took the
        latest arrays, tried first (it checks them itself), without `run_arrays`' tests
        (they hold: the optimized plan, once made, stays); any other call takes
        `run_arrays`, which rebinds `raw_call` to its plan. (Two closures, not one testing
        `counts_runs` per call: this is every DifferentiableGraph call's path.)"""
        slow = self.run_arrays

        def direct(arrays):
            outs = call(arrays)
            if outs is None:
                return slow(arrays)
            count_invocation()
            self.last_graph = graph
            return outs

        def direct_uncounted(arrays):
            outs = call(arrays)
            if outs is None:
                return slow(arrays)
            self.last_graph = graph
            return outs
        return direct if self.counts_runs else direct_uncounted

    def train_arrays(self, arrays: list, flags: Optional[tuple[bool, ...]] = None,
                     copy: Optional[bool] = True) -> Optional[tuple[list, list]]:
        """`run` of a training call (grad mode on; every input a floating-point tensor given
        as its numpy array, to require grad as `flags` say, default all: Tensors of the
        call's own, made of copies of them with `copy`; with `copy=None` the caller's
        Tensors that do not require grad, whose arrays are shared) when the optimized plan is
        one for gradients and its runner's training program takes them
        (`NativeRunner.train_arrays`): the outputs and those Tensors (two lists); else None,
        having counted and run nothing. Plans with `prim::BailOut` guards take the general
        path (a bailout resumes from the call's Tensors)."""
        program = self._train_program  # (`train_arrays`' tests held when it was set)
        got = program(arrays, copy) if program is not None and flags is None else None
        if got is None:
            plan = self.optimized_plan
            if plan is None or not self.plan_needs_gradient or self._bails_out or \
                    not self.optimize or self.remaining_depth <= 0:
                return None
            runner = plan.runner
            train = getattr(runner, "train_arrays", None)
            got = train(arrays, flags, copy) if train is not None else None
            if got is None:
                return None
            if flags is None:  # (the runner's latest training program: tried first from now on)
                self._train_program = getattr(runner, "train_program", None)
        count_invocation()
        graph = self.last_graph = self.optimized_plan.graph
        if self.shows_last:
            LAST_EXECUTED.graph = graph  # (`record_last_executed`, without its call)
        return got

    def _needs_gradient_plan(self, inputs: list) -> bool:
        """The requires_grad guard of a plan specialized without gradients: this call needs
        them (grad mode on, a tensor argument or module attribute requires grad), so it
        fails over to the unoptimized graph, whose executor profiles and specializes for
        gradients (DifferentiableGraphs) one bailout level down, as a failing TypeCheck on
        requires_grad would."""
        return not self.plan_needs_gradient and self._call_needs_gradient(inputs)

    def _call_needs_gradient(self, inputs: list) -> bool:
        """Grad mode is on and a tensor argument or module attribute requires grad (a graph
        whose values the profiler does not record still knows what its calls needed)."""
        if not is_grad_enabled():
            return False
        values = list(inputs) + attribute_values(inputs, self._attr_paths)
        return any(isinstance(x, Tensor) and x.requires_grad for x in values)

    def _fallback_executor(self, graph: Graph) -> "ProfilingGraphExecutor":
        with self._lock:
            ex = self._fallback_executors.get(id(graph))
            if ex is None:
                ex = ProfilingGraphExecutor(graph, self.optimize, self.functions, self.settings,
                                            self.remaining_depth - 1)
                ex.shows_last, ex.counts_runs = self.shows_last, self.counts_runs
                self._fallback_executors[id(graph)] = ex
            return ex

    def _run_fallback(self, fn, args: list) -> list:
        """A 2.x guard failed: call the fallback function (the unoptimized subgraph)."""
        graph = self.fallbacks.get(getattr(fn, "node", None))
        if graph is None:
            raise RuntimeError("guard failed but its fallback function is unknown")
        self._count_bailout()
        out = self._fallback_executor(graph).run(*args)
        return out

    def _count_bailout(self) -> None:
        with self._lock:
            self.bailouts += 1
        COUNTERS.inc("bailouts")

    def _bailout(self, interp, node: Node, args, env):
        raise _BailOut(node, list(args))

    def _resume_after_bailout(self, b: _BailOut, inputs: list) -> list:
        """A prim::BailOut failed: continue in the BailoutTemplate's unoptimized graph from
        the matching `prim::BailOut[index=k]`, with the live values the failing node carried
        (PyTorch's bailout). A guard nested in a block whose template point is not at the top
        level re-runs the unoptimized graph from the start instead (same result for graphs
        without side effects), through a fallback executor that may re-specialize."""
        self._count_bailout()
        node, args = b.args[0], b.args[1]
        template = next((n.attr("Subgraph") for n in node.graph.walk()
                         if n.kind == "prim::BailoutTemplate"), None)
        if template is None:
            raise RuntimeError("prim::BailOut failed without a prim::BailoutTemplate")
        from irjit.compiler.passes.bailout_template import bailout_points
        point = bailout_points(template).get(node.attr("index"))
        if point is not None and point.owning_block is template.block and \
                node.owning_block is node.graph.block:
            return self._continue_in_template(template, point, args[1:])
        with self._lock:
            unguarded = self._unguarded.get(id(template))
            if unguarded is None:
                unguarded = self._unguarded[id(template)] = _without_bailouts(template)
        return self._fallback_executor(unguarded).run(*inputs)

    def _continue_in_template(self, template: Graph, point: Node, live: list) -> list:
        interp = self._template_interpreters.get(id(template))
        if interp is None:
            interp = self._template_interpreters[id(template)] = Interpreter(
                template, functions=self.functions)
        env = {v: x for v, x in zip(point.inputs, live)}
        env[point.outputs[0]] = live[0]
        for n in template.nodes():
            if n.kind == "prim::Constant":
                env[n.outputs[0]] = interp.constant(n)
        return interp.run_block_from(template.block, point, env)

    # ---- introspection
    def graph_for(self, *inputs: Any) -> Graph:
        """As PyTorch's `graph_for`: the optimized graph once there is one (with each
        DifferentiableGraph showing its forward graph as optimized by its own executor);
        before that, run once with these inputs and return what that run executed — so the
        first call shows the profiled graph and a later one the optimized graph."""
        with self._lock:
            plan = self.optimized_plan
        if plan is None:
            self.run(*inputs)
            from .counters import last_executed_optimized_graph
            return last_executed_optimized_graph()
        return plan.graph

    def debug_state(self) -> str:
        parts = [f"ProfilingGraphExecutor: profiled runs left {self.profiling_runs_left}, "
                 f"bailout depth left {self.remaining_depth}, {self.bailouts} bailout(s)"]
        if self.profiled_graph is not None:
            parts.append(f"# profiled graph\n{self.profiled_graph}")
        if self.optimized_plan is not None:
            parts.append(f"# optimized graph\n{self.optimized_plan.graph}")
        for g, ex in self._fallback_executors.items():
            parts.append("# fallback\n" + ex.debug_state())
        stats = stats_summary(self.runner_stats())
        if stats:
            parts[0] += f"; {stats}"
        return "\n".join(parts)

    def runner_stats(self) -> list:
        """The optimized plan's runner statistics (and its DifferentiableGraphs' executors')."""
        plan = self.optimized_plan
        return plan.runner_stats() if plan is not None else []


def _without_bailouts(template: Graph) -> Graph:
    """The BailoutTemplate's graph with its BailOut nodes replaced by the values they guard:
    the unoptimized graph the fallback executor runs (and may re-specialize)."""
    g = template.copy()
    for n in list(g.walk()):
        if n.kind == "prim::BailOut":
            n.outputs[0].replace_all_uses_with(n.inputs[0])
            n.destroy()
    return g
