"""cat and stack units against numpy.concatenate / numpy.stack (into a preallocated output, as
the unit writes one), each unit compiled in this process and the same unit linked from the disk
cache (written by a fresh process first), timed alternately in one run on one core: the native
call alone (ctypes, argument guards, the copy), median CPU time.

    python -m irjit.tools.bench_joins [--repeat N]

The shapes: lstm2's gate concatenation (the one cat unit of the bench architectures, 4 x (8, 64)
along dim 1) and larger pieces along every kind of dim.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

CASES = {  # name: (op, dim, piece shapes)
    "lstm2 gates 4x(8,64) dim 1": ("cat", 1, [(8, 64)] * 4),
    "cat 4x(256,512) dim 1": ("cat", 1, [(256, 512)] * 4),
    "cat 4x(256,512) dim 0": ("cat", 0, [(256, 512)] * 4),
    "cat (64,3|100|1000) dim 1": ("cat", 1, [(64, 3), (64, 100), (64, 1000)]),
    "cat 3x(16,64,256) dim 1": ("cat", 1, [(16, 64, 256)] * 3),
    "stack 4x(256,512) dim 0": ("stack", 0, [(256, 512)] * 4),
    "stack 4x(256,512) dim 2": ("stack", 2, [(256, 512)] * 4),
}


def _text(op: str, dim: int, n: int) -> str:
    names = ", ".join(f"%x{i}" for i in range(n))
    return (f"graph({', '.join(f'%x{i} : Tensor' for i in range(n))}):\n"
            f"  %d : int = prim::Constant[value={dim}]()\n"
            f"  %l : Tensor[] = prim::ListConstruct({names})\n"
            f"  %y : Tensor = aten::{op}(%l, %d)\n  return (%y)")


def _pieces(shapes) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [rng.standard_normal(s).astype(np.float32) for s in shapes]


def unit_of(op: str, dim: int, xs: list[np.ndarray]):
    """(group graph, unit) of the join as the native runner makes it (from the disk cache when
    it holds the unit)."""
    import irjit.runtime.native as native
    from irjit.compiler import parse_ir
    from irjit.ops.tensor import Tensor
    from irjit.runtime import no_grad
    made = []
    get_unit = native.get_unit

    def recording(graph):
        unit, hit = get_unit(graph)
        made.append((graph, unit))
        return unit, hit
    native.get_unit = recording
    try:
        runner = native.NativeRunner(parse_ir(_text(op, dim, len(xs))))
        with no_grad():
            for _ in range(2):  # the first call profiles
                runner.run([Tensor(x) for x in xs])
    finally:
        native.get_unit = get_unit
    return made[-1]


def _cpu_us(fn, calls: int) -> float:
    for _ in range(max(5, calls // 10)):
        fn()
    times = []
    for _ in range(calls):
        t = time.process_time()
        fn()
        times.append(time.process_time() - t)
    return float(np.median(times)) * 1e6


def time_cases(repeat: int) -> None:
    from irjit.compiler.codegen.unit import NativeUnit
    print(f"{'case':28} {'numpy':>9} {'fresh':>9} {'disk':>9}   us per call (median CPU time), "
          f"native / numpy")
    for case, (op, dim, shapes) in CASES.items():
        xs = _pieces(shapes)
        graph, disk = unit_of(op, dim, xs)
        assert disk.library.from_disk, "the disk cache does not hold the unit"
        fresh = NativeUnit(graph, disk.name + "_fresh")
        join = np.concatenate if op == "cat" else np.stack
        expected = join(xs, axis=dim)
        out = np.empty_like(expected)
        for unit in (fresh, disk):
            assert np.array_equal(unit.call(xs)[1][0], expected)
        calls = repeat if expected.size > 10000 else 10 * repeat
        fns = {"numpy": lambda: join(xs, axis=dim, out=out), "fresh": lambda: fresh._fn(*xs, out),
               "disk": lambda: disk._fn(*xs, out)}
        times: dict[str, list[float]] = {k: [] for k in fns}
        for _ in range(5):  # alternate, so drift hits every contender alike
            for label, fn in fns.items():
                times[label].append(_cpu_us(fn, calls))
        med = {k: float(np.median(v)) for k, v in times.items()}
        print(f"{case:28} {med['numpy']:9.2f} {med['fresh']:9.2f} {med['disk']:9.2f}   "
              f"{med['fresh'] / med['numpy']:.2f}x / {med['disk'] / med['numpy']:.2f}x")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m irjit.tools.bench_joins")
    ap.add_argument("--repeat", type=int, default=300, help="timed calls per contender and round")
    ap.add_argument("--store", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.store:  # a fresh process compiles every unit into the disk cache
        for op, dim, shapes in CASES.values():
            unit_of(op, dim, _pieces(shapes))
        return 0
    os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[-1]})
    with tempfile.TemporaryDirectory(prefix="irjit-joins-") as cache_dir:
        os.environ.update(IRJIT_CACHE_DIR=cache_dir, IRJIT_CACHE="1")
        subprocess.run([sys.executable, "-m", "irjit.tools.bench_joins", "--store"], check=True)
        time_cases(args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
