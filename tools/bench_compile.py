"""Where native compile time goes: every unit of the six bench workloads (forward and
forward+backward) and of the real architectures (tests/fixtures/bench/arch, forward and
forward+backward), compiled in a fresh process with an empty disk cache, then loaded in
another fresh process from that cache, with the CPU time (this thread's) of each phase:
lowering the group graph, building the llvmlite IR in Python, printing the module, LLVM
parsing and verifying it, the optimization pipeline, printing the optimized IR (kept for dumps
and the disk cache), machine-code generation, linking, writing the disk cache.

    python -m irjit.tools.bench_compile [--only NAME ...] [--units] [--repeat N]
    python -m irjit.tools.bench_compile --kernels [--only NAME ...]

`--units` lists every unit (slowest first) besides the per-target sums; `--repeat N` runs the
cold process N times and reports each unit's median (CPU time, but a shared machine still
moves it by some percent). The `gc` column is the part of a unit's time that Python's garbage
collector took (inside the other columns): a full collection of a large process lands in
whichever unit triggers it.

`--kernels` keeps the choice of pipeline honest: in one process pinned to one core, every
tensor unit of a target is compiled twice, with irjit's pipeline (library.optimize) and with
LLVM's plain O3 (loop unrolling included), and each is called on the arguments the target
gave it, alternately (median CPU time per call, single-threaded kernels), beside both
compile times.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from irjit.tools.bench_workloads import NAMES, load_workload

ARCH = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "bench" / "arch"
ARCHS = tuple(sorted(p.name for p in ARCH.iterdir() if (p / "graph.ir").exists()))
# the columns, in the order a cold compile runs them; "build" is the unit's time outside
# lowering and the code library (llvmlite IR construction, the entry, the ctypes prototype)
PHASES = ("lower", "build", "print", "parse", "verify", "optimize", "print optimized",
          "codegen", "link", "store", "gc")
SHORT = {"print optimized": "print-opt"}


def _npz(path: Path) -> dict:
    with np.load(path) as f:
        return {k: f[k] for k in f.files}


def _instrument(units: list[dict]) -> None:
    """Time every unit the cache makes (tensor units and scalar programs), with the lowering
    part separately."""
    from irjit.compiler.codegen import cache, scalar_program_unit, unit as unit_module
    lowering = [0.0]

    def timed(fn):
        def wrapper(*a, **k):
            start = time.thread_time()
            try:
                return fn(*a, **k)
            finally:
                lowering[0] += (time.thread_time() - start) * 1e3
        return wrapper

    collecting = [0.0, 0.0]  # start of the running collection, CPU ms of collections so far

    def on_gc(phase, info):
        now = time.thread_time()
        if phase == "start":
            collecting[0] = now
        else:
            collecting[1] += (now - collecting[0]) * 1e3
    gc.callbacks.append(on_gc)

    unit_module.lower_group = timed(unit_module.lower_group)
    lowering_class = scalar_program_unit.ProgramLowering

    class TimedLowering(lowering_class):
        __init__ = timed(lowering_class.__init__)
    scalar_program_unit.ProgramLowering = TimedLowering

    def record(make, kind):
        def wrapper(graph, name, *a, **k):
            lowering[0] = 0.0
            gc_before = collecting[1]
            start = time.thread_time()
            unit = make(graph, name, *a, **k)
            total = (time.thread_time() - start) * 1e3
            library = getattr(unit, "library", None)
            if library is None:  # views only: nothing compiled
                return unit
            phases = dict(library.phases)
            phases["lower"] = lowering[0]
            phases["gc"] = collecting[1] - gc_before
            if not library.from_disk:
                phases["build"] = max(0.0, total - lowering[0] - sum(library.phases.values()))
            # gc time sits inside the other phases; "total" stays the unit's wall of CPU time
            kernel = getattr(unit, "kernel", None)
            units.append({"name": name, "kind": kind if kernel is not None or kind == "scalar"
                          else "blas", "total": total, "from_disk": library.from_disk,
                          "phases": phases, "ir_chars": library.ir_chars,
                          "nodes": sum(1 for _ in graph.nodes())})
            return unit
        return wrapper

    cache.tensor_unit = record(cache.tensor_unit, "kernel")
    cache.ScalarProgramUnit = record(cache.ScalarProgramUnit, "scalar")


def run_target(name: str, instrument: bool = True) -> list[dict]:
    """Compile (or load) every unit of `name` in this process: forward, then forward+backward."""
    units: list[dict] = []
    if instrument:
        _instrument(units)
    import irjit
    from irjit.ops.tensor import Tensor
    if name in NAMES:
        workload = load_workload(name)
        args = workload.inputs()
        fn = irjit.load(workload.ir_path, executor="profiling", backend="native")
        run = lambda grad: fn.run(*args, requires_grad=grad)  # noqa: E731
    else:
        folder = ARCH / name
        x = _npz(folder / "inputs.npz")["arg0"]
        fn = irjit.load(folder / "graph.ir", params=_npz(folder / "params.npz"), executor="profiling",
                        backend="native")
        run = lambda grad: fn.run(Tensor(x), requires_grad=grad)  # noqa: E731
    for _ in range(3):
        run(False)
    for _ in range(3):
        run(True)
        fn.backward()
    return units


def plain_o3(mod) -> None:
    """LLVM's O3 pipeline as is (loop unrolling included), for `--kernels`."""
    import llvmlite.binding as llvm
    from irjit.compiler.codegen.library import target_machine
    pto = llvm.create_pipeline_tuning_options(speed_level=3)
    pto.loop_vectorization = True
    pto.slp_vectorization = True
    pb = llvm.create_pass_builder(target_machine(), pto)
    pb.getModulePassManager().run(mod, pb)


