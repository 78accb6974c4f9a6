"""mathlib kernels per element: each function compiled alone in a loop over a float array
(emitted per element and vectorized by LLVM, as the native units' element-wise loops are),
timed on one core (CPU time, median of batches of calls after warm-up, arrays that stay in
L2), for this checkout's mathlib and, with --baseline, another checkout's beside it in the
same process; with --accuracy also each one's largest ulp error against numpy's float64
result rounded, over every --stride-th float32 of a range.

    python -m irjit.tools.bench_mathlib [--baseline ../other-checkout] [--functions tanh,sigmoid]
        [--dtype float32] [--n 16384] [--calls 400] [--accuracy [--stride 3]] [--fused N]
    python -m irjit.tools.bench_mathlib --chain [--calls 100]

--fused N also times the element-wise chain's forward and backward (tanh and sigmoid recomputed
from the inputs) as one fused loop each over N float32, the contenders in turn: N = 4000000 is
the workload's size (memory-bound on one core), N = 65536 stays in L2 (arithmetic only).
--chain instead times the element-wise chain workload (tanh and sigmoid of 4M float32) run
natively under the profiling executor, forward and forward+backward, on one core (CPU time,
median of --calls calls after warm-up), for this checkout only: run it alternately from two
checkouts (PYTHONPATH and IRJIT_CACHE_DIR of their own) to compare them.

Run from the checkout's root (as a module, so irjit is this checkout). The baseline's
compiler/codegen/mathlib is loaded as a package of its own (it imports only itself), so both
are compiled with this checkout's pipeline (`library.optimize`, the host CPU).
"""

from __future__ import annotations

import argparse
import ctypes
import importlib.util
import os
import re
import sys
import time
from pathlib import Path

import numpy as np

from irjit.tools.bench_gelu import ordinal

TUNABLES = "glibc.malloc.trim_threshold=4294967295:glibc.malloc.mmap_threshold=33554432"


def load_mathlib(root: str):
    """The mathlib package of the checkout at `root`, imported under a name of its own."""
    folder = Path(root) / "compiler" / "codegen" / "mathlib"
    name = f"mathlib_{abs(hash(str(folder.resolve())))}"
    spec = importlib.util.spec_from_file_location(name, folder / "__init__.py",
                                                  submodule_search_locations=[str(folder)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def compile_loops(mathlib, names, dtype, bodies=None):
    """{name: ctypes function (x*, out*, n)} of loops out[i] = name(x[i]), optimized as units
    are, the engine (kept alive by the caller) and the assembly. `bodies` adds loops of their
    own: name -> (inputs, outputs, fn(builder, emit, loaded inputs) -> output values), called
    with (inputs..., outputs..., n)."""
    import llvmlite.binding as llvm
    from llvmlite import ir

    from irjit.compiler.codegen import library

    elem = ir.FloatType() if dtype == np.float32 else ir.DoubleType()
    module = library.new_module("bench_mathlib")
    i64 = ir.IntType(64)
    loops = {name: (1, 1, lambda b, emit, xs, name=name: [emit(b, name, xs)]) for name in names}
    loops.update(bodies or {})
    for name, (n_in, n_out, body) in loops.items():
        ptr = elem.as_pointer()
        fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [ptr] * (n_in + n_out) + [i64]),
                         f"k_{name}")
        *ptrs, n = fn.args
        entry, loop, done = (fn.append_basic_block(s) for s in ("entry", "body", "done"))
        b = ir.IRBuilder(entry)
        b.cbranch(b.icmp_signed(">", n, i64(0)), loop, done)
        b.position_at_end(loop)
        i = b.phi(i64)
        i.add_incoming(i64(0), entry)
        values = body(b, mathlib.emit, [b.load(b.gep(p, [i])) for p in ptrs[:n_in]])
        for p, v in zip(ptrs[n_in:], values):
            b.store(v, b.gep(p, [i]))
        nxt = b.add(i, i64(1))
        i.add_incoming(nxt, loop)
        b.cbranch(b.icmp_signed("<", nxt, n), loop, done)
        b.position_at_end(done)
        b.ret_void()
    mod = llvm.parse_assembly(str(module))
    mod.verify()
    library.optimize(mod)
    # an engine owns its target machine: each gets one of its own (sharing one crashes at exit)
    cpu, features = library._host()
    tm = llvm.Target.from_default_triple().create_target_machine(
        cpu=cpu, features=features, opt=3, codemodel="jitdefault")
    asm = tm.emit_assembly(mod)
    engine = llvm.create_mcjit_compiler(mod, tm)
    engine.finalize_object()
    fns = {}
    for name, (n_in, n_out, _) in loops.items():
        proto = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * (n_in + n_out), ctypes.c_int64)
        fns[name] = proto(engine.get_function_address(f"k_{name}"))
    return fns, engine, asm


def _chain_forward(b, emit, xs):
    """y = tanh(x*a + b) * sigmoid(x) + x*x (the element-wise chain workload)."""
    x, a, c = xs
    t = emit(b, "tanh", [b.fadd(b.fmul(x, a), c)])
    return [b.fadd(b.fmul(t, emit(b, "sigmoid", [x])), b.fmul(x, x))]


