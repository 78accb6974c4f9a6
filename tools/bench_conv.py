"""Benchmark: im2col + GEMM against the direct kernel for convolution products, per shape, to set
the rule of `conv_algorithm.conv_algorithm`.

For each float32 shape and mode (forward, grad_input) that both algorithms compute, one JIT
function runs the product `--calls` times in a native loop with each algorithm, on one thread
(BLAS's and irjit's threads are held to one, so the choice does not depend on the load of the
other core), timed in CPU time (other processes' time slices are not counted). Prints the
best per-call time of each, the faster one, and the one the rule picks.

    python -m irjit.tools.bench_conv [--calls 20] [--repeat 9] [--only resnet]
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np
from llvmlite import ir

from irjit.compiler.codegen import conv_algorithm, parallel
from irjit.compiler.codegen.conv import Conv2dShape
from irjit.compiler.codegen.emit import emit_convolution
from irjit.compiler.codegen.kernel import Buffer, Convolution
from irjit.compiler.codegen.library import new_module
from irjit.tools.native_loop import best_us, looped

MALLOC_TUNABLES = "glibc.malloc.trim_threshold=4294967295:glibc.malloc.mmap_threshold=33554432"


def _shape(n, c, hw, o, k, stride=1, padding=None, groups=1) -> Conv2dShape:
    p = k // 2 if padding is None else padding
    return Conv2dShape(n, c, hw, hw, o, k, k, (stride, stride), (p, p), (1, 1), groups)


# name -> shape: the bench workloads' and architectures' convolutions, then a grid
SHAPES = {
    "seed_conv_relu": _shape(1, 3, 8, 32, 3, padding=0),
    "resnet stem": _shape(8, 3, 32, 16, 3),
    "resnet block": _shape(8, 16, 32, 16, 3),
    "mobilenet stem": _shape(8, 3, 32, 16, 3, stride=2),
    "mobilenet pw 16-32": _shape(8, 16, 16, 32, 1),
    "mobilenet pw 32-32": _shape(8, 32, 16, 32, 1),
    "c32 56x56": _shape(1, 32, 56, 32, 3),
    "c64 28x28": _shape(4, 64, 28, 64, 3),
    "c64 56x56 s2": _shape(1, 64, 56, 128, 3, stride=2),
    "c128 14x14": _shape(4, 128, 14, 128, 3),
    "c256 7x7": _shape(8, 256, 7, 256, 3),
    "c256 14x14": _shape(1, 256, 14, 256, 3),
    "c512 7x7": _shape(1, 512, 7, 512, 3),
    "c3 224 7x7 s2": _shape(1, 3, 224, 64, 7, stride=2),
    "c16 8x8": _shape(16, 16, 8, 16, 3),
    "c64 4x4": _shape(32, 64, 4, 64, 3),
    "c8 64x64 g2": _shape(2, 8, 64, 8, 3, groups=2),
    "c64 28 pw": _shape(4, 64, 28, 128, 1),
}


def _compile(shape: Conv2dShape, mode: str, algorithm: str):
    """(run(calls, *arrays), buffer sizes) for the product: buffers x/grad, weight, out, scratch."""
    dtype = np.dtype(np.float32)
    if mode == "forward":
        sizes = [(shape.batch, shape.in_channels, shape.height, shape.width),
                 (shape.out_channels, shape.group_in, shape.kernel_h, shape.kernel_w),
                 (shape.batch, shape.out_channels, shape.out_h, shape.out_w)]
    else:
        sizes = [(shape.batch, shape.out_channels, shape.out_h, shape.out_w),
                 (shape.out_channels, shape.group_in, shape.kernel_h, shape.kernel_w),
                 (shape.batch, shape.in_channels, shape.height, shape.width)]
    scratch = max(1, conv_algorithm.scratch_elems(shape, mode, "float32", algorithm))
    sizes.append((scratch,))
    buffers = [Buffer(i, dtype, s, (), i >= 2) for i, s in enumerate(sizes)]
    product = Convolution(shape, 0 if mode == "forward" else None, 1, None, 2, 3, dtype, mode,
                          grad=0 if mode == "grad_input" else None, algorithm=algorithm)
    module = new_module(f"bench_conv_{mode}_{algorithm}_{abs(hash(shape))}")
    fn = emit_convolution(module, "product", buffers, product)
    return looped(module, fn, 4, ir.FloatType().as_pointer()), sizes


def time_product(shape: Conv2dShape, mode: str, algorithm: str, calls: int, repeat: int) -> float:
    run, sizes = _compile(shape, mode, algorithm)
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in sizes]
    pointers = [a.ctypes.data for a in arrays]
    n = max(1, min(calls, int(5e7 // max(1, shape.batch * shape.out_channels * shape.pixels * shape.patch))))
    return best_us(lambda: run(n, *pointers), n, repeat)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=20, help="products per timed run (fewer for large ones)")
    ap.add_argument("--repeat", type=int, default=9, help="timed runs; the best is reported")
    ap.add_argument("--only", help="shapes whose name contains this")
    args = ap.parse_args(argv)
    parallel.thread_count = lambda: 1  # the choice is per core
    print(f"{'shape':20} {'mode':10} {'im2col µs':>10} {'direct µs':>10} {'faster':>7} {'rule':>7}")
    wrong = 0
    for name, shape in SHAPES.items():
        if args.only and args.only not in name:
            continue
        for mode in ("forward", "grad_input"):
            applies = conv_algorithm.direct_applies(shape, mode, "float32")
            if not applies:
                continue
            t_im2col = time_product(shape, mode, "im2col", args.calls, args.repeat)
            t_direct = time_product(shape, mode, "direct", args.calls, args.repeat)
            faster = "direct" if t_direct < t_im2col else "im2col"
            rule = conv_algorithm.conv_algorithm(shape, mode, "float32")
            wrong += rule != faster
            print(f"{name:20} {mode:10} {t_im2col:10.1f} {t_direct:10.1f} {faster:>7} {rule:>7}"
                  f"{'' if rule == faster else '  <- the rule picks the slower one'}", flush=True)
    print(f"the rule picked the slower algorithm {wrong} time(s)")
    return 0


if __name__ == "__main__":
    # (and BLAS on one thread from the start: numpy starts its threads when imported)
    if os.environ.get("GLIBC_TUNABLES") != MALLOC_TUNABLES or os.environ.get("OPENBLAS_NUM_THREADS") != "1":
        os.execve(sys.executable, [sys.executable] + sys.orig_argv[1:],
                  dict(os.environ, GLIBC_TUNABLES=MALLOC_TUNABLES, OPENBLAS_NUM_THREADS="1"))
    sys.exit(main())
