"""Time the six benchmark workloads (tests/fixtures/bench) per call, forward and
forward+backward (w.r.t. the inputs the workload says require grad), for every contender in
this one process: irjit native and irjit's
interpreter (both under the profiling executor), `irjit.compile` with the inputs' types
declared, hand-written numpy and, when torch is
importable, torch eager, TorchScript's profiling executor and torch.compile. Each result is
printed with its ratio to the best peer and to the workload's bound (compulsory bytes over
the all-core copy bandwidth, or flops over the sgemm rate, both measured in the same run).
Then the real architectures of tests/fixtures/bench/arch (forward: irjit native and
interpreter, torch eager and TorchScript with the same weights; geometric mean of native over
eager), and per workload in fresh processes: native compile time per unit, cold and from the
disk cache, peak RSS, and a loop of many forward+backward calls (RSS and time per call at its
start and end, beside numpy's in the same process as a control for the machine's drift).

    python -m irjit.tools.bench_native [--repeat N] [--rounds N] [--only NAME] [--loop-calls N]
        [--cores N] [--clock wall|cpu]
    .venv-torch/bin/python -m irjit.tools.bench_native           # with the torch contenders

Re-executes itself with GLIBC_TUNABLES that keep freed memory mapped (on these VMs touching
reclaimed pages costs 1-7 us per 4 KiB page), so every contender reuses its buffers alike;
`--malloc system` runs with glibc's default trimming instead, and each result's minor page
faults per call show what that costs whom.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable, Optional

import numpy as np

from irjit.tools.bench_workloads import NAMES, NUMPY_FORWARD, NUMPY_FORWARD_BACKWARD, load_workload

TUNABLES = "glibc.malloc.trim_threshold=4294967295:glibc.malloc.mmap_threshold=33554432"
LOOP_SECONDS = 60.0  # a workload's call loop stops early past this (the chain at 4M elements)
# every this many calls the loop also times numpy's forward+backward once: a control, since on
# these VMs a whole process can turn slower for minutes (numpy's lstm_cell 1.45 -> 1.95 ms)
CONTROL_EVERY = 10
FIRST_CALLS = 5  # irjit.compile's first forward+backward calls, timed together (see process_report)


# wall time, or this process's CPU time (all its threads): with --cores 1 on a loaded machine
# the CPU time leaves out the time other processes hold the core
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
clock = CLOCKS["wall"]


def minor_faults() -> int:
    """Minor page faults of this process so far (pages the kernel had to map on touch)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def cpu_ticks() -> tuple[int, int]:
    """(clock ticks all CPUs spent busy since boot, of which this process's threads), from
    /proc: their difference over a window is the CPU that other processes took."""
    with open("/proc/stat") as f:
        fields = [int(v) for v in f.readline().split()[1:]]
    busy = sum(fields) - fields[3] - (fields[4] if len(fields) > 4 else 0)  # minus idle, iowait
    with open("/proc/self/stat") as f:
        own = f.read().rsplit(")", 1)[1].split()
    return busy, int(own[11]) + int(own[12])


def others_cores(before: tuple[int, int], seconds: float) -> float:
    """The cores other processes kept busy, on average, since `before` (a `cpu_ticks()`)."""
    busy, own = cpu_ticks()
    return max(0.0, (busy - before[0]) - (own - before[1])) / os.sysconf("SC_CLK_TCK") / seconds


def median_us(fn: Callable, repeat: int, warmup: Optional[int] = None) -> float:
    """Median time of `fn()` in microseconds on the chosen clock, after warm-up calls."""
    return timed(fn, repeat, warmup)[0]


