"""Benchmark: where a BLAS call beats the loop GEMM kernel, to pick `blas.SMALL_GEMM_VOLUME`.

For each float32 shape, one JIT function runs the product `--calls` times in a native loop
through the loop kernel, another through the BLAS (`blas_library.default_library()`), so the
per-call time excludes ctypes; numpy's matmul into a preallocated output runs in the same
process. Reports the median per-call time (µs) and GFLOP/s of each, and the largest m*n*k below
which the loop kernel always won.

    python -m irjit.tools.bench_gemm [--calls 200] [--repeat 15] [--dtype float32]
"""

from __future__ import annotations

import argparse
import ctypes
import os
import statistics
import sys
import time

import llvmlite.binding as llvm
import numpy as np
from llvmlite import ir

from irjit.compiler.codegen import blas, blas_library
from irjit.compiler.codegen.blas import Matrix
from irjit.compiler.codegen.ir_loops import I64, for_range

# glibc returns freed memory to the OS eagerly by default; first touches then dominate timings.
MALLOC_TUNABLES = "glibc.malloc.trim_threshold=4294967295:glibc.malloc.mmap_threshold=33554432"

SHAPES = [(2, 2, 2), (3, 4, 4), (4, 4, 4), (5, 5, 5), (6, 6, 6), (7, 7, 7), (8, 8, 8), (4, 16, 8), (12, 12, 12), (16, 16, 16), (20, 20, 20),
          (24, 24, 24), (32, 32, 32), (48, 48, 48), (64, 64, 64), (96, 96, 96), (128, 128, 128),
          (256, 256, 256), (1, 64, 64), (64, 1, 64), (64, 64, 1), (1, 256, 256), (16, 64, 16),
          (128, 16, 8), (8, 128, 128), (512, 512, 512), (256, 1, 256), (1024, 1, 1024),
          (1, 1024, 1024), (2, 512, 512), (512, 2, 512)]


def _compile(dtype: str, library) -> ctypes.CFUNCTYPE:
    """`void run(calls, A, B, C, m, n, k)`: `calls` row-major products C = A @ B in a loop."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    tm = llvm.Target.from_default_triple().create_target_machine(
        cpu=llvm.get_host_cpu_name(), features=llvm.get_host_cpu_features().flatten(), opt=3)
    module = ir.Module("bench_gemm")
    module.triple, module.data_layout = tm.triple, str(tm.target_data)
    ptr = blas.ELEMENT_TYPES[dtype].as_pointer()
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [I64, ptr, ptr, ptr, I64, I64, I64]), "run")
    calls, a, b, c, m, n, k = fn.args
    builder = ir.IRBuilder(fn.append_basic_block())
    with for_range(builder, 0, calls):
        blas.emit_gemm(builder, dtype, m, n, k, Matrix(a, k, 1), Matrix(b, n, 1), Matrix(c, n, 1),
                       library=library, small_volume=0)
    builder.ret_void()
    mod = llvm.parse_assembly(str(module))
    pb = llvm.create_pass_builder(tm, llvm.create_pipeline_tuning_options(speed_level=3))
    pb.getModulePassManager().run(mod, pb)
    engine = llvm.create_mcjit_compiler(mod, tm)
    engine.finalize_object()
    run = ctypes.CFUNCTYPE(None, ctypes.c_int64, *[ctypes.c_void_p] * 3, *[ctypes.c_int64] * 3)(
        engine.get_function_address("run"))
    run.engine = engine  # the machine code lives as long as its engine
    return run


def _median_us(fn, calls: int, repeat: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(times)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=200, help="products per timed run")
    ap.add_argument("--repeat", type=int, default=15, help="timed runs; the median is reported")
    ap.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    args = ap.parse_args(argv)
    library = blas_library.default_library()
    if library is None:
        print("no BLAS found: generated code uses the loop kernel for every size")
        return 1
    loops, blas_call = _compile(args.dtype, None), _compile(args.dtype, library)
    rng = np.random.default_rng(0)
    print(f"BLAS: {library.abi}, {library.int_bits}-bit ints, {library.origin}")
    print(f"{'m x n x k':>16} {'m*n*k':>10} {'loop µs':>9} {'blas µs':>9} {'numpy µs':>9} "
          f"{'loop GF/s':>9} {'blas GF/s':>9} {'numpy GF/s':>10}")
    loop_wins_below = None
    for m, n, k in sorted(SHAPES, key=lambda s: s[0] * s[1] * s[2]):
        a = rng.standard_normal((m, k)).astype(args.dtype)
        b = rng.standard_normal((k, n)).astype(args.dtype)
        c = np.empty((m, n), args.dtype)
        pa, pb, pc = a.ctypes.data, b.ctypes.data, c.ctypes.data
        calls = max(1, min(args.calls, int(2e8 // (m * n * k))))
        t_loop = _median_us(lambda: loops(calls, pa, pb, pc, m, n, k), calls, args.repeat)
        t_blas = _median_us(lambda: blas_call(calls, pa, pb, pc, m, n, k), calls, args.repeat)

        def numpy_run():
            for _ in range(calls):
                np.matmul(a, b, out=c)
        t_numpy = _median_us(numpy_run, calls, args.repeat)
        gflops = lambda t: 2 * m * n * k / (t * 1e3)
        print(f"{f'{m} x {n} x {k}':>16} {m * n * k:>10} {t_loop:>9.3f} {t_blas:>9.3f} {t_numpy:>9.3f} "
              f"{gflops(t_loop):>9.2f} {gflops(t_blas):>9.2f} {gflops(t_numpy):>10.2f}")
        if t_blas < t_loop and loop_wins_below is None:
            loop_wins_below = m * n * k
    print(f"the first shape where the BLAS call wins has m*n*k = {loop_wins_below} "
          f"(blas.SMALL_GEMM_VOLUME = {blas.SMALL_GEMM_VOLUME})")
    return 0


if __name__ == "__main__":
    if os.environ.get("GLIBC_TUNABLES") != MALLOC_TUNABLES:
        os.execve(sys.executable, [sys.executable] + sys.orig_argv[1:],
                  dict(os.environ, GLIBC_TUNABLES=MALLOC_TUNABLES))
    sys.exit(main())
