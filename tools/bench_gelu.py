"""float32 GELU (erf form) per element: irjit's native unit beside torch.nn.functional.gelu,
one core, CPU time, in one process; and both libraries' float32 erf and GELU accuracy in ulps
against mpmath (100 bits) over a spread of points, tails included.

    python -m irjit.tools.bench_gelu [--rows 256 --cols 256] [--calls 400] [--no-accuracy]

Run with a torch venv from the checkout's root (as a module, so irjit is this checkout); torch is
imported only here. The default shape is vit_encoder's fc1 output (4 x 64 tokens, 256 wide).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

TUNABLES = "glibc.malloc.trim_threshold=4294967295:glibc.malloc.mmap_threshold=33554432"

RELU_IR = """graph(%x : Float({rows}, {cols}, strides=[{cols}, 1], requires_grad=0, device=cpu)):
  %y : Float({rows}, {cols}, strides=[{cols}, 1], requires_grad=0, device=cpu) = aten::relu(%x)
  return (%y)
"""
GELU_IR = """graph(%x : Float({rows}, {cols}, strides=[{cols}, 1], requires_grad=0, device=cpu)):
  %approx : str = prim::Constant[value="none"]()
  %y : Float({rows}, {cols}, strides=[{cols}, 1], requires_grad=0, device=cpu) = \
aten::gelu(%x, %approx)
  return (%y)
"""
ERF_IR = """graph(%x : Float({n}, strides=[1], requires_grad=0, device=cpu)):
  %y : Float({n}, strides=[1], requires_grad=0, device=cpu) = aten::erf(%x)
  return (%y)