def timed(fn: Callable, repeat: int, warmup: Optional[int] = None) -> tuple[float, float]:
    """(median us of `fn()` on the chosen clock, minor page faults per call) after warm-up."""
    for _ in range(max(5, repeat // 10) if warmup is None else warmup):
        fn()
    times = []
    faults = minor_faults()
    for _ in range(repeat):
        t = clock()
        fn()
        times.append(clock() - t)
    return float(np.median(times)) * 1e6, (minor_faults() - faults) / repeat


def cores() -> int:
    return len(os.sched_getaffinity(0))


def machine_bounds(repeat: int, rounds: int = 1) -> tuple[float, float]:
    """(copy bandwidth in GB/s counting bytes read + written, with one thread per core
    copying its slice of 256 MB; sgemm GFLOP/s of numpy's BLAS) measured now: the best of
    `rounds` measurements 0.3 s apart (a slow spell of the host would otherwise make every
    bound of the run too lenient)."""
    found = []
    for _ in range(max(1, rounds)):
        settle()
        found.append(_machine_bounds_once(repeat))
    return max(b for b, _ in found), max(g for _, g in found)


def _machine_bounds_once(repeat: int) -> tuple[float, float]:
    n = cores()
    src, dst = np.ones(1 << 26, np.float32), np.empty(1 << 26, np.float32)
    bounds = np.linspace(0, src.size, n + 1).astype(int)
    pool = ThreadPoolExecutor(n)  # np.copyto releases the GIL for a plain copy

    def copy_all():
        list(pool.map(lambda k: np.copyto(dst[bounds[k]:bounds[k + 1]], src[bounds[k]:bounds[k + 1]]),
                      range(n)))
    copy_us = median_us(copy_all, max(5, repeat // 10))
    pool.shutdown()
    a = np.ones((1024, 1024), np.float32)
    out = np.empty_like(a)
    gemm_us = median_us(lambda: np.matmul(a, a, out=out), max(5, repeat // 10))
    return 2 * src.nbytes / copy_us / 1e3, 2 * 1024 ** 3 / gemm_us / 1e3


def bound_us(workload, backward: bool, bandwidth: float, gflops: float) -> tuple[float, str]:
    """The workload's lower bound in us and what sets it ("memory" or "flops")."""
    mem = workload.bytes_moved(backward) / bandwidth / 1e3
    flop = workload.flops(backward) / gflops / 1e3
    return (mem, "memory") if mem >= flop else (flop, "flops")


def format_ratio(value: Optional[float], reference: Optional[float]) -> str:
    """`value / reference` as `1.23x`, or `-` when either is missing."""
    if value is None or reference is None or reference <= 0:
        return "-"
    return f"{value / reference:.2f}x"


def input_types(workload) -> str:
    """The workload's inputs as `irjit.compile`'s input types: "Float(3, 4), ..."."""
    from irjit.ops.types import DTYPE_TO_SCALAR_TYPE
    return ", ".join(f"{DTYPE_TO_SCALAR_TYPE[i['dtype']]}({', '.join(map(str, i['shape']))})"
                     for i in workload.meta["inputs"])


def irjit_contenders(workload, args) -> dict[str, tuple[Callable, Callable]]:
    """irjit native and interpreter under the profiling executor, whose inputs are irjit
    Tensors made once (as the torch contenders get torch tensors made once), and
    `irjit.compile` with its input types declared, called with the numpy arrays (which it
    copies where the call could otherwise see a difference, as under grad); forward+backward
    differentiates w.r.t. the inputs the workload says require grad, as every contender does."""
    import irjit
    from irjit.ops.tensor import Tensor
    arrays = args
    args = [Tensor(a) for a in args]
    compiled = irjit.compile(workload.ir_path.read_text(), input_types(workload))

    flags = list(workload.requires_grad)  # (every contender differentiates w.r.t. these)

    def compiled_fwd_bwd():
        compiled.run(*arrays, requires_grad=flags)
        return compiled.backward()
    out = {"irjit compile": (lambda: compiled.run(*arrays, requires_grad=False), compiled_fwd_bwd)}
    for backend in ("native", "interp"):
        # one Function per mode, as inference and training code each hold theirs: a profiling
        # executor specialized for calls without grad runs later calls with grad on its
        # unoptimized fallback graph
        fwd, train = (irjit.load(workload.ir_path, executor="profiling", backend=backend)
                      for _ in range(2))

        def fwd_bwd(fn=train):
            fn.run(*args, requires_grad=flags)
            return fn.backward()
        out[f"irjit {backend}"] = (lambda fn=fwd: fn.run(*args, requires_grad=False), fwd_bwd)
    return out


def torch_contenders(workload, args) -> tuple[dict, dict[str, str]]:
    """(label -> (forward, forward_backward)), (label -> why it is missing); both empty
    without torch."""
    try:
        from irjit.tools import bench_torch
    except ImportError:
        return {}, {}
    import irjit
    from collections import Counter
    graph = irjit.parse_ir(workload.ir_path.read_text())
    if not bench_torch.same_graph(workload.name, Counter(n.kind for n in graph.walk())):
        raise AssertionError(f"{workload.name}: the torch definition does not script to the bench graph")
    ok, failed = {}, {}
    for c in bench_torch.contenders(workload.name, args, workload.requires_grad):
        if c.fn is None:
            failed[c.label] = c.error
        else:
            ok[c.label] = (c.forward, c.forward_backward)
    return ok, failed


def settle() -> None:
    """Wait until the thread pools of the contender timed before (OpenBLAS's threads spin ~0.1 s
    after a threaded call, OpenMP's a while too) sleep again, so none runs on a core the next
    contender's threads need: on two cores the one timed right after another's BLAS call ran
    its threaded loops alone (mlp: 1,300 against 780 us)."""
    time.sleep(0.3)


def time_workload(name: str, repeat: int, rounds: int = 1) -> tuple[dict, dict]:
    """(label -> {"fwd": us, "fwd+bwd": us, "faults": minor page faults per fwd+bwd call,
    "others": cores other processes kept busy meanwhile, "spread": the slowest round's
    fwd+bwd over the fastest}), (label -> why it is missing). With several `rounds`, every
    contender is timed once a round (`repeat / rounds` calls each), one after another, and
    its times are its fastest round's medians: the host's slow spells, which come and go
    over seconds on these VMs, then fall on every contender alike, and only ever add time."""
    workload = load_workload(name)
    args = workload.inputs()
    fns = irjit_contenders(workload, args)
    needs = workload.requires_grad
    fns["numpy"] = (lambda: NUMPY_FORWARD[name](*args),
                    lambda: NUMPY_FORWARD_BACKWARD[name](*args, needs=needs))
    torch_fns, missing = torch_contenders(workload, args)
    fns.update(torch_fns)
    samples: dict = {label: [] for label in fns}
    calls = max(5, repeat // rounds)
    for k in range(rounds):
        for label, (fwd, fwd_bwd) in fns.items():
            warmup = None if k == 0 else max(2, calls // 10)  # (later rounds: warm already)
            start, ticks = time.perf_counter(), cpu_ticks()
            settle()
            fwd_us, _ = timed(fwd, calls, warmup)
            settle()
            both_us, faults = timed(fwd_bwd, calls, warmup)
            samples[label].append((fwd_us, both_us, faults,
                                   others_cores(ticks, time.perf_counter() - start)))
    rows = {}
    for label, got in samples.items():
        both = [g[1] for g in got]
        rows[label] = {"fwd": min(g[0] for g in got), "fwd+bwd": min(both),
                       "faults": max(g[2] for g in got), "others": max(g[3] for g in got),
                       "spread": max(both) / min(both)}
    return rows, missing


def print_workload(name: str, rows: dict, missing: dict, bandwidth: float, gflops: float) -> None:
    workload = load_workload(name)
    bounds = {k: bound_us(workload, k == "fwd+bwd", bandwidth, gflops) for k in ("fwd", "fwd+bwd")}
    print(f"\n{name}: bound fwd {bounds['fwd'][0]:.1f} us ({bounds['fwd'][1]}), "
          f"fwd+bwd {bounds['fwd+bwd'][0]:.1f} us ({bounds['fwd+bwd'][1]})")
    print(f"  {'contender':15} {'fwd us':>10} {'/best peer':>10} {'/bound':>8}"
          f" {'f+b us':>10} {'/best peer':>10} {'/bound':>8} {'faults':>8} {'others':>7} {'spread':>7}")
    for label, r in rows.items():
        cells = []
        for k in ("fwd", "fwd+bwd"):  # (irjit's rows are not each other's peers)
            peers = [o[k] for other, o in rows.items() if other != label and not (
                label.startswith("irjit") and other.startswith("irjit"))]
            cells += [f"{r[k]:10.1f}", f"{format_ratio(r[k], min(peers) if peers else None):>10}",
                      f"{format_ratio(r[k], bounds[k][0]):>8}"]
        cells += [f"{r['faults']:8.1f}", f"{r['others']:7.2f}", f"{r['spread']:7.2f}"]
        print(f"  {label:15} " + " ".join(cells))
    for label, why in missing.items():
        print(f"  {label:15} not run: {why}")


# ---- real architectures (tests/fixtures/bench/arch, from tools/fixturegen/bench_archs.py)

ARCH = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "bench" / "arch"


def _npz(path: Path) -> dict:
    with np.load(path) as f:
        return {k: f[k] for k in f.files}


def arch_forwards(name: str) -> tuple[dict, dict]:
    """Forward contenders of one architecture: irjit native and interpreter under the
    profiling executor and, with torch, eager and TorchScript of the same module and weights
    (label -> callable), and why a contender is missing."""
    import irjit
    folder = ARCH / name
    from irjit.ops.tensor import Tensor
    x = _npz(folder / "inputs.npz")["arg0"]
    fns, missing = {}, {}
    for backend in ("native", "interp"):
        fn = irjit.load(folder / "graph.ir", params=_npz(folder / "params.npz"), executor="profiling",
                        backend=backend)
        fns[f"irjit {backend}"] = lambda fn=fn, t=Tensor(x): fn.run(t, requires_grad=False)
    try:
        import torch
        from irjit.tools.fixturegen.bench_archs import build
    except ImportError:
        return fns, missing
    model, _ = build(name)
    model.load_state_dict({k: torch.from_numpy(v) for k, v in _npz(folder / "params.npz").items()
                           if k in model.state_dict()})
    tx = torch.from_numpy(x.copy())
    scripted = torch.jit.script(model)

    def eager():
        with torch.no_grad():
            return model(tx)

    def script():
        with torch.no_grad():
            return scripted(tx)
    fns.update({"torch eager": eager, "torchscript": script})
    return fns, missing


def print_architectures(repeat: int) -> None:
    print(f"\nreal architectures, forward (median us per call, {repeat} calls after warm-up):")
    names = sorted(p.name for p in ARCH.iterdir() if (p / "graph.ir").exists())
    ratios = []
    for name in names:
        fns, missing = arch_forwards(name)
        times = {label: median_us(fn, repeat) for label, fn in fns.items()}
        cells = "  ".join(f"{label} {t:.0f}" for label, t in times.items())
        line = f"  {name:14} {cells}"
        if "torch eager" in times:
            ratios.append(times["irjit native"] / times["torch eager"])
            line += f"  native/eager {ratios[-1]:.2f}x"
        print(line)
    if ratios:
        print(f"  geometric mean native/eager: {float(np.exp(np.mean(np.log(ratios)))):.2f}x")


# ---- compile time, RSS and the call loop, in fresh processes

def memory_kib(field: str) -> int:
    """A `/proc/self/status` memory line: VmRSS (resident now) or VmHWM (peak resident; unlike
    getrusage's ru_maxrss it does not carry over the parent's peak across fork and exec)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise AssertionError(f"no {field} in /proc/self/status")


def process_report(name: str, loop_calls: int) -> dict:
    """Run `name` natively in this (fresh) process, forward and forward+backward: per-unit
    compile ms and whether its object code came from the disk cache, then `loop_calls`
    forward+backward calls, or as many as fit in LOOP_SECONDS (RSS sampled ten times, median
    wall time of the first and last tenth)."""
    from irjit.compiler.codegen import cache

    units: list[tuple[float, bool, float]] = []  # (ms, from the disk cache, of which loading code)

    make_unit = cache.tensor_unit

    def timed_unit(*a, **k):
        """A tensor unit as the cache makes it (loaded from disk, or lowered and compiled),
        timed; view-only units compile nothing and are not listed."""
        start = time.perf_counter()
        unit = make_unit(*a, **k)
        if unit.library is not None:
            units.append(((time.perf_counter() - start) * 1e3, unit.library.from_disk,
                          unit.library.compile_ms))
        return unit

    cache.tensor_unit = timed_unit
    import irjit
    workload = load_workload(name)
    args = workload.inputs()
    infer, train = (irjit.load(workload.ir_path, executor="profiling", backend="native")
                    for _ in range(2))  # one Function per mode, as in irjit_contenders

    def call():
        train.run(*args, requires_grad=list(workload.requires_grad))
        train.backward()
    for _ in range(5):
        infer.run(*args, requires_grad=False)
        call()
    report = {"units": units}
    if loop_calls:
        every = max(1, loop_calls // 10)
        times, rss, start = [], [memory_kib("VmRSS")], time.perf_counter()
        control = []  # (call index, numpy's forward+backward s): the machine's drift, every 10th
        needs = workload.requires_grad
        for i in range(loop_calls):
            t = time.perf_counter()
            call()
            times.append(time.perf_counter() - t)
            if i % CONTROL_EVERY == 0:
                t = time.perf_counter()
                NUMPY_FORWARD_BACKWARD[name](*args, needs=needs)
                control.append((i, time.perf_counter() - t))
            if (i + 1) % every == 0:
                rss.append(memory_kib("VmRSS"))
            if time.perf_counter() - start > LOOP_SECONDS and len(times) >= 20:
                rss.append(memory_kib("VmRSS"))
                break
        tenth = max(1, len(times) // 10)
        first = [s for i, s in control if i < tenth] or [control[0][1]]
        last = [s for i, s in control if i >= len(times) - tenth] or [control[-1][1]]
        report.update(calls=len(times), rss_kib=rss, first_us=float(np.median(times[:tenth])) * 1e6,
                      last_us=float(np.median(times[-tenth:])) * 1e6,
                      numpy_first_us=float(np.median(first)) * 1e6,
                      numpy_last_us=float(np.median(last)) * 1e6)
    report["peak_rss_kib"] = memory_kib("VmHWM")
    report["units"] = units[:]
    # irjit.compile's first forward+backward calls: all it specializes and compiles (under
    # grad it may unroll loops and compile other units than the executor's path)
    del units[:]
    compiled = irjit.compile(workload.ir_path.read_text(), input_types(workload))
    start = time.perf_counter()
    for _ in range(FIRST_CALLS):
        compiled.run(*args, requires_grad=list(workload.requires_grad))
        compiled.backward()
    report.update(compile_first_s=time.perf_counter() - start, compile_units=units[:])
    return report


def fresh_process_report(name: str, cache_dir: str, loop_calls: int, bytecode: str) -> dict:
    """`process_report(name, loop_calls)` in a fresh process whose disk cache is `cache_dir`
    and whose Python bytecode is kept under `bytecode` (PYTHONPYCACHEPREFIX), as an
    installed package's is kept: a process that recompiled irjit's sources (this machine sets
    PYTHONDONTWRITEBYTECODE) would charge it to its first units (15-20 ms for mathlib)."""
    env = dict(os.environ, IRJIT_CACHE_DIR=cache_dir, IRJIT_CACHE="1", PYTHONPYCACHEPREFIX=bytecode)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    cmd = [sys.executable, "-m", "irjit.tools.bench_native", "--process-report", name,
           "--loop-calls", str(loop_calls)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


PROCESS_RUNS = 3  # fresh processes per workload, cold and cached: the medians are reported


def _slowest_units(reports: list[dict], from_disk: bool) -> tuple[list[float], list[float], list[float]]:
    """Per report (a fresh process's), its slowest unit (ms), its median unit, and the most
    any unit took loading object code; only units from the disk cache when `from_disk`."""
    slowest, medians, loads = [], [], []
    for r in reports:
        units = [(ms, lib) for ms, disk, lib in r["units"] if disk or not from_disk]
        if units:
            slowest.append(max(ms for ms, _ in units))
            medians.append(float(np.median([ms for ms, _ in units])))
            loads.append(max(lib for _, lib in units))
    return slowest, medians, loads


def _median_range(values: list[float]) -> str:
    """"median (min-max)" of a few processes' values ("-" without any)."""
    if not values:
        return "-"
    return f"{float(np.median(values)):.1f} ({min(values):.1f}-{max(values):.1f})"


def print_process_reports(names: list[str], loop_calls: int) -> None:
    print(f"\nnative compile per unit (ms; {PROCESS_RUNS} fresh processes each, with irjit's bytecode "
          f"cached as installed; cold = empty disk cache, cached = reading it; per process its "
          f"slowest unit (cached: the process's first, with LLVM's and BLAS's setup) and its "
          f"median one, (load) = the most a unit took reading and linking object code; each "
          f"column the median over the processes (min-max), since one process's time swings "
          f"2-3x with the host's slow spells), peak RSS, and a loop of up to {loop_calls} fwd+bwd "
          f"calls in the first cached process (stops after {LOOP_SECONDS:.0f} s), the median of "
          f"its first and last tenth beside numpy's forward+backward timed every "
          f"{CONTROL_EVERY}th call in the same process (the machine's drift):")
    print(f"  {'workload':18} {'units':>5} {'cold max':>18} {'cold sum':>9} {'cached max':>16} "
          f"{'cached med':>10} {'(load)':>16} "
          f"{'peak RSS MB':>11} {'calls':>6} {'RSS MB start->end':>18} {'us/call start->end':>19} "
          f"{'numpy start->end':>17}")
    firsts = []
    bytecode = tempfile.TemporaryDirectory(prefix="irjit-bench-bytecode-")
    with tempfile.TemporaryDirectory(prefix="irjit-bench-cache-") as cache_dir:  # (a first
        fresh_process_report(names[0], cache_dir, 0, bytecode.name)  # process writes bytecode)
    for name in names:
        colds, warms = [], []
        for _ in range(PROCESS_RUNS):  # (each cold process with an empty cache of its own)
            with tempfile.TemporaryDirectory(prefix="irjit-bench-cache-") as cache_dir:
                colds.append(fresh_process_report(name, cache_dir, 0, bytecode.name))
        with tempfile.TemporaryDirectory(prefix="irjit-bench-cache-") as cache_dir:
            fresh_process_report(name, cache_dir, 0, bytecode.name)  # (fills the cache)
            for k in range(PROCESS_RUNS):
                warms.append(fresh_process_report(name, cache_dir, loop_calls if k == 0 else 0,
                                                  bytecode.name))
        cold, warm = colds[0], warms[0]
        cold_max, _, _ = _slowest_units(colds, False)
        cold_sums = [sum(ms for ms, _, _ in r["units"]) for r in colds]
        warm_max, warm_med, warm_load = _slowest_units(warms, True)
        rss = warm.get("rss_kib", [0])
        rss_cell = f"{rss[1] / 1024:.1f} -> {rss[-1] / 1024:.1f}" if len(rss) > 1 else "-"
        time_cell = f"{warm['first_us']:.1f} -> {warm['last_us']:.1f}" if "first_us" in warm else "-"
        control_cell = f"{warm['numpy_first_us']:.1f} -> {warm['numpy_last_us']:.1f}" \
            if "numpy_first_us" in warm else "-"
        print(f"  {name:18} {len(cold['units']):5d} {_median_range(cold_max):>18} "
              f"{float(np.median(cold_sums)):9.1f} {_median_range(warm_max):>16} "
              f"{float(np.median(warm_med)) if warm_med else 0:10.1f} {_median_range(warm_load):>16} "
              f"{warm['peak_rss_kib'] / 1024:11.1f} "
              f"{warm.get('calls', 0):6d} {rss_cell:>18} {time_cell:>19} {control_cell:>17}")
        firsts.append((name, cold, warm))
    print(f"\nirjit.compile's first {FIRST_CALLS} forward+backward calls together (s, wall: all its "
          f"specializing and compiling), cold and cached (the first process of each), and the "
          f"units it made (the slowest, ms):")
    print(f"  {'workload':18} {'cold s':>7} {'cached s':>9} {'units':>6} {'cold max ms':>12}")
    for name, cold, warm in firsts:
        compiled_ms = [ms for ms, _, _ in cold["compile_units"]]
        print(f"  {name:18} {cold['compile_first_s']:7.2f} {warm['compile_first_s']:9.2f} "
              f"{len(compiled_ms):6d} {max(compiled_ms, default=0):12.1f}")
    bytecode.cleanup()


def restrict_cores(count: int) -> None:
    """Run this process (and the threads of every contender: irjit's, OpenBLAS's, torch's
    OpenMP pool) on its first `count` allowed cores."""
    allowed = sorted(os.sched_getaffinity(0))
    if not 1 <= count <= len(allowed):
        raise SystemExit(f"--cores: between 1 and {len(allowed)}")
    os.sched_setaffinity(0, allowed[:count])
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(count)


def main(argv=None) -> int:
    system_malloc = "system" in [a.split("=", 1)[-1] for a in sys.argv[1:] if a.startswith("--malloc")] or \
        any(a == "--malloc" and b == "system" for a, b in zip(sys.argv[1:], sys.argv[2:]))
    if os.environ.get("IRJIT_BENCH_EXECED") != "1":
        cores_arg = [a for a in sys.argv[1:] if a.startswith("--cores")]
        if cores_arg:  # before the re-exec, so the BLAS and OpenMP pools start at that size
            value = cores_arg[0].split("=", 1)[1] if "=" in cores_arg[0] else \
                sys.argv[sys.argv.index(cores_arg[0]) + 1]
            restrict_cores(int(value))
        os.environ["IRJIT_BENCH_EXECED"] = "1"
        if system_malloc:
            os.environ.pop("GLIBC_TUNABLES", None)
        else:
            os.environ["GLIBC_TUNABLES"] = TUNABLES
        # inductor's pool of compile processes keeps a core busy for seconds after compiling,
        # which stalls torch's OpenMP barriers (24 us calls took 24 ms): compile in-process
        os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
        os.execv(sys.executable, [sys.executable, "-m", "irjit.tools.bench_native", *sys.argv[1:]])
    ap = argparse.ArgumentParser(prog="python -m irjit.tools.bench_native")
    ap.add_argument("--repeat", type=int, default=200, help="timed calls per contender")
    ap.add_argument("--only", choices=NAMES, action="append", help="run only this workload (repeatable)")
    ap.add_argument("--loop-calls", type=int, default=10000, help="calls in the RSS/slowdown loop (0: skip)")
    ap.add_argument("--cores", type=int, help="run every contender on this many cores (default: all)")
    ap.add_argument("--clock", choices=sorted(CLOCKS), default="wall",
                    help="wall time, or CPU time of the process (use with --cores 1 when the machine is busy)")
    ap.add_argument("--rounds", type=int, default=3,
                    help="time every contender once a round, --repeat calls over all rounds, and "
                         "report its fastest round (default 3; 1: one timing each)")
    ap.add_argument("--no-arch", action="store_true", help="skip the real architectures")
    ap.add_argument("--malloc", choices=("kept", "system"), default="kept",
                    help="kept: GLIBC_TUNABLES that keep freed memory mapped (default); system: glibc's "
                         "defaults, which return freed memory to the kernel (compare the faults column)")
    ap.add_argument("--process-report", metavar="NAME", choices=NAMES, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.process_report:
        print(json.dumps(process_report(args.process_report, args.loop_calls)))
        return 0
    names = args.only or list(NAMES)
    global clock
    clock = CLOCKS[args.clock]
    bandwidth, gflops = machine_bounds(args.repeat, args.rounds)
    print(f"machine: {cores()} cores, copy {bandwidth:.1f} GB/s (with all of them), sgemm {gflops:.1f} GFLOP/s "
          f"(the best of {args.rounds}); "
          f"median us ({args.clock} clock) per call after warm-up ({args.repeat} calls, the "
          f"4M-element chain a tenth); malloc {args.malloc} "
          f"({'freed memory kept mapped' if args.malloc == 'kept' else 'glibc defaults'}); faults: "
          f"minor page faults per fwd+bwd call; others: cores other processes kept busy while the "
          f"contender was timed (from /proc/stat: timings with others > 0.1 on two cores are suspect); "
          f"{args.rounds} rounds, each contender's fastest round reported, spread: its slowest "
          f"round's fwd+bwd over its fastest")
    for name in names:
        repeat = args.repeat if name != "elementwise_chain" else max(10, args.repeat // 10)
        rows, missing = time_workload(name, repeat, max(1, args.rounds))
        print_workload(name, rows, missing, bandwidth, gflops)
    if not args.no_arch:
        print_architectures(max(10, args.repeat // 10))
    if args.loop_calls:
        print_process_reports(names, args.loop_calls)
    return 0


if __name__ == "__main__":
    sys.exit(main())
