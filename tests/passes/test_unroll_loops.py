"""unroll_loops: PyTorch's UnrollLoops pairs and unit cases."""

from pathlib import Path

import numpy as np
import pytest

from irjit.compiler import parse_ir
from irjit.compiler.passes.unroll_loops import any_loop, unroll_completely
from irjit.ops.tensor import Tensor
from irjit.runtime.interpreter import Interpreter

from . import run_example as run_pair, run_text as run

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "passes"


@pytest.mark.parametrize("example", ["hand_dead_loop_carried", "script_fn_int_list"])
def test_pytorch_pairs(example):
    run_pair("unroll_loops", f"loop_unrolling__{example}")


def _loop(trip: str, body_nodes: int) -> str:
    body = "\n".join(f"      %a{i + 1} : Tensor = aten::neg(%a{i})" for i in range(body_nodes))
    count = "" if trip == "n" else f"\n  %n : int = prim::Constant[value={trip}]()"
    return f"""graph(%x : Tensor, %m : int):
  %t : bool = prim::Constant[value=1](){count}
  %r : Tensor = prim::Loop(%{'m' if trip == 'n' else 'n'}, %t, %x)
    block0(%i : int, %a0 : Tensor):
{body}
      -> (%t, %a{body_nodes})
  return (%r)
"""


def test_small_constant_loop_is_fully_unrolled():
    g, changed = run("unroll_loops", _loop("3", 2))
    assert changed
    assert "prim::Loop" not in str(g)
    assert str(g).count("aten::neg") == 6


def test_unknown_trip_count_unrolled_by_8_with_epilogue():
    g, changed = run("unroll_loops", _loop("n", 2))
    text = str(g)
    assert changed
    assert text.count("prim::Loop") == 2
    assert "aten::__round_to_zero_floordiv(%m" in text
    assert text.count("aten::neg") == 2 * 8 + 2


def test_large_body_not_unrolled():
    # PyTorch counts the body's return node too: 31 nodes + 1 is the limit of 32
    g, changed = run("unroll_loops", _loop("4", 32))
    assert not changed and "prim::Loop" in str(g)
    g, changed = run("unroll_loops", _loop("4", 31))
    assert changed


WHILE_LOOP = """graph(%x : Tensor, %c : bool):
  %k : int = prim::Constant[value=3]()
  %r : Tensor = prim::Loop(%k, %c, %x)
    block0(%i : int, %a : Tensor):
      %b : Tensor = aten::neg(%a)
      -> (%c, %b)
  return (%r)
"""


def test_while_loops_are_not_unrolled():
    g, changed = run("unroll_loops", WHILE_LOOP)
    assert not changed


# ---- unroll_completely (irjit.compile's, before it differentiates a graph as a whole)

def _unrolled_completely(src: str, max_nodes: int):
    g = parse_ir(src)
    changed = unroll_completely(g.block, max_nodes)
    g.lint()
    return g, changed, any_loop(g.block)


def test_unroll_completely_takes_constant_trips_within_the_node_budget():
    g, changed, left = _unrolled_completely(_loop("3", 2), max_nodes=64)
    assert changed and not left and str(g).count("aten::neg") == 6


def test_unroll_completely_leaves_what_would_pass_the_budget_or_64_trips():
    # 3 trips x (2 nodes + the body's return) = 9 nodes: over a budget of 8, within 9
    for max_nodes, unrolled in ((8, False), (9, True)):
        g, changed, left = _unrolled_completely(_loop("3", 2), max_nodes)
        assert changed is unrolled and left is not unrolled
    # 64 trips: UnrollConstantLoops would unroll by 8 with an epilogue, this never does
    g, changed, left = _unrolled_completely(_loop("64", 1), max_nodes=10_000)
    assert not changed and left and str(g).count("aten::neg") == 1


def test_unroll_completely_leaves_run_time_trips_and_while_loops():
    g, changed, left = _unrolled_completely(_loop("n", 2), max_nodes=10_000)
    assert not changed and left and str(g).count("prim::Loop") == 1
    g, changed, left = _unrolled_completely(WHILE_LOOP, max_nodes=10_000)
    assert not changed and left


def test_unroll_completely_unrolls_nested_loops_inside_out_and_keeps_effects_in_order():
    src = """graph(%x : Tensor, %l : Tensor[]):
  %t : bool = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %three : int = prim::Constant[value=3]()
  %r : Tensor = prim::Loop(%two, %t, %x)
    block0(%i : int, %a : Tensor):
      %s : Tensor = prim::Loop(%three, %t, %a)
        block0(%j : int, %b : Tensor):
          %c : Tensor = aten::add(%b, %j, %i)
          %u : Tensor[] = aten::append(%l, %c)
          -> (%t, %c)
      -> (%t, %s)
  return (%r)
"""
    g, changed, left = _unrolled_completely(src, max_nodes=64)
    assert changed and not left
    x = Tensor(np.arange(3, dtype=np.float32))
    got, want = [], []
    out = Interpreter(g).run([x, got])
    ref = Interpreter(parse_ir(src)).run([x, want])
    assert len(got) == len(want) == 6
    for a, b in zip(got + out, want + ref):
        np.testing.assert_array_equal(a.data, b.data)
