"""Benchmark: scalar programs against the interpreter, per call (best of repeated runs): a
loop of `--trips` iterations of int and float math (as nested_loops_script's body) compiled to
one program, and the cost of calling one small program (a loop body's number nodes)."""

from __future__ import annotations

import argparse
import time

LOOP = """graph(%n : int, %m : int):
  %true : bool = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %zerof : float = prim::Constant[value=0.]()
  %step : float = prim::Constant[value=0.01]()
  %acc : float, %total : int = prim::Loop(%n, %true, %zerof, %zero)
    block0(%i : int, %acc.1 : float, %total.1 : int):
      %im : int = aten::mul(%i, %m)
      %f : float = aten::Float(%im)
      %s : float = aten::mul(%f, %step)
      %acc.2 : float = aten::add(%acc.1, %s)
      %t : int = aten::add(%total.1, %i)
      -> (%true, %acc.2, %t)
  return (%acc, %total)
"""

BODY = """graph(%i : int, %m : int, %j : int):
  %step : float = prim::Constant[value=0.01]()
  %one : int = prim::Constant[value=1]()
  %im : int = aten::mul(%i, %m)
  %ij : int = aten::add(%im, %j)
  %f : float = aten::Float(%ij)
  %s : float = aten::mul(%f, %step)
  %j2 : int = aten::add(%j, %one)
  %c : bool = aten::lt(%j2, %m)
  return (%s, %j2, %c)
"""


def microseconds(fn, calls: int, repeat: int) -> float:
    """Best time per call over `repeat` rounds of `calls` calls."""
    fn()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - start) / calls)
    return best * 1e6


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--trips", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)

    import irjit
    from irjit.compiler.codegen.cache import get_unit
    from irjit.compiler.parser import parse_ir
    from irjit.runtime.interpreter import Interpreter

    native, interpreted = irjit.compile(LOOP), irjit.load(LOOP)
    if native.run(args.trips, 3) != interpreted.run(args.trips, 3):
        raise SystemExit("native and interpreted results differ")
    print(f"loop of {args.trips} trips: native {microseconds(lambda: native.run(args.trips, 3), 200, args.repeat):.1f} "
          f"us/call, interpreter {microseconds(lambda: interpreted.run(args.trips, 3), 2, args.repeat):.1f} us/call")
    unit, _ = get_unit(parse_ir(BODY))
    graph = parse_ir(BODY)
    interp = Interpreter(graph)
    print(f"6-node loop body: program call {microseconds(lambda: unit.call([5, 7, 2]), 5000, args.repeat):.2f} us, "
          f"interpreted {microseconds(lambda: interp.run_block(graph.block, [5, 7, 2], {}), 2000, args.repeat):.2f} us")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
