"""unroll_constant_loops: PyTorch's UnrollConstantLoops pair and unit cases."""

from pathlib import Path


from . import run_example as run_pair, run_text as run

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "passes"


def test_pytorch_pair():
    run_pair("unroll_constant_loops", "constant_loop_unrolling__hand_const_loop")


def test_non_constant_trip_count_is_kept():
    src = """graph(%x : Tensor, %n : int):
  %t : bool = prim::Constant[value=1]()
  %r : Tensor = prim::Loop(%n, %t, %x)
    block0(%i : int, %a : Tensor):
      %b : Tensor = aten::neg(%a)
      -> (%t, %b)
  return (%r)
"""
    g, changed = run("unroll_constant_loops", src)
    assert not changed and "prim::Loop" in str(g)


def test_big_body_with_constant_trip_is_unrolled():
    body = "\n".join(f"      %a{i + 1} : Tensor = aten::neg(%a{i})" for i in range(40))
    src = f"""graph(%x : Tensor):
  %t : bool = prim::Constant[value=1]()
  %k : int = prim::Constant[value=2]()
  %r : Tensor = prim::Loop(%k, %t, %x)
    block0(%i : int, %a0 : Tensor):
{body}
      -> (%t, %a40)
  return (%r)
"""
    g, changed = run("unroll_constant_loops", src)
    assert changed and str(g).count("aten::neg") == 80
