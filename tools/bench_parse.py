"""Benchmark: parsing and printing a large, realistic TorchScript graph.

Builds the text of a graph as PyTorch's profiling executor prints it (typed and untyped
tensors, constants with attributes, `prim::profile` nodes, scopes, source comments, a few
prim::If / prim::Loop blocks and a `with prim::DifferentiableGraph_0` section), then reports
the median time of N runs of parse, of print, and of both, with nodes per second.

    python tools/bench_parse.py [--nodes 10000] [--repeat 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

if __package__ in (None, ""):  # run as a script: make the repository root importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from irjit.compiler import parse_ir  # noqa: E402

TYPED = "Float(8, 16, strides=[16, 1], requires_grad=0, device=cpu)"
TYPED_GRAD = "Float(8, 16, strides=[16, 1], requires_grad=1, device=cpu)"
SRC = "/home/user/models.py"
FLOATS = ["1.", "0.5", "0.10000000000000001", "1.0000000000000001e-05", "-2.5", "3."]


class _TextBuilder:
    """Writes graph text line by line, numbering values as PyTorch does (`%N`)."""

    def __init__(self):
        self.lines: list[str] = []
        self.next = 0
        self.nodes = 0

    def value(self) -> str:
        self.next += 1
        return f"%{self.next}"

    def node(self, indent: int, outs: str, rhs: str) -> None:
        self.lines.append("  " * indent + outs + " = " + rhs)
        self.nodes += 1


def _layer(b: _TextBuilder, indent: int, x: str, consts: dict, i: int) -> str:
    """One block of ~12 nodes: profile, linear, activation, arithmetic, reshapes."""
    scope = f", scope: __module.layers.{i % 24}/__module.layers.{i % 24}.linear"
    loc = f" # {SRC}:{100 + i % 400}:{8 + i % 30}"
    p = b.value()
    b.node(indent, f"{p} : Tensor",
           f"prim::profile[profiled_type={TYPED}, seen_none=0]({x})")
    y = b.value()
    b.node(indent, f"{y} : {TYPED}", f"aten::linear({p}, %w.1, %b.1){scope}{loc}")
    r = b.value()
    b.node(indent, f"{r} : {TYPED}", f"aten::relu({y}){scope}{loc}")
    f = b.value()
    b.node(indent, f"{f} : float", f"prim::Constant[value={FLOATS[i % len(FLOATS)]}]()")
    m = b.value()
    b.node(indent, f"{m} : Tensor", f"aten::mul({r}, {f}){loc}")
    s = b.value()
    b.node(indent, f"{s} : int[]", f"prim::ListConstruct({consts['one']}, {consts['zero']})")
    t = b.value()
    b.node(indent, f"{t} : Tensor", f"aten::permute({m}, {s}){loc}")
    q = b.value()
    b.node(indent, f"{q} : Tensor", f"aten::contiguous({t}, {consts['zero']})")
    name = b.value()
    b.node(indent, f"{name} : str", f"prim::Constant[value=\"layer{i}\\n\"]()")
    a = b.value()
    b.node(indent, f"{a} : Tensor", f"aten::add({q}, {x}, {consts['one']}){scope}{loc}")
    u = b.value()
    b.node(indent, f"{u} : Long(requires_grad=0, device=cpu)",
           f"prim::Constant[value={{{i}}}]()")
    o = b.value()
    b.node(indent, f"{o} : {TYPED}", f"aten::add({a}, {u}, {consts['one']})")
    return o


def build_text(nodes: int) -> str:
    """A graph of about `nodes` nodes (main graph, blocks and subgraph together)."""
    b = _TextBuilder()
    lines = b.lines
    lines.append(f"graph(%x.1 : {TYPED_GRAD},\n      %w.1 : Tensor,\n      %b.1 : Tensor,\n"
                 f"      %n.1 : int,\n      %flag.1 : bool):")
    consts = {}
    for key, attr, ty in (("zero", "[value=0]", "int"), ("one", "[value=1]", "int"),
                          ("none", "", "NoneType"), ("true", "[value=1]", "bool")):
        consts[key] = b.value()
        b.node(1, f"{consts[key]} : {ty}", f"prim::Constant{attr}()")
    sub_nodes = max(20, nodes // 20)
    x = "%x.1"
    i = 0
    while b.nodes < nodes - sub_nodes - 30:
        i += 1
        if i % 40 == 0:  # an If with a layer in each branch
            out = b.value()
            b.node(1, f"{out} : Tensor", f"prim::If(%flag.1) # {SRC}:{i}:4")
            for k in range(2):
                lines.append(f"    block{k}():")
                res = _layer(b, 3, x, consts, i + k)
                lines.append(f"      -> ({res})")
            x = out
        elif i % 97 == 0:  # a loop carrying the activation
            out = b.value()
            b.node(1, f"{out} : Tensor", f"prim::Loop(%n.1, {consts['true']}, {x}) # {SRC}:{i}:8")
            it, carried = b.value(), b.value()
            lines.append(f"    block0({it} : int, {carried} : Tensor):")
            res = _layer(b, 3, carried, consts, i)
            lines.append(f"      -> ({consts['true']}, {res})")
            x = out
        else:
            x = _layer(b, 1, x, consts, i)
    dg = b.value()
    b.node(1, f"{dg} : {TYPED}", f"prim::DifferentiableGraph_0({x}, %x.1)")
    lines.append(f"  return ({dg})")
    # the section: its own numbering, as PyTorch prints subgraphs
    sub = _TextBuilder()
    sub.next = 1
    sub.lines.append(f"with prim::DifferentiableGraph_0 = graph(%0 : {TYPED},\n"
                     f"      %1 : {TYPED}):")
    one = sub.value()
    sub.node(1, f"{one} : int", "prim::Constant[value=1]()")
    y = "%0"
    while sub.nodes < sub_nodes - 1:
        z = sub.value()
        sub.node(1, f"{z} : {TYPED}", f"aten::mul({y}, %1) # {SRC}:{sub.nodes}:12")
        y2 = sub.value()
        sub.node(1, f"{y2} : {TYPED}", f"aten::add({z}, {y}, {one}) # {SRC}:{sub.nodes}:12")
        y = y2
    sub.lines.append(f"  return ({y})")
    b.nodes += sub.nodes
    return "\n".join(lines + sub.lines) + "\n"


def count_nodes(g) -> int:
    total = 0
    for n in g.walk():
        total += 1
        if n.attr_kind("Subgraph") == "g":
            total += count_nodes(n.attr("Subgraph"))
    return total


def median_time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=10_000, help="approximate node count")
    ap.add_argument("--repeat", type=int, default=7, help="runs per measurement (median)")
    args = ap.parse_args(argv)
    if args.nodes < 100 or args.repeat < 1:
        ap.error("--nodes must be >= 100 and --repeat >= 1")

    text = build_text(args.nodes)
    graph = parse_ir(text, "<bench>")  # warm-up: builds the Lark parsers, fills the caches
    graph.lint()
    nodes = count_nodes(graph)
    if str(graph) != text:
        print("warning: the benchmark text does not re-print identically", file=sys.stderr)

    t_parse = median_time(lambda: parse_ir(text, "<bench>"), args.repeat)
    t_print = median_time(lambda: str(graph), args.repeat)
    t_both = median_time(lambda: str(parse_ir(text, "<bench>")), args.repeat)

    print(f"graph: {nodes} nodes, {text.count(chr(10))} lines, {len(text) / 1e6:.2f} MB; "
          f"median of {args.repeat} runs")
    print(f"{'phase':<14}{'median ms':>12}{'nodes/s':>14}")
    for label, t in (("parse", t_parse), ("print", t_print), ("parse+print", t_both)):
        print(f"{label:<14}{t * 1e3:>12.1f}{nodes / t:>14,.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
