"""A persistent pool of native threads for the parallel loops of generated code, written in LLVM IR
(no C compiler at run time) and compiled once per process: `irjit_parallel_for(fn, args, size,
chunk, threads)` runs `fn(args, start, stop)` over chunks of [0, size) on the calling thread and
`threads - 1` pool threads, which claim chunks from an atomic counter, and returns the first
non-zero status a chunk returned.

Creating and joining threads for every loop cost ~25 µs a loop here (more when the other core is
busy); pool threads are created on first use and then wait for work, spinning for SPIN_US and
then asleep on a futex (`syscall(SYS_futex)` from the process's libc), woken only if asleep. One loop runs on the pool at
a time: a loop that finds it busy (another Python thread's) runs on its own thread alone, so
nothing ever waits for the pool. After a `fork` the child has none of the parent's pool
threads: the pool notices the new process id and starts afresh."""

from __future__ import annotations

import _thread
import ctypes
import os
import platform
import threading
from typing import Optional

import llvmlite.binding as llvm
from llvmlite import ir

from .ir_loops import entry_alloca
from .source_version import generator_version

I32 = ir.IntType(32)
I64 = ir.IntType(64)
PTR = ir.PointerType()
SYMBOL = "irjit_parallel_for"
MODULE = "irjit_thread_pool"
SYS_FUTEX = 202  # x86-64
FUTEX_WAIT_PRIVATE = 128
FUTEX_WAKE_PRIVATE = 129
CLOCK_MONOTONIC = 1
# How long a pool thread (or a caller waiting for one) keeps looking for work before it sleeps:
# waking a sleeping thread cost the waker ~8 µs in `futex` here and the thread 5-40 µs to start
# (more the longer the process idled), so a thread that slept between the loops of one call
# joined few of them; within a call loops come at most a few hundred µs apart. OpenMP runtimes
# spin 0.2-200 ms for the same reason. `IRJIT_POOL_SPIN_US` overrides it (0: sleep at once).
SPIN_US = 2000
CHECK_EVERY = 64  # spins between looks at the clock

# i32 fn(ptr args, i64 start, i64 stop)
RANGE_TYPE = ir.FunctionType(I32, [PTR, I64, I64])
POOL_TYPE = ir.FunctionType(I32, [PTR, PTR, I64, I64, I64])

_lock = threading.Lock()
_library: Optional[object] = None
_compiling: Optional[tuple] = None  # (process id, done event) of the thread compiling the pool
_compiled: list = []  # what that thread made: the library, or the exception it raised
_go = threading.Event()  # set when it may start: as the unit that needs the pool starts optimizing


def _libc_symbols() -> None:
    libc = ctypes.CDLL(None)
    for name in ("pthread_create", "pthread_detach", "syscall", "getpid", "clock_gettime",
                 "sched_yield"):
        llvm.add_symbol(f"irjit_pool_{name}", ctypes.cast(getattr(libc, name), ctypes.c_void_p).value)


def start() -> None:
    """Begin making the pool (once per process) without waiting for it: linked from the disk
    cache at once, else compiled on a thread of its own (`_compile`), which starts when the
    unit that needs it starts optimizing (`library.while_optimizing`) and runs meanwhile.
    `register_symbols` waits for it."""
    global _compiling
    with _lock:
        if _library is not None or _compiling is not None:
            return
        from .library import (before_linking, host_layout, load_remembered, target_machine,
                              while_optimizing)
        before_linking(SYMBOL, register_symbols)  # (a unit calling the pool waits for it)
        _libc_symbols()
        library = load_remembered(MODULE, _reference())
        if library is not None:
            _publish(library)
            return
        # every LLVM object the other thread needs is made by this one: the other makes no
        # LLVM call that waits for llvmlite's lock (the caller's pipeline holds it for ~25 ms)
        context = llvm.create_context()
        target_machine(0), host_layout()
        while_optimizing(SYMBOL, _go.set)
        done = threading.Event()
        _compiling = (os.getpid(), done)
        # (not threading.Thread: its start waits until the new thread runs, 1-5 ms of this
        # unit when other processes keep the cores busy)
        _thread.start_new_thread(_compile_into, (_compiled, context, done))


