"""Running a function over the chunks of a range on several native threads, which the calling
thread creates and joins itself (`pthread_create`/`pthread_join`, resolved from the process's
libc; no C compiler at run time): the threads claim chunks from an atomic counter until none
is left, so a thread slowed by another process leaves its share to the others."""

from __future__ import annotations

import ctypes
import os
from functools import lru_cache

import llvmlite.binding as llvm
from llvmlite import ir

I32 = ir.IntType(32)
I64 = ir.IntType(64)
PTR = ir.PointerType()


def thread_count() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0))


@lru_cache(maxsize=None)
def register_symbols() -> None:
    """Make `pthread_create` and `pthread_join` resolvable from JIT-linked modules."""
    libc = ctypes.CDLL(None)
    for name in ("pthread_create", "pthread_join"):
        llvm.add_symbol(name, ctypes.cast(getattr(libc, name), ctypes.c_void_p).value)


def _declare(module: ir.Module, name: str, fnty: ir.FunctionType) -> ir.Function:
    existing = module.globals.get(name)
    return existing if existing is not None else ir.Function(module, fnty, name=name)


def emit_parallel_range(module: ir.Module, name: str, range_fn: ir.Function, n_args: int,
                        size: int, chunk: int, threads: int) -> ir.Function:
    """`i32 name(ptr p0, ..., ptr p{n_args-1})`: runs `range_fn(p0, ..., bounds)` (bounds
    points at two i64s, [start, stop)) over chunks of `chunk` iterations of [0, size), claimed
    from an atomic counter by the calling thread and `threads - 1` created ones until none is
    left (a thread that cannot be created leaves its chunks to the others). Returns the first
    non-zero status a range returned, else 0."""
    register_symbols()
    n = n_args
    chunk = ir.Constant(I64, chunk)
    slot = lambda b, base, k: b.gep(base, [ir.Constant(I64, k)], source_etype=I64)  # noqa: E731
    # shared: n buffer pointers, then the next unclaimed iteration; a task: shared, status
    worker = ir.Function(module, ir.FunctionType(PTR, [PTR]), name=name + "_worker")
    worker.linkage = "internal"
    wb = ir.IRBuilder(worker.append_basic_block("entry"))
    task = worker.args[0]
    shared = wb.inttoptr(wb.load(slot(wb, task, 0), typ=I64), PTR)
    ptrs = [wb.inttoptr(wb.load(slot(wb, shared, k), typ=I64), PTR) for k in range(n)]
    bounds = wb.alloca(I64, size=2)
    claim, run, done = (worker.append_basic_block(x) for x in ("claim", "run", "done"))
    wb.branch(claim)
    wb.position_at_end(claim)
    start = wb.atomic_rmw("add", slot(wb, shared, n), chunk, "monotonic")
    wb.cbranch(wb.icmp_signed("<", start, ir.Constant(I64, size)), run, done)
    wb.position_at_end(run)
    stop = wb.add(start, chunk)
    stop = wb.select(wb.icmp_signed("<", stop, ir.Constant(I64, size)), stop, ir.Constant(I64, size))
    wb.store(start, slot(wb, bounds, 0))
    wb.store(stop, slot(wb, bounds, 1))
    status = wb.call(range_fn, [*ptrs, bounds])
    wb.store(wb.zext(status, I64), slot(wb, task, 1))
    wb.cbranch(wb.icmp_unsigned("==", status, ir.Constant(I32, 0)), claim, done)
    wb.position_at_end(done)
    wb.ret(ir.Constant(PTR, None))

    create = _declare(module, "pthread_create", ir.FunctionType(I32, [PTR, PTR, PTR, PTR]))
    join = _declare(module, "pthread_join", ir.FunctionType(I32, [I64, PTR]))
    fn = ir.Function(module, ir.FunctionType(I32, [PTR] * n), name=name)
    fn.linkage = "internal"
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    shared = b.alloca(I64, size=n + 1)
    for k in range(n):
        b.store(b.ptrtoint(fn.args[k], I64), slot(b, shared, k))
    b.store(ir.Constant(I64, 0), slot(b, shared, n))
    tasks = [b.alloca(I64, size=2) for _ in range(threads)]
    tids = [b.alloca(I64) for _ in range(threads)]
    for t in range(threads):
        b.store(b.ptrtoint(shared, I64), slot(b, tasks[t], 0))
        b.store(ir.Constant(I64, 0), slot(b, tasks[t], 1))
    created = []
    for t in range(1, threads):
        rc = b.call(create, [tids[t], ir.Constant(PTR, None), worker, tasks[t]])
        created.append((t, b.icmp_signed("==", rc, ir.Constant(I32, 0))))
    b.call(worker, [tasks[0]])
    for t, ok in created:
        with b.if_then(ok):
            b.call(join, [b.load(tids[t], typ=I64), ir.Constant(PTR, None)])
    result = ir.Constant(I64, 0)
    for t in reversed(range(threads)):
        s = b.load(slot(b, tasks[t], 1), typ=I64)
        result = b.select(b.icmp_unsigned("!=", s, ir.Constant(I64, 0)), s, result)
    b.ret(b.trunc(result, I32))
    return fn
