"""Running a function over the chunks of a range on several native threads: the calling thread
and the persistent pool's (thread_pool.py) claim chunks from an atomic counter until none is
left, so a thread slowed by another process leaves its share to the others."""

from __future__ import annotations

import os

from llvmlite import ir

from . import thread_pool

I32 = ir.IntType(32)
I64 = ir.IntType(64)
PTR = ir.PointerType()
# Flops from which a product's work items run on every core (a loop on the thread pool costs
# ~5-30 us here; one core does ~110 GFLOP/s in gemm_tiled's tiles).
THREAD_FLOPS = 4_000_000


def thread_count() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0))


def register_symbols() -> None:
    """Make the thread pool's entry resolvable from JIT-linked modules (compiling it once)."""
    thread_pool.register_symbols()


def emit_parallel_range(module: ir.Module, name: str, range_fn: ir.Function, n_args: int,
                        size: int, chunk: int, threads: int) -> ir.Function:
    """`i32 name(ptr p0, ..., ptr p{n_args-1})`: runs `range_fn(p0, ..., bounds)` (bounds
    points at two i64s, [start, stop)) over chunks of `chunk` iterations of [0, size) on the
    calling thread and the pool's (`threads` in all), which claim chunks from an atomic
    counter until none is left. Returns the first non-zero status a range returned, else 0.
    The pool is made meanwhile (`thread_pool.start`); the module links once it is."""
    thread_pool.start()
    slot = lambda b, base, k: b.gep(base, [ir.Constant(I64, k)], source_etype=I64)  # noqa: E731
    # the pool calls `i32 chunk(ptr args, i64 start, i64 stop)`; args holds the n pointers
    thunk = ir.Function(module, thread_pool.RANGE_TYPE, name=name + "_chunk")
    thunk.linkage = "internal"
    tb = ir.IRBuilder(thunk.append_basic_block("entry"))
    args, start, stop = thunk.args
    ptrs = [tb.inttoptr(tb.load(slot(tb, args, k), typ=I64), PTR) for k in range(n_args)]
    bounds = tb.alloca(I64, size=2)
    tb.store(start, slot(tb, bounds, 0))
    tb.store(stop, slot(tb, bounds, 1))
    tb.ret(tb.call(range_fn, [*ptrs, bounds]))
    pool = module.globals.get(thread_pool.SYMBOL) or ir.Function(module, thread_pool.POOL_TYPE,
                                                                 name=thread_pool.SYMBOL)
    fn = ir.Function(module, ir.FunctionType(I32, [PTR] * n_args), name=name)
    fn.linkage = "internal"
    fn.attributes.add("alwaysinline")  # (a few stores and a call: no function of its own to optimize)
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    array = b.alloca(I64, size=max(1, n_args))
    for k in range(n_args):
        b.store(b.ptrtoint(fn.args[k], I64), slot(b, array, k))
    b.ret(b.call(pool, [thunk, array, ir.Constant(I64, size), ir.Constant(I64, chunk),
                        ir.Constant(I64, threads)]))
    return fn
