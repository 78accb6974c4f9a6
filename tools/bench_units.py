"""Where a target's native time goes, unit by unit: runs a bench workload or a real
architecture (tests/fixtures/bench/arch) forward or forward+backward under the profiling
executor with native units, and times every call of every native unit's entry, printing per
unit its time per target call (mean, and median over the calls), its share, its node kinds,
its estimated work, whether its loop runs on threads, and the bytes it must move per call (the
arrays it reads and writes, each element once: a broadcast array counts one element) with the
bandwidth that makes; the rest of the call is Python (tape, plans, arrays).

    python -m irjit.tools.bench_units TARGET [--backward] [--calls N] [--cores N] [--clock cpu|wall]

With `--cores 1` the process (and so the native thread pool and the BLAS) is pinned to one
core; `--clock cpu` times the process's CPU time (all its threads), which leaves out time
other processes hold the core.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import time
from pathlib import Path

import numpy as np

TUNABLES = "glibc.malloc.trim_threshold=4294967295:glibc.malloc.mmap_threshold=33554432"
ARCH = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "bench" / "arch"
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def _npz(path: Path) -> dict:
    with np.load(path) as f:
        return {k: f[k] for k in f.files}


def target_runner(name: str, backward: bool):
    """A call of a bench workload or an architecture, forward or forward+backward, on irjit
    Tensors made once (as tools/bench_native.py times it)."""
    import irjit
    from irjit.ops.tensor import Tensor
    from irjit.tools.bench_workloads import NAMES, load_workload
    if name in NAMES:
        workload = load_workload(name)
        args = [Tensor(a) for a in workload.inputs()]
        fn = irjit.load(workload.ir_path, executor="profiling", backend="native")
    else:
        folder = ARCH / name
        args = [Tensor(_npz(folder / "inputs.npz")["arg0"])]
        fn = irjit.load(folder / "graph.ir", params=_npz(folder / "params.npz"), executor="profiling",
                        backend="native")
    if not backward:
        return lambda: fn.run(*args, requires_grad=False)

    def forward_backward():
        fn.run(*args)
        return fn.backward()
    return forward_backward


def unit_traffic(unit) -> tuple[int, int]:
    """(bytes read, bytes written) by one call of a NativeUnit: every input array's and output
    buffer's elements once each (its span: 1 for a broadcast one; a unit's private scratch is
    counted as written), numbers as their 0-dim arrays."""
    read = written = 0
    for b in unit.buffers:
        size = b.extent * b.dtype.itemsize
        if b.is_output:
            written += size
        else:
            read += size
    return read, written


class UnitTimes:
    """Wraps the builtin entry of every NativeUnit made from now on with a timer."""

    def __init__(self, clock):
        from irjit.compiler.codegen import threads, unit as unit_module
        self.units: dict[str, dict] = {}
        self.clock = clock
        init = unit_module.NativeUnit.__init__
        times = self

        def timed_init(unit, graph, name="unit", *a, **k):
            init(unit, graph, name, *a, **k)
            kinds = collections.Counter(n.kind.split("::")[-1] for n in graph.nodes()
                                        if not n.kind.startswith("prim::Constant"))
            kernel = unit.kernel
            info = {"kinds": kinds, "total": 0.0, "calls": 0,
                    "work": threads.kernel_work(kernel) if kernel is not None else 0,
                    "traffic": unit_traffic(unit),
                    "threads": threads.planned_threads(threads.collapse_axes(kernel))[0]
                    if kernel is not None else 1}
            times.units[name] = info
            fn = unit._fn

            def timed(*arrays):
                start = times.clock()
                try:
                    return fn(*arrays)
                finally:
                    info["total"] += times.clock() - start
                    info["calls"] += 1
            unit._fn = timed
        unit_module.NativeUnit.__init__ = timed_init

    def reset(self) -> None:
        for info in self.units.values():
            info["total"], info["calls"] = 0.0, 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m irjit.tools.bench_units")
    ap.add_argument("target", help="a bench workload or an architecture of tests/fixtures/bench/arch")
    ap.add_argument("--backward", action="store_true", help="time forward+backward")
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--cores", type=int, help="pin the process to this many cores")
    ap.add_argument("--clock", choices=sorted(CLOCKS), default="cpu")
    args = ap.parse_args(argv)
    # re-exec once (a marker, not the tunables: a shell that exported them would skip --cores),
    # so the tunables hold and the BLAS's pool is sized before numpy starts it
    if os.environ.get("IRJIT_BENCH_UNITS_EXECED") != "1":
        os.environ["IRJIT_BENCH_UNITS_EXECED"] = "1"
        os.environ["GLIBC_TUNABLES"] = TUNABLES
        if args.cores:
            allowed = sorted(os.sched_getaffinity(0))
            os.sched_setaffinity(0, allowed[:args.cores])
            for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
                os.environ[var] = str(args.cores)
        os.execv(sys.executable, [sys.executable, "-m", "irjit.tools.bench_units", *sys.argv[1:]])
    os.environ["IRJIT_CACHE"] = "0"  # compile here, so each unit's loop nest is at hand
    clock = CLOCKS[args.clock]
    recorder = UnitTimes(clock)
    call = target_runner(args.target, args.backward)
    for _ in range(3):
        call()
    recorder.reset()
    totals = []
    per_call: dict[str, list[float]] = collections.defaultdict(list)  # unit -> its time in each call
    for _ in range(args.calls):
        before = {name: info["total"] for name, info in recorder.units.items()}
        start = clock()
        call()
        totals.append(clock() - start)
        for name, info in recorder.units.items():
            per_call[name].append(info["total"] - before.get(name, 0.0))
    outside = [t - sum(times[k] for times in per_call.values()) for k, t in enumerate(totals)]
    total = float(np.mean(totals)) * 1e6
    print(f"{args.target} {'forward+backward' if args.backward else 'forward'}: {total:.1f} us per "
          f"call ({args.clock} clock, mean of {args.calls}; median {float(np.median(totals)) * 1e6:.1f})")
    units = sorted(recorder.units.items(), key=lambda kv: -kv[1]["total"])
    in_units = 0.0
    for name, info in units:
        if not info["calls"]:
            continue
        us = info["total"] / args.calls * 1e6
        in_units += us
        kinds = ", ".join(f"{k}" + (f" x{n}" if n > 1 else "") for k, n in info["kinds"].most_common())
        read, written = info["traffic"]
        rate = (read + written) * (info["calls"] // args.calls) / us / 1e3 if us > 0 else 0.0
        median = float(np.median(per_call[name])) * 1e6
        print(f"  {us:9.1f} us {100 * us / total:5.1f}%  (median {median:9.1f})  "
              f"{info['calls'] // args.calls:3d}x  work {info['work']:>10d}  threads {info['threads']}  reads {read / 1e6:8.2f} MB  "
              f"writes {written / 1e6:8.2f} MB  {rate:5.1f} GB/s  {name}: {kinds}")
    print(f"  {total - in_units:9.1f} us {100 * (total - in_units) / total:5.1f}%  (median "
          f"{float(np.median(outside)) * 1e6:9.1f})  outside units")
    return 0


if __name__ == "__main__":
    sys.exit(main())
