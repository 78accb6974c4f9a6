"""unroll_loops: PyTorch's UnrollLoops pairs and unit cases."""

from pathlib import Path

import pytest

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


def test_while_loops_are_not_unrolled():
    src = """graph(%x : Tensor, %c : bool):
  %k : int = prim::Constant[value=3]()
  %r : Tensor = prim::Loop(%k, %c, %x)
    block0(%i : int, %a : Tensor):
      %b : Tensor = aten::neg(%a)
      -> (%c, %b)
  return (%r)
"""
    g, changed = run("unroll_loops", src)
    assert not changed