def compare_kernels(name: str, seconds: float = 1.0) -> list[dict]:
    """Every tensor unit of `name` compiled with irjit's pipeline and with plain O3, called
    alternately on the arguments the target gave it (this process runs on one core)."""
    from irjit.compiler.codegen import library, unit as unit_module
    graphs, args = {}, {}
    init, call = unit_module.NativeUnit.__init__, unit_module.NativeUnit.call

    def recording_init(self, graph, unit_name="unit", *a, **k):
        init(self, graph, unit_name, *a, **k)
        graphs[unit_name] = graph

    def recording_call(self, arrays, *a, **k):
        if self.name in graphs and self.name not in args:
            args[self.name] = [x.copy() if isinstance(x, np.ndarray) else x for x in arrays]
        return call(self, arrays, *a, **k)
    unit_module.NativeUnit.__init__, unit_module.NativeUnit.call = recording_init, recording_call
    run_target(name, instrument=False)
    unit_module.NativeUnit.__init__, unit_module.NativeUnit.call = init, call
    ours = library.optimize
    rows = []
    for unit_name, graph in graphs.items():
        if unit_name not in args:
            continue
        units = {}
        for label, pipeline in (("irjit", ours), ("O3", plain_o3)):
            library.optimize = pipeline
            units[label] = unit_module.NativeUnit(graph, f"{unit_name}_{label}")
        library.optimize = ours
        times: dict[str, list[float]] = {label: [] for label in units}
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline or len(times["O3"]) < 5:
            for label, unit in units.items():
                start = time.process_time()
                unit.call(args[unit_name])
                times[label].append(time.process_time() - start)
        rows.append({"name": unit_name, **{f"{label} us": float(np.median(t)) * 1e6 for label, t in times.items()},
                     **{f"{label} ms": u.library.phases.get("optimize", 0.0) + u.library.phases.get("codegen", 0.0)
                        for label, u in units.items()}})
    return rows


def print_kernels(names) -> None:
    print("kernel time per call (median CPU us, one core) and optimize + codegen ms per unit: "
          "irjit's pipeline vs LLVM's plain O3")
    ratios = []
    for name in names:
        env = dict(os.environ, IRJIT_CACHE="0")
        done = subprocess.run([sys.executable, "-m", "irjit.tools.bench_compile", "--process", name,
                               "--kernels"], env=env, capture_output=True, text=True)
        if done.returncode:
            raise SystemExit(f"{name}: the kernel process failed:\n{done.stderr}")
        rows = json.loads(done.stdout.strip().splitlines()[-1])
        print(f"\n{name}:")
        for r in sorted(rows, key=lambda r: -r["O3 us"]):
            ratios.append(r["irjit us"] / r["O3 us"])
            print(f"  {r['name'][5:13]}  irjit {r['irjit us']:9.1f} us {r['irjit ms']:6.1f} ms   "
                  f"O3 {r['O3 us']:9.1f} us {r['O3 ms']:6.1f} ms   {ratios[-1]:.2f}x")
    if ratios:
        print(f"\ngeometric mean of irjit / O3 kernel time over {len(ratios)} units: "
              f"{float(np.exp(np.mean(np.log(ratios)))):.2f}x (min {min(ratios):.2f}x, max {max(ratios):.2f}x)")


