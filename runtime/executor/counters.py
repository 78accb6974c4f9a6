"""Process-wide executor counters and the last executed optimized graph (per thread)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, fields
from typing import Optional

from irjit.compiler.ir import Graph


@dataclass
class Counters:
    executors_constructed: int = 0
    invocations: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
    profiled_runs: int = 0
    specializations: int = 0
    bailouts: int = 0
    # native units (the "native" backend's NativeStats, summed over every runner)
    native_units: int = 0
    native_nodes: int = 0
    interpreted_nodes: int = 0
    native_compile_ms: float = 0.0
    native_cache_hits: int = 0
    native_bailouts: int = 0

    def inc(self, name: str, by: float = 1) -> None:
        with _counter_lock:
            setattr(self, name, getattr(self, name) + by)

    def reset(self) -> None:
        for f in fields(self):
            setattr(self, f.name, 0)

    def as_dict(self) -> dict[str, int]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


_counter_lock = threading.Lock()
COUNTERS = Counters()
_last = threading.local()


def record_last_executed(graph: Graph) -> None:
    _last.graph = graph


def last_executed_optimized_graph() -> Optional[Graph]:
    """The graph the most recent executor run on this thread executed (as PyTorch's
    `torch.jit.last_executed_optimized_graph()`)."""
    return getattr(_last, "graph", None)
