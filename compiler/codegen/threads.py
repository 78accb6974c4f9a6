"""Native threads for large kernels: one outer axis of the loop nest is cut into chunks
that the calling thread and the persistent pool's (thread_pool.py, one thread per other core)
claim until none is left (an atomic counter). Each output element is computed, and each
reduction summed, by exactly one thread in the order one thread would use, so results are
bit-identical to the single-threaded kernel. Kernels below `WORK_THRESHOLD` stay
single-threaded."""

from __future__ import annotations

import dataclasses
from typing import Optional

import numpy as np
from llvmlite import ir

from .collapse import collapse_axes
from .emit import I64, KernelEmitter, emit_kernel
from .kernel import Buffer, Kernel, Load, expr_children
from .parallel import emit_parallel_range, register_symbols, thread_count  # noqa: F401  (re-exported)

# Estimated work (loop iterations x expression nodes, see `kernel_work`) above which two
# threads beat one on this 2-core VM: `python -m irjit.tools.bench_threads` measured the
# element-wise chain (11 nodes per element) breaking even at ~130K elements (work ~1.4M;
# creating and joining a thread costs ~100 us here) and 1.5-1.9x faster from 1M elements
# (one range per thread, load average ~1.5). With the pool, an idle machine showed 1.1x at
# 4096 elements and 1.7-1.95x from 32K, but other moments 0.1-0.3x (see README, "Native
# threads"): not yet lowered.
WORK_THRESHOLD = 1 << 21
# Range boundaries fall on multiples of this many iterations of the split axis when it is
# long enough, so threads do not write to the same cache lines.
BOUNDARY_ALIGNMENT = 64
CHUNKS_PER_THREAD = 8


def kernel_work(kernel: Kernel) -> int:
    """Loop iterations times the expression nodes evaluated per iteration: a cost estimate."""
    seen: set = set()

    def count(e) -> None:
        if e not in seen:
            seen.add(e)
            for c in expr_children(e):
                count(c)
    for store in kernel.stores:
        count(store.value)
    return int(np.prod(kernel.outer + kernel.inner, dtype=np.int64)) * max(1, len(seen) + len(kernel.stores))


def split_axis(kernel: Kernel, threads: int) -> Optional[int]:
    """The outermost outer axis with at least `threads` iterations along which every store
    moves (so the ranges write disjoint elements), or None; kernels that read a buffer they
    write are never split."""
    stored = {s.access.buffer for s in kernel.stores}
    loaded: set = set()

    def visit(e) -> None:
        if isinstance(e, Load):
            loaded.add(e.access.buffer)
        for c in expr_children(e):
            visit(c)
    for s in kernel.stores:
        visit(s.value)
    if stored & loaded:
        return None
    for axis, size in enumerate(kernel.outer):
        if size >= threads and all(s.access.strides[axis] != 0 for s in kernel.stores):
            return axis
    return None


def chunk_size(size: int, threads: int) -> int:
    """Iterations of the split axis per claimed chunk: about eight chunks per thread, so a
    thread slowed by another process leaves its share to the others; a multiple of
    BOUNDARY_ALIGNMENT when the axis is long."""
    chunk = -(-size // (threads * CHUNKS_PER_THREAD))
    if size >= BOUNDARY_ALIGNMENT * threads * CHUNKS_PER_THREAD:
        chunk = -(-chunk // BOUNDARY_ALIGNMENT) * BOUNDARY_ALIGNMENT
    return max(1, chunk)


def planned_threads(kernel: Kernel) -> tuple[int, Optional[int]]:
    """(threads, split axis) for `kernel`: (1, None) when it stays single-threaded."""
    threads = thread_count()
    if threads < 2 or kernel_work(kernel) < WORK_THRESHOLD:
        return 1, None
    axis = split_axis(kernel, threads)
    return (threads, axis) if axis is not None else (1, None)


class _RangeEmitter(KernelEmitter):
    """The kernel over [start, stop) of one axis: `i32 name(ptr p0, ..., ptr range)` where
    range points at two i64s."""

    def __init__(self, module: ir.Module, kernel: Kernel, bounds_checks: bool, axis: int):
        bounds = Buffer(len(kernel.buffers), np.dtype(np.int64), (2,), (1,), False)
        super().__init__(module, dataclasses.replace(kernel, name=kernel.name + "_range",
                                                      buffers=[*kernel.buffers, bounds]),
                         bounds_checks)
        self.split = axis

    def emit(self) -> ir.Function:
        b, bounds = self.builder, self.fn.args[-1]
        self.bounds = (b.load(bounds, typ=I64),
                       b.load(b.gep(bounds, [ir.Constant(I64, 1)], source_etype=I64), typ=I64))
        return super().emit()

    def loop_range(self, axis: int, size: int) -> tuple[ir.Value, ir.Value]:
        return self.bounds if axis == self.split else super().loop_range(axis, size)


def emit_threaded_kernel(module: ir.Module, kernel: Kernel, bounds_checks: bool,
                         threads: int, axis: int) -> ir.Function:
    """`i32 name(ptr p0, ...)`: the calling thread and `threads - 1` created ones claim chunks
    of `axis` from an atomic counter until none is left (a thread that cannot be created
    leaves its chunks to the others). Returns the first non-zero status, else 0."""
    size = (kernel.outer + kernel.inner)[axis]
    range_fn = _RangeEmitter(module, kernel, bounds_checks, axis).emit()
    return emit_parallel_range(module, kernel.name, range_fn, len(kernel.buffers), size,
                               chunk_size(size, threads), threads)


def emit_kernel_on_threads(module: ir.Module, kernel: Kernel, bounds_checks: bool) -> ir.Function:
    """The kernel's function (its axes merged where every access allows, collapse.py), split
    across the cores when it is large enough (see `planned_threads`), else the
    single-threaded loop nest."""
    kernel = collapse_axes(kernel)
    threads, axis = planned_threads(kernel)
    if threads > 1:
        return emit_threaded_kernel(module, kernel, bounds_checks, threads, axis)
    return emit_kernel(module, kernel, bounds_checks)
