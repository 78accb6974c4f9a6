"""Benchmark: the interpreter's per-node overhead, as nodes per second on a graph of small
tensors (default 1,000 element-wise nodes on 4x4 float32 tensors), median of repeated runs."""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def build_graph_text(n_nodes: int) -> str:
    """A chain of adds, muls and tanhs (one op per node) over two 4x4 inputs."""
    lines = ["graph(%x : Float(4, 4), %y : Float(4, 4)):", "  %one : int = prim::Constant[value=1]()"]
    prev = "%x"
    for i in range(n_nodes - 1):
        op = i % 3
        if op == 0:
            lines.append(f"  %v{i} : Tensor = aten::add({prev}, %y, %one)")
        elif op == 1:
            lines.append(f"  %v{i} : Tensor = aten::mul({prev}, %y)")
        else:
            lines.append(f"  %v{i} : Tensor = aten::tanh({prev})")
        prev = f"%v{i}"
    lines.append(f"  return ({prev})")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--grad", action="store_true", help="record the autograd tape while running")
    args = ap.parse_args(argv)

    from irjit import runtime
    fn = runtime.load(build_graph_text(args.nodes))
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 4)).astype(np.float32)
    y = rng.standard_normal((4, 4)).astype(np.float32)
    fn.run(x, y, requires_grad=args.grad)  # warm up: compiles the step lists, resolves overloads
    times = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        fn.run(x, y, requires_grad=args.grad)
        times.append(time.perf_counter() - t0)
    med = statistics.median(times)
    n = fn.graph.num_nodes()
    print(f"nodes: {n}  median run: {med * 1e3:.2f} ms  per node: {med / n * 1e6:.2f} us  "
          f"throughput: {n / med:,.0f} nodes/s  (grad={'on' if args.grad else 'off'}, "
          f"{args.repeat} runs)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
