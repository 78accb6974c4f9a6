"""Benchmark: the tiled GEMM (gemm_tiled.py) against the BLAS for matrix products as native units
emit them, per shape and operand layout, to set `gemm_tiled.gemm_algorithm`'s rule.

Each product is compiled both ways into a JIT function that runs it `--calls` times in a native
loop; the best of `--repeat` timed runs is reported (the minimum is the least disturbed by other
processes on a shared machine), in CPU time with `--threads 1` (irjit's and OpenBLAS's threads
held to one, the default) or wall time with more. The shapes are the bench workloads' and
architectures' products (A m x k, B k x n; "NT" reads B transposed, as a linear layer reads its
weight), then a grid.

    python -m irjit.tools.bench_products [--threads 1] [--calls 5] [--repeat 15] [--only 1024]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
from llvmlite import ir

from irjit.compiler.codegen import gemm_tiled, parallel
from irjit.compiler.codegen.emit import emit_product
from irjit.compiler.codegen.kernel import Buffer, Operand, Product
from irjit.compiler.codegen.library import new_module
from irjit.compiler.codegen.matmul import matmul_layout
from irjit.tools.native_loop import best_us, looped

MALLOC_TUNABLES = "glibc.malloc.trim_threshold=4294967295:glibc.malloc.mmap_threshold=33554432"

# (label, m, n, k, layout): layout is how A and B are stored, "N" as is, "T" transposed
SHAPES = [
    ("mlp fc1", 128, 1024, 512, "NT"), ("mlp fc2", 128, 10, 1024, "NT"),
    ("mlp dX1", 128, 512, 1024, "NN"), ("mlp dW1", 1024, 512, 128, "TN"),
    ("lstm gates", 64, 1024, 256, "NT"), ("lstm dX", 64, 256, 1024, "NN"),
    ("lstm dW", 1024, 256, 64, "TN"), ("vit qkv", 65, 192, 64, "NT"), ("vit fc1", 65, 256, 64, "NT"),
    ("vit fc2", 65, 64, 256, "NT"), ("rnn step", 32, 128, 128, "NN"), ("lstm2 cell", 8, 128, 32, "NT"),
    ("square 256", 256, 256, 256, "NN"), ("square 512", 512, 512, 512, "NN"),
    ("wide 16x4096x64", 16, 4096, 64, "NT"), ("tall 4096x16x64", 4096, 16, 64, "NN"),
    ("thin 256x32x256", 256, 32, 256, "NT"), ("batch rows 8x64x64", 8, 64, 64, "NN"),
]


def _operand(rows: int, cols: int, transposed: bool) -> tuple[tuple, tuple, np.ndarray]:
    """(shape, strides in elements, storage) of a rows x cols float32 operand."""
    rng = np.random.default_rng(rows * 7 + cols)
    if transposed:
        store = rng.standard_normal((cols, rows)).astype(np.float32)
        return (rows, cols), (1, rows), store
    store = rng.standard_normal((rows, cols)).astype(np.float32)
    return (rows, cols), (cols, 1), store


def _compile(a, b, algorithm: str):
    (a_shape, a_strides, _), (b_shape, b_strides, _) = a, b
    layout = matmul_layout(a_shape, a_strides, b_shape, b_strides)
    plan = gemm_tiled.batched_plan(layout, "float32")
    scratch = plan.scratch_elems if algorithm == "tiled" else 0
    dtype = np.dtype(np.float32)
    product = Product(Operand(0, a_shape, a_strides), Operand(1, b_shape, b_strides), 2, dtype,
                      algorithm, 3 if scratch else None)
    module = new_module(f"bench_products_{algorithm}_{abs(hash((a_shape, a_strides, b_shape, b_strides)))}")
    fn = emit_product(module, "product", [Buffer(i, dtype, (), (), i >= 2) for i in range(4)], product)
    return looped(module, fn, 4, ir.FloatType().as_pointer()), max(1, scratch), layout


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1, help="threads for both (1: CPU time, else wall)")
    ap.add_argument("--calls", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--only", help="shapes whose label contains this")
    args = ap.parse_args(argv)
    parallel.thread_count = lambda: args.threads
    clock = time.process_time if args.threads == 1 else time.perf_counter
    print(f"{'product':22} {'m x n x k':>16} {'AB':>3} {'blas µs':>9} {'tiled µs':>9} "
          f"{'blas GF/s':>9} {'tiled GF/s':>10} {'faster':>6} {'rule':>6}")
    wrong = 0
    for label, m, n, k, layout in SHAPES:
        if args.only and args.only not in label:
            continue
        a, b = _operand(m, k, layout[0] == "T"), _operand(k, n, layout[1] == "T")
        times = {}
        for algorithm in ("blas", "tiled"):
            fn, scratch, mlayout = _compile(a, b, algorithm)
            out = np.empty((m, n), np.float32)
            spare = np.empty(scratch, np.float32)
            pointers = [a[2].ctypes.data, b[2].ctypes.data, out.ctypes.data, spare.ctypes.data]
            calls = max(1, min(args.calls, int(2e8 // (2 * m * n * k))))
            times[algorithm] = best_us(lambda: fn(calls, *pointers), calls, args.repeat, clock)
        faster = min(times, key=times.get)
        rule = gemm_tiled.gemm_algorithm(mlayout, "float32")
        wrong += rule != faster
        gf = lambda t: 2 * m * n * k / t / 1e3  # noqa: E731
        print(f"{label:22} {f'{m} x {n} x {k}':>16} {layout:>3} {times['blas']:9.1f} {times['tiled']:9.1f} "
              f"{gf(times['blas']):9.1f} {gf(times['tiled']):10.1f} {faster:>6} {rule:>6}"
              f"{'' if rule == faster else '  <- the rule picks the slower one'}", flush=True)
    print(f"the rule picked the slower algorithm {wrong} time(s)")
    return 0


if __name__ == "__main__":
    wanted = [a for a in sys.argv[1:] if a.startswith("--threads")]
    threads = "1"
    if wanted:
        threads = wanted[0].split("=", 1)[1] if "=" in wanted[0] else sys.argv[sys.argv.index(wanted[0]) + 1]
    # re-exec unless both are already set: numpy starts OpenBLAS's threads when imported, so a
    # process started with our tunables but not OPENBLAS_NUM_THREADS timed a 2-thread BLAS
    if os.environ.get("GLIBC_TUNABLES") != MALLOC_TUNABLES or os.environ.get("OPENBLAS_NUM_THREADS") != threads:
        os.execve(sys.executable, [sys.executable] + sys.orig_argv[1:],
                  dict(os.environ, GLIBC_TUNABLES=MALLOC_TUNABLES, OPENBLAS_NUM_THREADS=threads))
    sys.exit(main())