def _chain_backward(b, emit, xs):
    """The chain's gradients w.r.t. x, a and b for output gradient g, recomputing tanh and
    sigmoid from the inputs (as the rematerialized backward unit does)."""
    x, a, c, g = xs
    t = emit(b, "tanh", [b.fadd(b.fmul(x, a), c)])
    s = emit(b, "sigmoid", [x])
    one = ir_const(x.type, 1.0)
    dt = b.fmul(b.fmul(g, s), b.fsub(one, b.fmul(t, t)))
    ds = b.fmul(b.fmul(g, t), b.fmul(s, b.fsub(one, s)))
    gx = b.fadd(b.fadd(b.fmul(dt, a), ds), b.fmul(b.fmul(g, x), ir_const(x.type, 2.0)))
    return [gx, b.fmul(dt, x), dt]


def ir_const(ty, value):
    from llvmlite import ir
    return ir.Constant(ty, value)


CHAIN_LOOPS = {"chain_fwd": (3, 1, _chain_forward), "chain_bwd": (4, 3, _chain_backward)}


def time_fused_chain(compiled, n: int, calls: int) -> None:
    """The chain's forward and backward as one fused loop each over n float32 (the shape of
    its native units), every contender's loops in turn for `calls` rounds: median CPU ms."""
    rng = np.random.default_rng(0)
    ins = [rng.standard_normal(n).astype(np.float32) for _ in range(4)]
    outs = [np.empty(n, np.float32) for _ in range(3)]
    times = {(label, k): [] for label in compiled for k in CHAIN_LOOPS}
    for _ in range(calls):
        for label, (fns, _, _) in compiled.items():
            for k, (n_in, n_out, _) in CHAIN_LOOPS.items():
                ptrs = [a.ctypes.data for a in ins[:n_in] + outs[:n_out]]
                t = time.process_time()
                fns[k](*ptrs, n)
                times[label, k].append(time.process_time() - t)
    print(f"fused chain loops over {n} float32 (one core, CPU time, median of {calls} calls "
          f"taken in turn; load {os.getloadavg()[0]:.2f}):")
    for k in CHAIN_LOOPS:
        line = "  ".join(f"{label} {np.median(times[label, k]) * 1e3:.3f} ms" for label in compiled)
        if len(compiled) == 2:
            ratio = np.median(times["this", k]) / np.median(times["baseline", k])
            line += f"  this/baseline {ratio:.2f}x"
        print(f"  {k:9s} {line}")


def vector_loop(asm: str, symbol: str) -> tuple[int, int]:
    """(instructions, elements) of one trip of the widest vector loop of function `symbol` in
    an assembly listing: the span from a label to the branch back to it that holds the most
    256- or 512-bit instructions; elements from its stores of such registers."""
    start = re.search(rf"^{symbol}:", asm, re.M)
    body = asm[start.end():asm.find(".Lfunc_end", start.end())].splitlines()
    lines = [ln.strip() for ln in body if ln.strip() and not ln.strip().startswith(("#", "."))
             or re.match(r"\s*\.LBB\w+:", ln)]
    best = (0, 0, 0)
    for k, ln in enumerate(lines):
        jump = re.match(r"j\w+\s+(\.LBB\w+)", ln)
        if not jump or f"{jump.group(1)}:" not in lines[:k]:
            continue
        trip = [x for x in lines[lines.index(f"{jump.group(1)}:") + 1:k + 1] if not x.endswith(":")]
        vec = sum(bool(re.search(r"%[yz]mm", x)) for x in trip)
        stores = [x for x in trip if re.match(r"vmov\w+\s+%[yz]mm\d+, .*\(", x)]
        lanes = sum(16 if "zmm" in x else 8 for x in stores)
        if vec > best[0]:
            best = (vec, len(trip), lanes)
    return best[1], best[2]


