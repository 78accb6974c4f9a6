"""Time the six benchmark workloads (tests/fixtures/bench) per call: irjit native vs irjit's
interpreter (both under the profiling executor) and hand-written numpy forwards, all in this
process, median of many calls after warm-up, with the machine's copy bandwidth and sgemm rate
measured in the same run.

    python -m irjit.tools.bench_native [--repeat N]

Re-executes itself with GLIBC_TUNABLES that keep freed memory mapped (on these VMs touching
reclaimed pages costs 1-7 us per 4 KiB page), so every contender reuses its buffers alike.
torch contenders are not here yet (issue 11).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

TUNABLES = "glibc.malloc.trim_threshold=4294967295:glibc.malloc.mmap_threshold=33554432"
BENCH = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "bench"


def _sigmoid(x):
    with np.errstate(over="ignore"):  # exp(-x) overflows to inf for very negative x: sigmoid 0
        return 1.0 / (1.0 + np.exp(-x))


def _conv_relu(x, w):
    from numpy.lib.stride_tricks import sliding_window_view
    win = sliding_window_view(x, w.shape[2:], axis=(2, 3))  # N, C, H', W', kh, kw
    return np.maximum(np.einsum("nchwij,ocij->nohw", win, w, optimize=True), 0)


def _lstm(x, h, c, w_ih, w_hh, b_ih, b_hh):
    i, f, g, o = np.split(x @ w_ih.T + b_ih + h @ w_hh.T + b_hh, 4, axis=1)
    c2 = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
    return _sigmoid(o) * np.tanh(c2), c2


def _rnn(x, h, W, U):
    for i in range(x.shape[0]):
        h = np.tanh(x[i] @ W + h @ U)
    return h


NUMPY_FORWARD = {
    "elementwise_chain": lambda x, a, b: np.tanh(x * a + b) * _sigmoid(x) + x * x,
    "lstm_cell": _lstm,
    "mlp": lambda x, w1, b1, w2, b2: np.maximum(x @ w1.T + b1, 0) @ w2.T + b2,
    "rnn_loop": _rnn,
    "seed_conv_relu": _conv_relu,
    "tiny_linear_tanh": lambda x, h, W, b: np.tanh(x @ W.T + b + h),
}


def median_us(fn, repeat: int) -> float:
    """Median wall time of `fn()` in microseconds, after warm-up calls."""
    for _ in range(max(3, repeat // 10)):
        fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times)) * 1e6


def machine_bounds(repeat: int) -> tuple[float, float]:
    """(copy bandwidth in GB/s counting bytes read + written, sgemm GFLOP/s) measured now."""
    src, dst = np.ones(1 << 25, np.float32), np.empty(1 << 25, np.float32)
    copy_us = median_us(lambda: np.copyto(dst, src), max(5, repeat // 10))
    a = np.ones((1024, 1024), np.float32)
    out = np.empty_like(a)
    gemm_us = median_us(lambda: np.matmul(a, a, out=out), max(5, repeat // 10))
    return 2 * src.nbytes / copy_us / 1e3, 2 * 1024 ** 3 / gemm_us / 1e3


def bench(name: str, repeat: int) -> dict:
    import irjit
    meta = json.loads((BENCH / f"{name}.json").read_text())
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(i["shape"]).astype(i["dtype"]) for i in meta["inputs"]]
    row = {}
    for backend in ("native", "interp"):
        fn = irjit.load(BENCH / f"{name}.ir", executor="profiling", backend=backend)
        row[f"{backend} fwd"] = median_us(lambda: fn.run(*args, requires_grad=False), repeat)

        def fwd_bwd():
            fn.run(*args)
            fn.backward()
        row[f"{backend} fwd+bwd"] = median_us(fwd_bwd, repeat)
    row["numpy fwd"] = median_us(lambda: NUMPY_FORWARD[name](*args), repeat)
    row["bytes"] = sum(a.nbytes for a in args) + args[0].nbytes  # inputs read, one output written
    return row


def main(argv=None) -> int:
    if os.environ.get("GLIBC_TUNABLES") != TUNABLES:
        os.environ["GLIBC_TUNABLES"] = TUNABLES
        os.execv(sys.executable, [sys.executable, "-m", "irjit.tools.bench_native", *sys.argv[1:]])
    ap = argparse.ArgumentParser(prog="python -m irjit.tools.bench_native")
    ap.add_argument("--repeat", type=int, default=200, help="timed calls per contender")
    args = ap.parse_args(argv)
    bandwidth, gflops = machine_bounds(args.repeat)
    print(f"machine: copy {bandwidth:.1f} GB/s, sgemm {gflops:.1f} GFLOP/s; median us per call, "
          f"{args.repeat} calls after warm-up")
    print(f"{'workload':18} {'native fwd':>11} {'interp fwd':>11} {'numpy fwd':>10} "
          f"{'native/numpy':>12} {'native f+b':>11} {'interp f+b':>11}")
    for name in sorted(NUMPY_FORWARD):
        repeat = args.repeat if name != "elementwise_chain" else max(10, args.repeat // 10)
        r = bench(name, repeat)
        print(f"{name:18} {r['native fwd']:11.1f} {r['interp fwd']:11.1f} {r['numpy fwd']:10.1f} "
              f"{r['native fwd'] / r['numpy fwd']:12.2f} {r['native fwd+bwd']:11.1f} "
              f"{r['interp fwd+bwd']:11.1f}")
        if name == "elementwise_chain":
            bound = r["bytes"] / bandwidth / 1e3
            print(f"{'':18} memory bound {bound:.1f} us: native fwd at {r['native fwd'] / bound:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
