"""Benchmark: what non-temporal (streaming) stores would give irjit's large element-wise loops.

Times `out = x * a + b` over float32 arrays far larger than the caches, written two ways with
explicit 64-byte vectors on 64-byte aligned arrays: plain stores (which first read each output
line into the cache: 16 bytes read for every 16 written) and stores marked `!nontemporal`
(written around the caches). irjit's element-wise kernels are vectorized by LLVM from scalar
loops, whose stores cannot be made non-temporal (LLVM's vectorizer refuses them below the
vector's alignment); this measures what emitting them would be worth.

    python -m irjit.tools.bench_stores [--elements 4194304] [--calls 30]

Run it on one core (`taskset -c 0`) for the one-core figure; CPU time, median of the calls.
"""

from __future__ import annotations

import argparse
import ctypes
import time

import numpy as np
from llvmlite import ir

from irjit.compiler.codegen.library import CodeLibrary, new_module

F32, I32, I64, PTR = ir.FloatType(), ir.IntType(32), ir.IntType(64), ir.PointerType()
LANES = 16  # 64-byte vectors of float32 (LLVM splits them on narrower hosts)


def _axpb(module: ir.Module, name: str, streaming: bool) -> None:
    """`void name(ptr out, ptr x, ptr a, ptr b, i64 n)`: n a multiple of LANES, arrays
    64-byte aligned."""
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [PTR] * 4 + [I64]), name=name)
    out, x, a, c, n = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    entry, loop, done = b.block, fn.append_basic_block("loop"), fn.append_basic_block("done")
    b.branch(loop)
    b.position_at_end(loop)
    i = b.phi(I64)
    i.add_incoming(ir.Constant(I64, 0), entry)
    vty = ir.VectorType(F32, LANES)
    load = lambda p: b.load(b.gep(p, [i], source_etype=F32), typ=vty, align=64)  # noqa: E731
    store = b.store(b.fadd(b.fmul(load(x), load(a)), load(c)), b.gep(out, [i], source_etype=F32), align=64)
    if streaming:
        store.set_metadata("nontemporal", module.add_metadata([ir.Constant(I32, 1)]))
    step = b.add(i, ir.Constant(I64, LANES))
    i.add_incoming(step, loop)
    b.cbranch(b.icmp_signed("<", step, n), loop, done)
    b.position_at_end(done)
    b.ret_void()


def aligned(n: int) -> np.ndarray:
    raw = np.empty(n + LANES, np.float32)
    skip = (-raw.ctypes.data % 64) // 4
    return raw[skip:skip + n]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m irjit.tools.bench_stores")
    ap.add_argument("--elements", type=int, default=4 << 20, help="elements per array (rounded to 16)")
    ap.add_argument("--calls", type=int, default=30)
    args = ap.parse_args(argv)
    n = max(LANES, args.elements // LANES * LANES)
    module = new_module("irjit_bench_stores")
    _axpb(module, "plain", False)
    _axpb(module, "streaming", True)
    library = CodeLibrary(module)
    library.finalize()
    kinds = {k: ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * 4, ctypes.c_int64)(library.address(k))
             for k in ("plain", "streaming")}
    out, x, a, c = (aligned(n) for _ in range(4))
    rng = np.random.default_rng(0)
    for arr in (x, a, c):
        arr[:] = rng.standard_normal(n, dtype=np.float32)
    out[:] = 0
    moved = 4 * n * 4  # three arrays read, one written
    print(f"out = x * a + b, {n} float32 ({moved / 4e6:.0f} MB an array x 4), CPU time per call:")
    for kind, fn in kinds.items():
        fn(out.ctypes.data, x.ctypes.data, a.ctypes.data, c.ctypes.data, n)
        assert np.allclose(out, x * a + c)
        times = []
        for _ in range(args.calls):
            t = time.process_time()
            fn(out.ctypes.data, x.ctypes.data, a.ctypes.data, c.ctypes.data, n)
            times.append(time.process_time() - t)
        us = float(np.median(times)) * 1e6
        print(f"  {kind:10} {us:8.0f} us  {moved / us / 1e3:5.1f} GB/s of the {moved / 1e6:.0f} MB that must move")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
