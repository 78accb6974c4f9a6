"""Process-wide executor counters and the last executed optimized graph (per thread)."""

from __future__ import annotations

import functools
import itertools
import threading
from dataclasses import dataclass, fields
from typing import Optional

from irjit.compiler.ir import Graph


class _Ticks:
    """A count the hot paths add to without a lock: `tick()` is `next` of an
    `itertools.count`, one C call the GIL never interrupts; reading it (rare) takes a tick
    too, under a lock, and subtracts the reads."""

    def __init__(self):
        self._count = itertools.count()
        self.tick = functools.partial(next, self._count)
        self._reads = 0
        self._lock = threading.Lock()

    def value(self) -> int:
        with self._lock:
            n = next(self._count) - self._reads
            self._reads += 1
            return n

    def set(self, value: int) -> None:
        with self._lock:
            self._reads = next(self._count) - value + 1


INVOCATIONS = _Ticks()
count_invocation = INVOCATIONS.tick  # an executor run: `count_invocation()`


@dataclass
class Counters:
    executors_constructed: int = 0
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

    @property
    def invocations(self) -> int:
        """Executor runs (`GraphExecutor::run`s, as PyTorch's GRAPH_EXECUTOR_INVOCATIONS)."""
        return INVOCATIONS.value()

    @invocations.setter
    def invocations(self, value: int) -> None:
        INVOCATIONS.set(value)

    def inc(self, name: str, by: float = 1) -> None:
        if name == "invocations":
            for _ in range(int(by)):
                count_invocation()
            return
        with _counter_lock:
            setattr(self, name, getattr(self, name) + by)

    def reset(self) -> None:
        for f in fields(self):
            setattr(self, f.name, 0)
        self.invocations = 0

    def as_dict(self) -> dict[str, int]:
        d = {"executors_constructed": self.executors_constructed, "invocations": self.invocations}
        d.update((f.name, getattr(self, f.name)) for f in fields(self))
        return d


_counter_lock = threading.Lock()
COUNTERS = Counters()
LAST_EXECUTED = _last = threading.local()  # (per thread, `graph`: what `record_last_executed` set)


def record_last_executed(graph: Graph) -> None:
    _last.graph = graph


def last_executed_optimized_graph() -> Optional[Graph]:
    """The graph the most recent executor run on this thread executed (as PyTorch's
    `torch.jit.last_executed_optimized_graph()`)."""
    return getattr(_last, "graph", None)
