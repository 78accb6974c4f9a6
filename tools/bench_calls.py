"""Per-call overhead of irjit's native paths (a dev script): the tiny Linear+tanh graph through
`irjit.compile` (numpy arrays in) and through the profiling executor (`irjit.load(...,
executor="profiling")`, Tensors in, as tools/bench_native.py calls it), forward and
forward+backward, and rnn_loop through the profiling executor; hand-written numpy beside them.
Each number is the fastest of `--rounds` batches of calls (20 calls per batch, rnn_loop's one by
one), per call: on a shared machine other work only adds time. Re-executes itself with the
GLIBC tunables tools/bench_native.py runs under. `--profile NAME`
prints a cProfile of one case instead; `--count NAME` makes `--calls` calls of it (after 50
warm-up calls) inside `math.fsum(map(...))`, so that `valgrind --tool=callgrind
--toggle-collect=math_fsum` counts the instructions of those calls alone (load cannot change
them; nothing else of the process calls math.fsum).

    python -m irjit.tools.bench_calls [--rounds N] [--only tiny|rnn] [--profile NAME]
    valgrind --tool=callgrind --toggle-collect=math_fsum \
        python -m irjit.tools.bench_calls --only tiny --count "tiny compile fwd+bwd" [--calls N]
"""

from __future__ import annotations

import argparse
import cProfile
import math
import os
import pstats
import sys
import time
from typing import Callable

from irjit.tools.bench_native import TUNABLES

TINY_TYPES = "Float(3, 4), Float(3, 4), Float(4, 4), Float(4)"


def best_us(fn: Callable, batch: int, rounds: int) -> float:
    """The fastest of `rounds` batches of `batch` calls, per call: on a shared machine other
    work only ever adds time, so the minimum is the call's own cost."""
    for _ in range(max(20, batch * rounds // 10)):
        fn()
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(batch):
            fn()
        best = min(best, time.perf_counter() - t)
    return best / batch * 1e6


def cases(only: set) -> dict[str, Callable]:
    """name -> a call to time (each warmed up to its steady state by `median_us`)."""
    import irjit
    from irjit.ops.tensor import Tensor
    from irjit.tools.bench_workloads import NUMPY_FORWARD, NUMPY_FORWARD_BACKWARD, load_workload
    found: dict[str, Callable] = {}
    tiny = load_workload("tiny_linear_tanh")
    arrays = tiny.inputs()
    tensors = [Tensor(a) for a in arrays]
    if not only or "tiny" in only:
        fn = irjit.compile(tiny.ir_path.read_text(), TINY_TYPES)
        found["tiny compile fwd"] = lambda: fn.run(*arrays, requires_grad=False)
        found["tiny compile fwd+bwd"] = lambda: (fn.run(*arrays), fn.backward())
        taped = irjit.compile(tiny.ir_path.read_text(), TINY_TYPES)  # the parts of fwd+bwd
        for _ in range(3):  # (the first calls specialize: a native call's tape)
            taped.run(*arrays)
            taped.backward()
        found["tiny compile fwd (grad)"] = lambda: taped.run(*arrays)
        found["tiny compile bwd"] = lambda: taped.backward()  # (of its latest call, again)
        fwd, train = (irjit.load(tiny.ir_path, executor="profiling") for _ in range(2))
        found["tiny profiling fwd"] = lambda fwd=fwd: fwd.run(*tensors, requires_grad=False)
        found["tiny profiling fwd+bwd"] = lambda train=train: (train.run(*tensors), train.backward())
        found["tiny numpy fwd"] = lambda: NUMPY_FORWARD["tiny_linear_tanh"](*arrays)
        found["tiny numpy fwd+bwd"] = lambda: NUMPY_FORWARD_BACKWARD["tiny_linear_tanh"](*arrays)
    if not only or "rnn" in only:
        rnn = load_workload("rnn_loop")
        rnn_arrays = rnn.inputs()
        rnn_tensors = [Tensor(a) for a in rnn_arrays]
        fwd, train = (irjit.load(rnn.ir_path, executor="profiling") for _ in range(2))
        found["rnn profiling fwd"] = lambda fwd=fwd: fwd.run(*rnn_tensors, requires_grad=False)
        found["rnn profiling fwd+bwd"] = lambda train=train: (train.run(*rnn_tensors), train.backward())
        found["rnn numpy fwd"] = lambda: NUMPY_FORWARD["rnn_loop"](*rnn_arrays)
        found["rnn numpy fwd+bwd"] = lambda: NUMPY_FORWARD_BACKWARD["rnn_loop"](*rnn_arrays)
    return found


def main(argv=None) -> int:
    if os.environ.get("GLIBC_TUNABLES") != TUNABLES:  # keep freed memory, as bench_native does
        os.environ["GLIBC_TUNABLES"] = TUNABLES
        os.execv(sys.executable, [sys.executable, "-m", "irjit.tools.bench_calls", *sys.argv[1:]])
    ap = argparse.ArgumentParser(prog="python -m irjit.tools.bench_calls")
    ap.add_argument("--rounds", type=int, default=200, help="timed batches per case")
    ap.add_argument("--only", action="append", choices=("tiny", "rnn"))
    ap.add_argument("--profile", metavar="NAME", help="cProfile the case NAME instead")
    ap.add_argument("--count", metavar="NAME",
                    help="make --calls calls of the case NAME inside math.fsum (for callgrind)")
    ap.add_argument("--calls", type=int, default=1000, help="calls of --count (default 1000)")
    args = ap.parse_args(argv)
    found = cases(set(args.only or ()))
    if args.count:
        fn = found[args.count]
        for _ in range(50):
            fn()
        math.fsum(map(lambda _: (fn(), 0.0)[1], range(args.calls)))
        print(f"{args.count}: {args.calls} calls inside math.fsum")
        return 0
    if args.profile:
        fn = found[args.profile]
        best_us(fn, 1, 100)
        profile = cProfile.Profile()
        profile.runcall(lambda: [fn() for _ in range(args.rounds * 10)])
        pstats.Stats(profile).sort_stats("tottime").print_stats(30)
        return 0
    for name, fn in found.items():
        batch, rounds = (1, max(10, args.rounds // 4)) if name.startswith("rnn") else (20, args.rounds)
        print(f"{name:24} {best_us(fn, batch, rounds):10.2f} us", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
