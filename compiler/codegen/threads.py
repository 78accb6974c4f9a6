"""Native threads for large kernels: one outer axis of the loop nest is cut into one
contiguous range per core, and the kernel's native entry runs the ranges on threads it
creates and joins itself (`pthread_create`/`pthread_join`, resolved from the process's libc;
no C compiler at run time). Each output element is computed, and each reduction summed, by
exactly one thread in the order one thread would use, so results are bit-identical to the
single-threaded kernel. Kernels below `WORK_THRESHOLD` stay single-threaded."""

from __future__ import annotations

import ctypes
import dataclasses
import os
from functools import lru_cache
from typing import Optional

import llvmlite.binding as llvm
import numpy as np
from llvmlite import ir

from .emit import I32, I64, PTR, KernelEmitter, emit_kernel
from .kernel import Buffer, Kernel, Load, expr_children

# Estimated work (loop iterations x expression nodes, see `kernel_work`) above which two
# threads beat one on this 2-core VM: `python -m irjit.tools.bench_threads` measured the
# element-wise chain (11 nodes per element) breaking even at ~130K elements (work ~1.4M;
# creating and joining a thread costs ~100 us here) and 1.5-1.9x faster from 1M elements.
WORK_THRESHOLD = 1 << 21
# Range boundaries fall on multiples of this many iterations of the split axis when it is
# long enough, so threads do not write to the same cache lines.
BOUNDARY_ALIGNMENT = 64


def thread_count() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0))


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


def ranges(size: int, parts: int) -> list[tuple[int, int]]:
    """`parts` contiguous [start, stop) ranges covering 0..size, boundaries aligned when long."""
    align = BOUNDARY_ALIGNMENT if size >= BOUNDARY_ALIGNMENT * parts * 4 else 1
    cuts = [min(size, (size * k // parts) // align * align) for k in range(parts)] + [size]
    return [(cuts[k], cuts[k + 1]) for k in range(parts)]


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


@lru_cache(maxsize=None)
def register_symbols() -> None:
    """Make `pthread_create` and `pthread_join` resolvable from JIT-linked modules."""
    libc = ctypes.CDLL(None)
    for name in ("pthread_create", "pthread_join"):
        llvm.add_symbol(name, ctypes.cast(getattr(libc, name), ctypes.c_void_p).value)


def _declare(module: ir.Module, name: str, fnty: ir.FunctionType) -> ir.Function:
    existing = module.globals.get(name)
    return existing if existing is not None else ir.Function(module, fnty, name=name)


def emit_threaded_kernel(module: ir.Module, kernel: Kernel, bounds_checks: bool,
                         threads: int, axis: int) -> ir.Function:
    """`i32 name(ptr p0, ...)`: the kernel's ranges of `axis`, one per thread, the first on
    the calling thread; a thread that cannot be created runs its range on the caller. Returns
    the first non-zero status of the ranges, else 0."""
    register_symbols()
    n = len(kernel.buffers)
    range_fn = _RangeEmitter(module, kernel, bounds_checks, axis).emit()
    worker = ir.Function(module, ir.FunctionType(PTR, [PTR]), name=kernel.name + "_worker")
    worker.linkage = "internal"
    wb = ir.IRBuilder(worker.append_basic_block("entry"))
    slot = lambda b, task, k: b.gep(task, [ir.Constant(I64, k)], source_etype=I64)  # noqa: E731
    task = worker.args[0]
    ptrs = [wb.inttoptr(wb.load(slot(wb, task, k), typ=I64), PTR) for k in range(n)]
    status = wb.call(range_fn, [*ptrs, slot(wb, task, n)])
    wb.store(wb.zext(status, I64), slot(wb, task, n + 2))
    wb.ret(ir.Constant(PTR, None))

    create = _declare(module, "pthread_create", ir.FunctionType(I32, [PTR, PTR, PTR, PTR]))
    join = _declare(module, "pthread_join", ir.FunctionType(I32, [I64, PTR]))
    fn = ir.Function(module, ir.FunctionType(I32, [PTR] * n), name=kernel.name)
    fn.linkage = "internal"
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    # a task: n buffer pointers, start, stop, status (i64 slots)
    tasks = [b.alloca(I64, size=n + 3) for _ in range(threads)]
    tids = [b.alloca(I64) for _ in range(threads)]
    created = []
    for t, (start, stop) in enumerate(ranges((kernel.outer + kernel.inner)[axis], threads)):
        for k in range(n):
            b.store(b.ptrtoint(fn.args[k], I64), slot(b, tasks[t], k))
        b.store(ir.Constant(I64, start), slot(b, tasks[t], n))
        b.store(ir.Constant(I64, stop), slot(b, tasks[t], n + 1))
        if t:
            rc = b.call(create, [tids[t], ir.Constant(PTR, None), worker, tasks[t]])
            ok = b.icmp_signed("==", rc, ir.Constant(I32, 0))
            with b.if_then(b.not_(ok)):
                b.call(worker, [tasks[t]])
            created.append((t, ok))
    b.call(worker, [tasks[0]])
    for t, ok in created:
        with b.if_then(ok):
            b.call(join, [b.load(tids[t], typ=I64), ir.Constant(PTR, None)])
    result = ir.Constant(I64, 0)
    for t in reversed(range(threads)):
        s = b.load(slot(b, tasks[t], n + 2), typ=I64)
        result = b.select(b.icmp_unsigned("!=", s, ir.Constant(I64, 0)), s, result)
    b.ret(b.trunc(result, I32))
    return fn


def emit_kernel_on_threads(module: ir.Module, kernel: Kernel, bounds_checks: bool) -> ir.Function:
    """The kernel's function, split across the cores when it is large enough (see
    `planned_threads`), else the single-threaded loop nest."""
    threads, axis = planned_threads(kernel)
    if threads > 1:
        return emit_threaded_kernel(module, kernel, bounds_checks, threads, axis)
    return emit_kernel(module, kernel, bounds_checks)
