"""JIT settings in one place, mirroring PyTorch's `torch._C._jit_set_*` switches: what a new
graph executor does, and the autodiff thresholds the `autodiff` pipeline uses by default.

They sit below the passes and the executors so that both read the same values; the backend
names are checked where runners are made (`runtime/executor/plan.py`), since backends register
there. `IRJIT_BACKEND` in the environment is read once, as the default backend.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, replace

GUARD_STYLES = ("typecheck", "bailout")
# PyTorch's autodiffSubgraphNodeThreshold / autodiffSubgraphInlineThreshold
AUTODIFF_NODE_THRESHOLD = 2
AUTODIFF_INLINE_THRESHOLD = 5


@dataclass(frozen=True)
class ExecutorSettings:
    """What a new GraphExecutor does; read once when an executor is created."""

    profiling_executor: bool = True  # PyTorch 2.x default; False gives the legacy executor
    num_profiled_runs: int = 1  # torch._C._jit_set_num_profiled_runs
    bailout_depth: int = 12  # re-specializations allowed (PyTorch: STATIC 2 + DYNAMIC 10)
    autodiff_node_threshold: int = AUTODIFF_NODE_THRESHOLD
    autodiff_inline_threshold: int = AUTODIFF_INLINE_THRESHOLD
    autodiff_subgraph_inlining: bool = True  # torch._C._debug_set_autodiff_subgraph_inlining
    guard_style: str = "typecheck"  # "typecheck" (2.x) or "bailout" (prim::BailOut, 1.x)
    backend: str = "native"  # what runs an execution plan: a name registered in plan.py

    def autodiff_thresholds(self) -> tuple[int, int]:
        """(node, inline) thresholds; with subgraph inlining switched off PyTorch keeps every
        subgraph, however small (both become 1)."""
        if not self.autodiff_subgraph_inlining:
            return 1, 1
        return self.autodiff_node_threshold, self.autodiff_inline_threshold


_lock = threading.Lock()
_current = ExecutorSettings(backend=os.environ.get("IRJIT_BACKEND") or "native")


def get_settings() -> ExecutorSettings:
    return _current


def update_settings(**changes) -> ExecutorSettings:
    """Change settings for executors created from now on; returns the previous settings."""
    global _current
    if "guard_style" in changes and changes["guard_style"] not in GUARD_STYLES:
        raise ValueError("guard_style must be 'typecheck' or 'bailout'")
    with _lock:
        previous = _current
        _current = replace(_current, **changes)
    return previous


def set_profiling_executor(enabled: bool) -> bool:
    return update_settings(profiling_executor=bool(enabled)).profiling_executor


def set_num_profiled_runs(n: int) -> int:
    if n < 1:
        raise ValueError("the number of profiled runs must be at least 1")
    return update_settings(num_profiled_runs=int(n)).num_profiled_runs


def set_autodiff_thresholds(node_threshold: int | None = None,
                            inline_threshold: int | None = None) -> None:
    changes = {}
    if node_threshold is not None:
        changes["autodiff_node_threshold"] = int(node_threshold)
    if inline_threshold is not None:
        changes["autodiff_inline_threshold"] = int(inline_threshold)
    update_settings(**changes)


def debug_set_autodiff_subgraph_inlining(enabled: bool) -> None:
    """As `torch._C._debug_set_autodiff_subgraph_inlining`: when off, every DifferentiableGraph
    is kept (the autodiff thresholds become 1)."""
    update_settings(autodiff_subgraph_inlining=bool(enabled))


def set_guard_style(style: str) -> None:
    update_settings(guard_style=style)
