"""Graph executors: run graphs the way TorchScript does, optimized per input specialization.

`GraphExecutor(graph)` is the legacy executor (ArgumentSpec plan cache) or the profiling
executor (profile, then specialize behind guards), as the settings say.
"""

from __future__ import annotations

from typing import Optional

from irjit.compiler.ir import Graph

from .counters import COUNTERS, last_executed_optimized_graph
from .legacy import LegacyGraphExecutor
from .plan import (EntryGuardFailed, RunnerContext, backend_names, register_backend,
                   set_backend)
from irjit.compiler.settings import (ExecutorSettings, debug_set_autodiff_subgraph_inlining, get_settings,
                       set_autodiff_thresholds, set_guard_style, set_num_profiled_runs,
                       set_profiling_executor, update_settings)


def make_executor(graph: Graph, kind: str = "auto", optimize: bool = True,
                  functions: Optional[dict] = None, settings: Optional[ExecutorSettings] = None):
    """An executor of `kind` "legacy", "profiling" or "auto" (the settings decide)."""
    settings = settings or get_settings()
    if kind == "auto":
        kind = "profiling" if settings.profiling_executor else "legacy"
    if kind == "legacy":
        return LegacyGraphExecutor(graph, optimize, functions, settings)
    if kind == "profiling":
        from .profiling import ProfilingGraphExecutor
        return ProfilingGraphExecutor(graph, optimize, functions, settings)
    raise ValueError(f"unknown executor kind {kind!r} (legacy, profiling or auto)")


def GraphExecutor(graph: Graph, optimize: bool = True, functions: Optional[dict] = None):
    """PyTorch's GraphExecutor: legacy or profiling, as `set_profiling_executor` says."""
    return make_executor(graph, "auto", optimize, functions)


__all__ = ["COUNTERS", "EntryGuardFailed", "ExecutorSettings", "GraphExecutor", "LegacyGraphExecutor",
           "debug_set_autodiff_subgraph_inlining", "get_settings", "last_executed_optimized_graph",
           "make_executor", "RunnerContext", "backend_names", "register_backend", "set_backend", "set_autodiff_thresholds", "set_guard_style", "set_num_profiled_runs",
           "set_profiling_executor", "update_settings"]