"""


def cpu_us(fn, calls: int, repeat: int = 7) -> float:
    """Median over `repeat` batches of the process CPU time per call, in microseconds."""
    for _ in range(20):
        fn()
    times = []
    for _ in range(repeat):
        t = time.process_time()
        for _ in range(calls):
            fn()
        times.append((time.process_time() - t) / calls * 1e6)
    return float(np.median(times))


def ordinal(x):
    i = x.view(np.int32).astype(np.int64)
    return np.where(i < 0, -(i & 0x7FFFFFFF), i)


def ulps(got, want):
    """Per-element ulp distance of float32 results (NaN/NaN 0, NaN/number inf)."""
    d = np.abs(ordinal(got) - ordinal(want)).astype(np.float64)
    return np.where(np.isnan(got) & np.isnan(want), 0.0,
                    np.where(np.isnan(got) != np.isnan(want), np.inf, d))


def accuracy_points(rng):
    """Uniform points where GELU/erf vary, their tails down to underflow, log sweeps, random
    bits."""
    n = 1 << 14
    sweep = np.logspace(-45, 38, n)
    bits = rng.integers(0, 2**32 - 1, n, dtype=np.uint32).view(np.float32)
    x = np.concatenate([rng.uniform(-6, 6, n), rng.uniform(-15, -3, n), rng.uniform(-1, 1, n),
                        rng.uniform(3, 4, n), -np.float32(4) * rng.random(n),
                        sweep, -sweep, bits[np.isfinite(bits)]]).astype(np.float32)
    return x


def mp_reference(name, x):
    import mpmath
    mpmath.mp.prec = 100

    def one(v):
        v = float(v)
        if np.isnan(v):
            return np.nan
        if name == "erf":
            return float(mpmath.erf(v)) if abs(v) < 30 else float(np.sign(v))
        if v == -np.inf:
            return np.nan
        if v == 0 or abs(v) > 1e10:
            return v if v > 0 or v == 0 else -0.0
        m = mpmath.mpf(v)
        return float(m / 2 * mpmath.erfc(-m / mpmath.sqrt(2)))
    return np.array([one(v) for v in x], dtype=np.float64).astype(np.float32)


def report_accuracy(torch, irjit_erf, irjit_gelu, x):
    for name, mine, theirs in (
            ("erf", irjit_erf, lambda a: torch.erf(torch.from_numpy(a)).numpy()),
            ("gelu", irjit_gelu, lambda a: torch.nn.functional.gelu(torch.from_numpy(a)).numpy())):
        want = mp_reference(name, x)
        for who, fn in (("irjit", mine), ("torch", theirs)):
            got = fn(x)
            err = ulps(got, want)
            if name == "gelu":
                # x/2 (1 + erf(x/sqrt2)) cancels for negative x in float32 (in both libraries'
                # formula): there the error is the absolute one of 1 + erf, in units of 2^-24.
                err = np.where(x >= 0, err, np.abs(got.astype(np.float64) - want) /
                               np.maximum(np.abs(x) / 2, 1e-30) * 2.0**24)
                for part, keep in (("x >= 0, ulp", x >= 0),
                                   ("0 <= x <= 1e4, ulp", (x >= 0) & (x <= 1e4)),
                                   ("x < 0, |error of 1 + erf| / 2^-24", (x < 0) & (x > -1e30))):
                    e = np.where(keep & np.isfinite(x), err, 0)
                    worst = int(np.argmax(e))
                    print(f"  gelu  {who:6s} {part}: max {e.max():.3g} at x={x[worst]!r}, "
                          f"mean {e[keep].mean():.3g}")
                continue
            worst = int(np.argmax(err))
            print(f"  {name:5s} {who:6s} max {err.max():.3g} ulp at x={x[worst]!r} "
                  f"(got {got[worst]!r}, want {want[worst]!r}), mean {err.mean():.3g}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=256)
    ap.add_argument("--cols", type=int, default=256)
    ap.add_argument("--calls", type=int, default=400)
    ap.add_argument("--no-accuracy", action="store_true")
    args = ap.parse_args(argv)
    if os.environ.get("GLIBC_TUNABLES") != TUNABLES:
        os.environ["GLIBC_TUNABLES"] = TUNABLES
        os.execv(sys.executable, [sys.executable, "-m", "irjit.tools.bench_gelu", *sys.argv[1:]])
    os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    import torch
    import irjit
    torch.set_num_threads(1)
    rows, cols = args.rows, args.cols
    gelu = irjit.compile(GELU_IR.format(rows=rows, cols=cols))
    x = np.random.default_rng(0).standard_normal((rows, cols)).astype(np.float32)
    tx, tout = torch.from_numpy(x), torch.empty(rows, cols)
    gelu(x)
    want = torch.nn.functional.gelu(tx).numpy()
    assert np.allclose(gelu(x), want, rtol=1e-5, atol=1e-6)
    n = rows * cols
    relu = irjit.compile(RELU_IR.format(rows=rows, cols=cols))
    relu(x)
    rows_out = []
    for _ in range(3):  # interleaved rounds: the machine is shared
        rows_out.append((cpu_us(lambda: gelu(x), args.calls),
                         cpu_us(lambda: torch._C._nn.gelu(tx, out=tout), args.calls),
                         cpu_us(lambda: relu(x), args.calls),
                         cpu_us(lambda: torch.clamp_min(tx, 0.0, out=tout), args.calls)))
    ours, theirs, ours_floor, theirs_floor = np.min(np.array(rows_out), axis=0)
    print(f"float32 gelu {rows}x{cols}, one core, CPU time (best of 3 rounds of median of 7 x "
          f"{args.calls} calls), relu of the same shape as each library's call floor:")
    print(f"  irjit {ours:.1f} us (relu {ours_floor:.1f}; gelu - relu "
          f"{(ours - ours_floor) / n * 1e3:.3f} ns/element)")
    print(f"  torch {theirs:.1f} us (relu {theirs_floor:.1f}; gelu - relu "
          f"{(theirs - theirs_floor) / n * 1e3:.3f} ns/element)")
    print(f"  ratio irjit/torch: whole call {ours / theirs:.2f}, "
          f"gelu - relu {(ours - ours_floor) / (theirs - theirs_floor):.2f}")
    if not args.no_accuracy:
        xs = accuracy_points(np.random.default_rng(1))
        erf = irjit.compile(ERF_IR.format(n=len(xs)))
        gelu_flat = irjit.compile(GELU_IR.format(rows=1, cols=len(xs)))
        print(f"accuracy against mpmath, float32, {len(xs)} points:")
        report_accuracy(torch, lambda a: erf(a), lambda a: gelu_flat(a[None])[0], xs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
