"""For the code generator's benchmarks: a JIT function that calls a unit's product `calls`
times in a native loop (so a per-call time leaves ctypes out), and the best per-call time."""

from __future__ import annotations

import ctypes
import time

from llvmlite import ir

from irjit.compiler.codegen.ir_loops import I64, for_range
from irjit.compiler.codegen.library import CodeLibrary


def looped(module: ir.Module, fn: ir.Function, n_args: int, ptr: ir.Type):
    """`run(calls, p0, ..., p{n_args-1})` calling `fn(p0, ...)` `calls` times, compiled with
    `module` (which holds `fn`); the returned ctypes function keeps its library alive."""
    run = ir.Function(module, ir.FunctionType(ir.VoidType(), [I64] + [ptr] * n_args), "run")
    builder = ir.IRBuilder(run.append_basic_block())
    with for_range(builder, 0, run.args[0]):
        builder.call(fn, run.args[1:])
    builder.ret_void()
    library = CodeLibrary(module)
    library.finalize()
    cfunc = ctypes.CFUNCTYPE(None, ctypes.c_int64, *[ctypes.c_void_p] * n_args)(library.address("run"))
    cfunc.library = library
    return cfunc


def best_us(fn, calls: int, repeat: int, clock=time.process_time) -> float:
    """The best of `repeat` timed runs of `fn()` (which makes `calls` calls), per call in µs:
    the minimum is the run least disturbed by other processes on a shared machine."""
    fn()
    times = []
    for _ in range(repeat):
        start = clock()
        fn()
        times.append((clock() - start) / calls * 1e6)
    return min(times)