def _pool_ir() -> str:
    from .library import new_module
    module = new_module(MODULE)
    _PoolEmitter(module).emit()
    return str(module)


def _compile(context) -> object:
    """The pool's library: its IR emitted and printed (~3 ms of Python), then compiled at -O0
    (it waits and hands out chunks) in `context`, an LLVM context of its own, without
    llvmlite's lock (`library._compile_apart`). On its own thread it runs while the unit that
    needs it is optimized on the calling one (a process's first threaded unit had waited ~10 ms
    for the pool's LLVM calls under that lock, and ~5 ms at a time for the GIL while the pool's
    IR was emitted during its own emission)."""
    from .library import CodeLibrary
    library = CodeLibrary(None, MODULE, optimized=False, context=context, more_ir=_pool_ir())
    library.finalize()
    return library


def _compile_into(results: list, context, done: threading.Event) -> None:
    _go.wait()
    try:
        results.append(_compile(context))
    except BaseException as e:  # (re-raised by the thread that waits for the pool)
        results.append(e)
    finally:
        done.set()


def _publish(library) -> None:
    global _library
    llvm.add_symbol(SYMBOL, library.address(SYMBOL))
    _library = library


def register_symbols() -> None:
    """Make the pool (`start`, then wait for it) and `irjit_parallel_for` resolvable from
    modules the JIT links afterwards. Its object code is kept in the disk cache, keyed by its
    IR text, with a note keyed by the generator's source version (`_reference`) that names
    that entry: a process whose source is unchanged links the pool without emitting or
    printing its IR (~2.5 ms of a process's first threaded unit), and an edited emitter,
    another source version, emits its IR and finds or makes the entry of that text."""
    start()
    if _library is not None:
        return
    _go.set()
    pid, done = _compiling
    if pid == os.getpid():  # (a forked child has no such thread)
        done.wait()
    with _lock:
        if _library is not None:
            return
        from .library import remember_library
        made = _compiled[0] if _compiled else None
        if isinstance(made, BaseException):
            raise made
        if made is None:  # (a process forked while its parent compiled: it compiles here)
            made = _compile(llvm.create_context())
        remember_library(_reference(), made)
        _publish(made)


def _reference() -> str:
    """What the pool's IR is made from: this source (the generator's version covers every
    module of the code generator, this one included), the spin time (IRJIT_POOL_SPIN_US),
    the machine, and -O0 code."""
    return f"{MODULE}|{generator_version()}|spin {spin_microseconds()}|{platform.machine()}|unoptimized"


