"""Benchmark: how soon the thread pool's threads join a parallel loop, by the time since the
process's previous loop (busy in Python, or asleep), to choose how long pool threads spin.

Runs `irjit_parallel_for` (thread_pool.py) over a loop of chunks that each record when and on
which thread they started (the time stamp counter) and then do a fixed amount of work; prints,
per gap, the median loop time, how often a pool thread took part and how many chunks it took,
and when the first chunk started on a pool thread and on the caller (µs after the call began:
the caller's is the cost of waking the pool).

    python -m irjit.tools.bench_pool [--chunks 20] [--work 3000] [--calls 60]

IRJIT_POOL_SPIN_US sets the pool's spin time, as for any irjit process (0: sleep at once).
"""

from __future__ import annotations

import argparse
import ctypes
import statistics
import time

import llvmlite.binding as llvm
import numpy as np
from llvmlite import ir

from irjit.compiler.codegen import thread_pool
from irjit.compiler.codegen.library import CodeLibrary, new_module

I32, I64 = ir.IntType(32), ir.IntType(64)
LINE = 8  # i64 slots per 64-byte cache line: each chunk's record has a line of its own
GAPS = [("busy", 0), ("busy", 20), ("busy", 100), ("busy", 300), ("busy", 1000),
        ("sleep", 100), ("sleep", 1000), ("sleep", 10_000), ("sleep", 200_000)]


def _probe_library() -> CodeLibrary:
    """`i32 probe_chunk(ptr args, i64 start, i64 stop)`: args[0] the caller's pthread id,
    args[LINE] the work (loads per item), args[2 LINE + start LINE + 0/1] the chunk's start
    time stamp and whether a pool thread ran it; and `i64 probe_tsc()`."""
    libc = ctypes.CDLL(None)
    llvm.add_symbol("irjit_probe_pthread_self", ctypes.cast(libc.pthread_self, ctypes.c_void_p).value)
    module = new_module("irjit_pool_probe")
    self_fn = ir.Function(module, ir.FunctionType(I64, []), name="irjit_probe_pthread_self")
    counter = ir.Function(module, ir.FunctionType(I64, []), name="llvm.readcyclecounter")
    tsc = ir.Function(module, ir.FunctionType(I64, []), name="probe_tsc")
    b = ir.IRBuilder(tsc.append_basic_block("entry"))
    b.ret(b.call(counter, []))

    fn = ir.Function(module, thread_pool.RANGE_TYPE, name="probe_chunk")
    args, start, stop = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    slot = lambda k: b.gep(args, [k if isinstance(k, ir.Value) else ir.Constant(I64, k)],  # noqa: E731
                           source_etype=I64)
    record = b.add(ir.Constant(I64, 2 * LINE), b.mul(start, ir.Constant(I64, LINE)))
    b.store(b.call(counter, []), slot(record))
    on_pool = b.icmp_unsigned("!=", b.call(self_fn, []), b.load(slot(0), typ=I64))
    b.store(b.zext(on_pool, I64), slot(b.add(record, ir.Constant(I64, 1))))
    count = b.alloca(I64)
    b.store(ir.Constant(I64, 0), count)
    loop, done = fn.append_basic_block("work"), fn.append_basic_block("done")
    b.branch(loop)
    b.position_at_end(loop)
    n = b.load(count)
    b.store(b.add(n, ir.Constant(I64, 1)), count)
    work = b.mul(b.load_atomic(slot(LINE), "monotonic", 8, typ=I64), b.sub(stop, start))
    b.cbranch(b.icmp_signed("<", n, work), loop, done)  # (an atomic load each time: kept)
    b.position_at_end(done)
    b.ret(ir.Constant(I32, 0))
    library = CodeLibrary(module)
    library.finalize()
    return library


class PoolProbe:
    def __init__(self, chunks: int, work: int):
        thread_pool.register_symbols()
        self.library = _probe_library()
        self.chunk_fn = self.library.address("probe_chunk")
        self.tsc = ctypes.CFUNCTYPE(ctypes.c_int64)(self.library.address("probe_tsc"))
        self.pool = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                                     ctypes.c_int64, ctypes.c_int64)(
            llvm.address_of_symbol(thread_pool.SYMBOL))
        self.chunks = chunks
        self.buffer = np.zeros((2 + chunks) * LINE, np.int64)
        libc = ctypes.CDLL(None)
        libc.pthread_self.restype = ctypes.c_ulong
        self.buffer[0] = np.uint64(libc.pthread_self()).view(np.int64)
        self.buffer[LINE] = work
        self.records = self.buffer[2 * LINE:].reshape(chunks, LINE)[:, :2]
        self.ghz = self._tsc_ghz()

    def _tsc_ghz(self) -> float:
        t0, c0 = time.perf_counter(), self.tsc()
        time.sleep(0.1)
        return (self.tsc() - c0) / (time.perf_counter() - t0) / 1e9

    def loop(self, threads: int) -> tuple[float, int, float | None, float | None]:
        """One loop: its time, the chunks pool threads ran, and when the first chunk started
        on a pool thread and on the caller (µs after the call began; None if none did)."""
        address = self.buffer.ctypes.data
        start = self.tsc()
        self.pool(self.chunk_fn, address, self.chunks, 1, threads)
        end = self.tsc()
        us = lambda ticks: ticks / self.ghz / 1e3  # noqa: E731
        pooled = self.records[:, 1] == 1
        first = lambda rows: us(rows[:, 0].min() - start) if len(rows) else None  # noqa: E731
        return us(end - start), int(pooled.sum()), first(self.records[pooled]), first(self.records[~pooled])


def _wait(kind: str, us: int) -> None:
    if kind == "sleep":
        time.sleep(us / 1e6)
        return
    end = time.perf_counter_ns() + us * 1000
    while time.perf_counter_ns() < end:
        pass


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m irjit.tools.bench_pool")
    ap.add_argument("--chunks", type=int, default=20, help="chunks per loop (one work item each)")
    ap.add_argument("--work", type=int, default=3000, help="loads per chunk (a pause-free busy loop)")
    ap.add_argument("--calls", type=int, default=60, help="loops per gap (the first 5 not counted)")
    args = ap.parse_args(argv)
    probe = PoolProbe(args.chunks, args.work)
    serial = statistics.median(probe.loop(1)[0] for _ in range(args.calls))
    print(f"pool spin {thread_pool.spin_microseconds()} us; {args.chunks} chunks; time stamp counter "
          f"{probe.ghz:.2f} GHz; the loop on one thread: {serial:.1f} us")
    print(f"{'gap':>14} {'loop us':>8} {'joined':>7} {'chunks':>7} {'pool start':>11} {'caller start':>13}")
    fmt = lambda v: f"{statistics.median(v):.1f}" if v else "-"  # noqa: E731
    for kind, gap in GAPS:
        calls = args.calls if gap < 100_000 else max(10, args.calls // 6)
        rows = []
        for _ in range(calls):
            _wait(kind, gap)
            rows.append(probe.loop(2))
        rows = rows[5:]
        joined = sum(r[1] > 0 for r in rows) / len(rows)
        print(f"{kind:>5} {gap:6d} us {statistics.median(r[0] for r in rows):8.1f} {joined * 100:6.0f}% "
              f"{statistics.mean(r[1] for r in rows):7.1f} {fmt([r[2] for r in rows if r[2] is not None]):>11} "
              f"{fmt([r[3] for r in rows if r[3] is not None]):>13}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