def ns_per_element(fn, x, out, calls: int, rounds: int = 15) -> float:
    """Median over `rounds` batches of `calls` calls of the CPU time per element, in ns."""
    px, po, n = x.ctypes.data, out.ctypes.data, len(x)
    for _ in range(max(20, calls // 10)):
        fn(px, po, n)
    times = []
    for _ in range(rounds):
        t = time.process_time()
        for _ in range(calls):
            fn(px, po, n)
        times.append((time.process_time() - t) / calls / n * 1e9)
    return float(np.median(times))


REFERENCES = {
    "tanh": np.tanh,
    "sigmoid": lambda x: np.where(x < 0, np.exp(-np.abs(x)), 1.0) / (1.0 + np.exp(-np.abs(x))),
    "exp": np.exp, "expm1": np.expm1, "log": np.log, "erf": None,
}


def max_ulp(fn, name, lo: float, hi: float, stride: int, chunk: int = 1 << 24):
    """(largest ulp error, where) of fn over every stride-th float32 in [lo, hi] (lo <= 0 <=
    hi, both signs walked from 0 outward) against numpy's float64 result rounded."""
    worst, at = 0, 0.0
    for top, sign in ((hi, 1.0), (-lo, -1.0)):
        end = int(np.array(top, np.float32).view(np.int32))
        for start in range(0, end, chunk * stride):
            bits = np.arange(start, min(end, start + chunk * stride), stride, dtype=np.int32)
            x = bits.view(np.float32) * np.float32(sign)
            x = x[: len(x) - len(x) % 16] if len(x) > 16 else x
            out = np.empty_like(x)
            fn(x.ctypes.data, out.ctypes.data, len(x))
            with np.errstate(all="ignore"):
                want = REFERENCES[name](x.astype(np.float64)).astype(np.float32)
            err = np.abs(ordinal(out) - ordinal(want))
            k = int(np.argmax(err))
            if err[k] > worst:
                worst, at = int(err[k]), float(x[k])
    return worst, at


def time_chain(calls: int) -> None:
    """The chain's native forward and forward+backward, median CPU us of `calls` calls."""
    import irjit
    from irjit.ops.tensor import Tensor
    from irjit.tools.bench_joins import _cpu_us
    from irjit.tools.bench_workloads import load_workload
    workload = load_workload("elementwise_chain")
    args = [Tensor(a) for a in workload.inputs()]
    flags = list(workload.requires_grad)
    fwd, train = (irjit.load(workload.ir_path, executor="profiling", backend="native")
                  for _ in range(2))

    def fwd_bwd():
        train.run(*args, requires_grad=flags)
        train.backward()
    line = [f"{label} {_cpu_us(fn, calls):.0f} us" for label, fn in
            (("fwd", lambda: fwd.run(*args, requires_grad=False)), ("fwd+bwd", fwd_bwd))]
    print(f"elementwise_chain native, one core, CPU time, median of {calls} calls (load "
          f"{os.getloadavg()[0]:.2f}): " + ", ".join(line))


ACCURACY_RANGE = {"tanh": (-10.0, 10.0), "sigmoid": (-105.0, 20.0)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--baseline", help="another checkout's root, timed beside this one")
    ap.add_argument("--functions", default="tanh,sigmoid")
    ap.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    ap.add_argument("--n", type=int, default=16384, help="elements per call")
    ap.add_argument("--calls", type=int, default=400, help="calls per timed batch")
    ap.add_argument("--accuracy", action="store_true", help="also the largest ulp errors")
    ap.add_argument("--stride", type=int, default=3, help="--accuracy checks every stride-th float32")
    ap.add_argument("--chain", action="store_true", help="time the element-wise chain instead")
    ap.add_argument("--fused", type=int, default=0, metavar="N",
                    help="also time the chain's forward and backward as fused loops over N elements")
    args = ap.parse_args(argv)
    if os.environ.get("GLIBC_TUNABLES") != TUNABLES:
        os.environ["GLIBC_TUNABLES"] = TUNABLES
        os.execv(sys.executable, [sys.executable, "-m", "irjit.tools.bench_mathlib", *sys.argv[1:]])
    os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    if args.chain:
        time_chain(args.calls)
        return 0
    from irjit.compiler.codegen import mathlib
    dtype = np.dtype(args.dtype).type
    names = args.functions.split(",")
    libs = {"this": mathlib}
    if args.baseline:
        libs["baseline"] = load_mathlib(args.baseline)
    bodies = CHAIN_LOOPS if args.fused and dtype == np.float32 else None
    compiled = {label: compile_loops(lib, names, dtype, bodies) for label, lib in libs.items()}
    x = np.random.default_rng(0).uniform(-6, 6, args.n).astype(dtype)
    out = np.empty_like(x)
    print(f"ns per element ({args.dtype}, {args.n} elements uniform in [-6, 6], one core, CPU "
          f"time, median of 15 batches of {args.calls} calls; load {os.getloadavg()[0]:.2f})")
    for name in names:
        # alternate the contenders so that a change of load hits both
        times = {label: [] for label in compiled}
        for _ in range(3):
            for label, (fns, _, _) in compiled.items():
                times[label].append(ns_per_element(fns[name], x, out, args.calls, rounds=5))
        line = "  ".join(f"{label} {np.median(t):.3f}" for label, t in times.items())
        for label, (_, _, asm) in compiled.items():
            count, lanes = vector_loop(asm, f"k_{name}")
            line += f"  [{label}: {count} instructions / {lanes} elements]"
        if "baseline" in times:
            line += f"  this/baseline {np.median(times['this']) / np.median(times['baseline']):.2f}x"
        print(f"  {name:8s} {line}")
    if bodies:
        time_fused_chain(compiled, args.fused, max(20, args.calls // 10))
    if args.accuracy and dtype == np.float32:
        print(f"largest ulp error, every {args.stride}th float32 of the range, against numpy's "
              "float64 result rounded")
        for name in names:
            if name not in ACCURACY_RANGE:
                continue
            for label, (fns, _, _) in compiled.items():
                worst, at = max_ulp(fns[name], name, *ACCURACY_RANGE[name], args.stride)
                print(f"  {name:8s} {label:8s} {worst} ulp at x={at!r} "
                      f"(range {ACCURACY_RANGE[name]})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