class _PoolEmitter:
    """The pool's globals, its worker and `irjit_parallel_for`."""

    def __init__(self, module: ir.Module):
        self.module = module
        g = lambda name, ty: self._global(name, ty)  # noqa: E731
        self.lock, self.pid, self.workers = g("lock", I32), g("pid", I32), g("workers", I32)
        self.gen, self.status = g("gen", I32), g("status", I32)
        # threads asleep on `gen` (pool threads) and on `active` (a caller): a wake is a system
        # call (~1 µs, ~8 µs when it finds a sleeper), made only when someone sleeps
        self.gen_sleepers, self.active_sleepers = g("gen_sleepers", I32), g("active_sleepers", I32)
        # pool threads inside a loop, and whether a loop is open for them to join (see `emit`)
        self.active, self.open = g("active", I32), g("open", I32)
        self.fn, self.args = g("fn", I64), g("args", I64)  # pointers, as integers
        self.size, self.chunk, self.next = g("size", I64), g("chunk", I64), g("next", I64)
        declare = lambda name, ty: ir.Function(module, ty, name=f"irjit_pool_{name}")  # noqa: E731
        self.create = declare("pthread_create", ir.FunctionType(I32, [PTR, PTR, PTR, PTR]))
        self.detach = declare("pthread_detach", ir.FunctionType(I32, [I64]))
        self.syscall = declare("syscall", ir.FunctionType(I64, [I64], var_arg=True))
        self.getpid = declare("getpid", ir.FunctionType(I32, []))
        self.clock = declare("clock_gettime", ir.FunctionType(I32, [I32, PTR]))
        self.sched_yield = declare("sched_yield", ir.FunctionType(I32, []))
        self.spin_ns = spin_microseconds() * 1000
        self.pause = None
        if platform.machine() in ("x86_64", "AMD64"):
            self.pause = ir.Function(module, ir.FunctionType(ir.VoidType(), []), name="llvm.x86.sse2.pause")

    def _global(self, name: str, ty: ir.Type) -> ir.GlobalVariable:
        v = ir.GlobalVariable(self.module, ty, name=f"irjit_pool_{name}")
        v.linkage = "internal"
        v.initializer = ir.Constant(ty, None)
        v.align = 64  # one cache line each: the counters are written by several threads
        return v

    def emit(self) -> None:
        """The caller publishes a loop, opens it, claims chunks, closes it and waits only for
        the pool threads inside it (`active`); a pool thread counts itself in before it looks
        whether a loop is open and out when its chunks are done. With sequentially consistent
        atomics a thread either sees the loop open while the caller will wait for it, or sees
        it closed and touches nothing: the caller never waits for a thread that is asleep or
        not scheduled and so takes no chunk (waking it cost ~30 µs a loop on this VM)."""
        self.claim = self._emit_claim()
        self.worker = self._emit_worker()
        self._emit_parallel_for()

    # ---- helpers
    def _load(self, b, ptr, ty):
        return b.load_atomic(ptr, "seq_cst", 8 if ty == I64 else 4, typ=ty)

    def _futex(self, b, ptr, op: int, value) -> None:
        b.call(self.syscall, [ir.Constant(I64, SYS_FUTEX), b.ptrtoint(ptr, I64), ir.Constant(I32, op),
                              value, ir.Constant(PTR, None), ir.Constant(PTR, None), ir.Constant(I32, 0)])

    def _now_ns(self, b, timespec):
        b.call(self.clock, [ir.Constant(I32, CLOCK_MONOTONIC), timespec])
        sec = b.load(timespec, typ=I64)
        nsec = b.load(b.gep(timespec, [ir.Constant(I64, 1)], source_etype=I64), typ=I64)
        return b.add(b.mul(sec, ir.Constant(I64, 1_000_000_000)), nsec)

    def _wait_while_equal(self, b, ptr, value, sleepers) -> None:
        """Until *ptr != value: spin for `spin_ns` (looking at the clock and yielding the core
        to any thread waiting for it every CHECK_EVERY spins), then sleep on the futex, counted in `sleepers` while asleep (so a waker that
        finds none makes no system call: with sequentially consistent atomics a waker that
        reads no sleeper changed *ptr before the sleeper counted itself in, and the futex then
        finds *ptr != value and does not sleep)."""
        fn = b.function
        spin, check, clock, sleep, done = (fn.append_basic_block(n)
                                           for n in ("spin", "check", "clock", "sleep", "done"))
        count = entry_alloca(b, I32)  # (a loop's alloca would grow the stack a round)
        timespec = entry_alloca(b, ir.ArrayType(I64, 2))
        deadline = b.add(self._now_ns(b, timespec), ir.Constant(I64, self.spin_ns))
        b.store(ir.Constant(I32, 0), count)
        b.branch(check)
        b.position_at_end(check)
        b.cbranch(b.icmp_signed("!=", self._load(b, ptr, I32), value), done, spin)
        b.position_at_end(spin)
        n = b.add(b.load(count), ir.Constant(I32, 1))
        b.store(n, count)
        if self.pause is not None:
            b.call(self.pause, [])
        look = b.icmp_signed("==", b.and_(n, ir.Constant(I32, CHECK_EVERY - 1)), ir.Constant(I32, 0))
        b.cbranch(look, clock, check)
        b.position_at_end(clock)
        b.call(self.sched_yield, [])  # a thread of any process waiting for this core goes first
        b.cbranch(b.icmp_signed("<", self._now_ns(b, timespec), deadline), check, sleep)
        b.position_at_end(sleep)
        b.atomic_rmw("add", sleepers, ir.Constant(I32, 1), "seq_cst")
        self._futex(b, ptr, FUTEX_WAIT_PRIVATE, value)
        b.atomic_rmw("sub", sleepers, ir.Constant(I32, 1), "seq_cst")
        b.branch(check)
        b.position_at_end(done)

    def _wake_sleepers(self, b, ptr, sleepers, count: int) -> None:
        with b.if_then(b.icmp_signed("!=", self._load(b, sleepers, I32), ir.Constant(I32, 0))):
            self._futex(b, ptr, FUTEX_WAKE_PRIVATE, ir.Constant(I32, count))

    def _emit_claim(self) -> ir.Function:
        """void claim(): run chunks until none is left; a failing chunk's status is kept."""
        fn = ir.Function(self.module, ir.FunctionType(ir.VoidType(), []), name="irjit_pool_claim")
        fn.linkage = "internal"
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        loop, run, done = (fn.append_basic_block(n) for n in ("loop", "run", "done"))
        b.branch(loop)
        b.position_at_end(loop)
        size, chunk = self._load(b, self.size, I64), self._load(b, self.chunk, I64)
        start = b.atomic_rmw("add", self.next, chunk, "seq_cst")
        b.cbranch(b.icmp_signed("<", start, size), run, done)
        b.position_at_end(run)
        stop = b.add(start, chunk)
        stop = b.select(b.icmp_signed("<", stop, size), stop, size)
        target = self._load(b, self.fn, I64)
        args = b.inttoptr(self._load(b, self.args, I64), PTR)
        status = b.call(_typed(b, target), [args, start, stop])
        with b.if_then(b.icmp_signed("!=", status, ir.Constant(I32, 0))):
            b.cmpxchg(self.status, ir.Constant(I32, 0), status, "seq_cst", "seq_cst")
        b.branch(loop)
        b.position_at_end(done)
        b.ret_void()
        return fn

    def _emit_worker(self) -> ir.Function:
        """ptr worker(ptr first_generation): forever wait for a new generation, count itself
        in, claim chunks if the loop is still open, count itself out (waking the caller when
        it is the last)."""
        fn = ir.Function(self.module, ir.FunctionType(PTR, [PTR]), name="irjit_pool_worker")
        fn.linkage = "internal"
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        seen = entry_alloca(b, I32)
        b.store(b.trunc(b.ptrtoint(fn.args[0], I64), I32), seen)
        loop = fn.append_basic_block("loop")
        b.branch(loop)
        b.position_at_end(loop)
        self._wait_while_equal(b, self.gen, b.load(seen), self.gen_sleepers)
        b.store(self._load(b, self.gen, I32), seen)
        b.atomic_rmw("add", self.active, ir.Constant(I32, 1), "seq_cst")
        with b.if_then(b.icmp_signed("!=", self._load(b, self.open, I32), ir.Constant(I32, 0))):
            b.call(self.claim, [])
        left = b.atomic_rmw("sub", self.active, ir.Constant(I32, 1), "seq_cst")
        with b.if_then(b.icmp_signed("==", left, ir.Constant(I32, 1))):
            self._wake_sleepers(b, self.active, self.active_sleepers, 1)
        b.branch(loop)
        return fn

    def _emit_parallel_for(self) -> None:
        fn = ir.Function(self.module, POOL_TYPE, name=SYMBOL)
        target, args, size, chunk, threads = fn.args
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        serial, pooled = fn.append_basic_block("serial"), fn.append_basic_block("pooled")
        # a forked child has none of its parent's pool threads: start afresh
        pid = b.call(self.getpid, [])
        with b.if_then(b.icmp_signed("!=", pid, b.load(self.pid))):
            for v in (self.lock, self.workers, self.gen, self.active, self.open,
                      self.gen_sleepers, self.active_sleepers):
                b.store(ir.Constant(I32, 0), v)
            b.store(pid, self.pid)
        locked = b.extract_value(b.cmpxchg(self.lock, ir.Constant(I32, 0), ir.Constant(I32, 1),
                                           "seq_cst", "seq_cst"), 1)
        wanted = b.and_(locked, b.icmp_signed(">", threads, ir.Constant(I64, 1)))
        b.cbranch(wanted, pooled, serial)

        b.position_at_end(serial)  # the pool is busy (or one thread was asked for)
        status = b.call(_typed(b, b.ptrtoint(target, I64)), [args, ir.Constant(I64, 0), size])
        with b.if_then(locked):
            b.store_atomic(ir.Constant(I32, 0), self.lock, "seq_cst", 4)
        b.ret(status)

        b.position_at_end(pooled)
        want = b.trunc(b.sub(threads, ir.Constant(I64, 1)), I32)
        grow, grown = fn.append_basic_block("grow"), fn.append_basic_block("grown")
        b.branch(grow)
        b.position_at_end(grow)
        have = b.load(self.workers)
        more = fn.append_basic_block("more")
        b.cbranch(b.icmp_signed("<", have, want), more, grown)
        b.position_at_end(more)
        tid = entry_alloca(b, I64)
        first = b.inttoptr(b.zext(self._load(b, self.gen, I32), I64), PTR)
        rc = b.call(self.create, [tid, ir.Constant(PTR, None), self.worker, first])
        created = fn.append_basic_block("created")
        b.cbranch(b.icmp_signed("==", rc, ir.Constant(I32, 0)), created, grown)
        b.position_at_end(created)
        b.call(self.detach, [b.load(tid)])
        b.store(b.add(have, ir.Constant(I32, 1)), self.workers)
        b.branch(grow)

        b.position_at_end(grown)
        b.store_atomic(b.ptrtoint(target, I64), self.fn, "seq_cst", 8)
        b.store_atomic(b.ptrtoint(args, I64), self.args, "seq_cst", 8)
        b.store_atomic(size, self.size, "seq_cst", 8)
        b.store_atomic(chunk, self.chunk, "seq_cst", 8)
        b.store_atomic(ir.Constant(I64, 0), self.next, "seq_cst", 8)
        b.store_atomic(ir.Constant(I32, 0), self.status, "seq_cst", 4)
        b.store_atomic(ir.Constant(I32, 1), self.open, "seq_cst", 4)
        b.atomic_rmw("add", self.gen, ir.Constant(I32, 1), "seq_cst")
        self._wake_sleepers(b, self.gen, self.gen_sleepers, 2 ** 31 - 1)
        b.call(self.claim, [])
        b.store_atomic(ir.Constant(I32, 0), self.open, "seq_cst", 4)
        wait, finished = fn.append_basic_block("wait"), fn.append_basic_block("finished")
        b.branch(wait)
        b.position_at_end(wait)
        left = self._load(b, self.active, I32)
        sleep = fn.append_basic_block("sleep")
        b.cbranch(b.icmp_signed("==", left, ir.Constant(I32, 0)), finished, sleep)
        b.position_at_end(sleep)
        self._wait_while_equal(b, self.active, left, self.active_sleepers)
        b.branch(wait)
        b.position_at_end(finished)
        status = self._load(b, self.status, I32)
        b.store_atomic(ir.Constant(I32, 0), self.lock, "seq_cst", 4)
        b.ret(status)


def spin_microseconds() -> int:
    """How long pool threads spin before they sleep: SPIN_US, or `IRJIT_POOL_SPIN_US`."""
    text = os.environ.get("IRJIT_POOL_SPIN_US", "").strip()
    try:
        return max(0, int(text)) if text else SPIN_US
    except ValueError:
        raise ValueError(f"IRJIT_POOL_SPIN_US must be a whole number of microseconds, not {text!r}") from None


def _typed(b: ir.IRBuilder, address: ir.Value) -> ir.Value:
    """A range function's address as a typed pointer, so llvmlite can call it."""
    return b.inttoptr(address, RANGE_TYPE.as_pointer())