def fresh_process(name: str, cache_dir: str) -> list[dict]:
    env = dict(os.environ, IRJIT_CACHE_DIR=cache_dir, IRJIT_CACHE="1")
    done = subprocess.run([sys.executable, "-m", "irjit.tools.bench_compile", "--process", name],
                          env=env, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{name}: the compile process failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def median_units(runs: list[list[dict]]) -> list[dict]:
    """Per unit (by name, in the first run's order), the median of each phase over the runs."""
    by_name: dict[str, list[dict]] = {}
    for units in runs:
        for u in units:
            by_name.setdefault(u["name"], []).append(u)
    merged = []
    for name, us in by_name.items():
        m = dict(us[0])
        m["total"] = float(np.median([u["total"] for u in us]))
        m["phases"] = {p: float(np.median([u["phases"].get(p, 0.0) for u in us])) for p in PHASES}
        merged.append(m)
    return merged


def print_table(title: str, rows: list[tuple[str, dict, float]]) -> None:
    heads = [SHORT.get(p, p) for p in PHASES]
    print(f"\n{title}")
    print(f"  {'':28} " + " ".join(f"{h:>9}" for h in heads) + f" {'total':>9}")
    for label, phases, total in rows:
        print(f"  {label:28} " + " ".join(f"{phases.get(p, 0.0):9.1f}" for p in PHASES) + f" {total:9.1f}")


def main(argv=None) -> int:
    targets = (*NAMES, *ARCHS)
    ap = argparse.ArgumentParser(prog="python -m irjit.tools.bench_compile")
    ap.add_argument("--only", choices=targets, action="append", help="this workload or architecture (repeatable)")
    ap.add_argument("--units", action="store_true", help="list every unit, not only the sums")
    ap.add_argument("--repeat", type=int, default=1, help="cold processes per target (median per unit)")
    ap.add_argument("--kernels", action="store_true",
                    help="kernel speed and compile time per unit, irjit's pipeline vs plain O3")
    ap.add_argument("--process", choices=targets, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.process:
        if args.kernels:
            os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[-1]})
            print(json.dumps(compare_kernels(args.process)))
        else:
            print(json.dumps(run_target(args.process)))
        return 0
    if args.kernels:
        print_kernels(args.only or targets)
        return 0
    print("native compile per phase (CPU ms of the compiling thread; cold = empty disk cache, "
          "cached = a fresh process reading it)")
    summary = []
    for name in args.only or targets:
        cold_runs = []
        for _ in range(max(1, args.repeat)):
            with tempfile.TemporaryDirectory(prefix="irjit-compile-") as cache_dir:
                cold_runs.append(fresh_process(name, cache_dir))
                if len(cold_runs) == 1:
                    warm = fresh_process(name, cache_dir)
        cold = median_units(cold_runs)
        warm_totals = [u["total"] for u in warm if u["from_disk"]]
        if args.units:
            rows = [(f"{u['name'][5:13]} {u['kind']:6} {u['nodes']:3}n {u['ir_chars'] // 1000:4}k",
                     u["phases"], u["total"]) for u in sorted(cold, key=lambda u: -u["total"])]
            print_table(f"{name}: {len(cold)} units, cold (unit, kind, graph nodes, IR kchars)", rows)
        sums = {p: sum(u["phases"][p] for u in cold) for p in PHASES}
        summary.append((name, len(cold), sums, sum(u["total"] for u in cold),
                        max((u["total"] for u in cold), default=0.0),
                        max(warm_totals, default=0.0), float(np.median(warm_totals)) if warm_totals else 0.0))
    print_table("sum over each target's units, cold", [(f"{n} ({k})", s, t) for n, k, s, t, *_ in summary])
    print(f"\n  {'target':22} {'units':>5} {'cold max':>9} {'cold sum':>9} {'cached max':>10} {'cached med':>10}")
    for name, k, _, total, cold_max, warm_max, warm_med in summary:
        print(f"  {name:22} {k:5d} {cold_max:9.1f} {total:9.1f} {warm_max:10.1f} {warm_med:10.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
