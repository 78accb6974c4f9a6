"""Benchmark: where native threads start to pay, to pick `threads.WORK_THRESHOLD`.

Compiles the bench's element-wise chain at growing sizes twice, single-threaded and split
across the cores, checks the outputs are bit-identical and prints the median time per call of
each with the kernel's estimated work (`threads.kernel_work`) and its memory bound (3 arrays
read and 1 written over the all-core copy bandwidth measured in the same run).

    python -m irjit.tools.bench_threads [--repeat 50]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from irjit.compiler import parse_ir
from irjit.compiler.codegen import threads
from irjit.compiler.codegen.unit import NativeUnit
from irjit.compiler.passes import get_pass
from irjit.compiler.passes.specialize_input_types import parse_input_types, specialize_input_types
from irjit.tools.bench_native import machine_bounds
from irjit.tools.bench_workloads import load_workload

TUNABLES = "glibc.malloc.trim_threshold=4294967295:glibc.malloc.mmap_threshold=33554432"


def chain_unit(n: int, threaded: bool) -> NativeUnit:
    graph = parse_ir(load_workload("elementwise_chain").ir_path.read_text())
    specialize_input_types(graph, parse_input_types(", ".join([f"Float({n})"] * 3)))
    get_pass("propagate_input_shapes").run(graph)
    saved = threads.WORK_THRESHOLD
    threads.WORK_THRESHOLD = 0 if threaded else 1 << 62
    try:
        return NativeUnit(graph, f"bench_threads_{n}_{int(threaded)}")
    finally:
        threads.WORK_THRESHOLD = saved


def median_us(unit: NativeUnit, args, repeat: int) -> float:
    for _ in range(5):
        unit.call(args)
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        unit.call(args)
        times.append(time.perf_counter() - t)
    return float(np.median(times)) * 1e6


def main(argv=None) -> int:
    if os.environ.get("GLIBC_TUNABLES") != TUNABLES:
        os.environ["GLIBC_TUNABLES"] = TUNABLES
        os.execv(sys.executable, [sys.executable, "-m", "irjit.tools.bench_threads", *sys.argv[1:]])
    ap = argparse.ArgumentParser(prog="python -m irjit.tools.bench_threads")
    ap.add_argument("--repeat", type=int, default=50)
    args = ap.parse_args(argv)
    os.environ["IRJIT_CACHE"] = "0"
    bandwidth = machine_bounds(args.repeat)[0]
    print(f"{threads.thread_count()} cores, copy {bandwidth:.1f} GB/s; element-wise chain, median us per call")
    print(f"{'elements':>9} {'work':>10} {'1 thread':>9} {'threaded':>9} {'speedup':>8} {'bound':>8} "
          f"{'threaded/bound':>14}")
    rng = np.random.default_rng(0)
    for n in [1 << k for k in range(12, 23)]:
        inputs = [rng.standard_normal(n).astype(np.float32) for _ in range(3)]
        single, multi = chain_unit(n, False), chain_unit(n, True)
        s1, (o1,) = single.call(inputs)
        s2, (o2,) = multi.call(inputs)
        assert s1 == s2 == 0 and np.array_equal(o1, o2), "threaded results differ"
        t1, t2 = median_us(single, inputs, args.repeat), median_us(multi, inputs, args.repeat)
        bound = 16 * n / bandwidth / 1e3
        print(f"{n:9d} {threads.kernel_work(single.kernel):10d} {t1:9.1f} {t2:9.1f} {t1 / t2:7.2f}x "
              f"{bound:8.1f} {t2 / bound:13.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
