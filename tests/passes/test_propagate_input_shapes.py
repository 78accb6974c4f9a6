"""propagate_input_shapes: complete-type propagation (PyTorch's PropagateInputShapes) and,
with symbolic=1, PyTorch's propagate_shapes_on_graph pairs."""

from pathlib import Path

import pytest

from . import run_example as run_pair, run_text as run

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "passes"


@pytest.mark.parametrize("example", ["profiled_run2_br", "shaped_grad_fn_layernorm"])
def test_pytorch_symbolic_pairs(example):
    run_pair("propagate_input_shapes", f"propagate_shapes_on_graph__{example}", symbolic=1)


F = "Float({}, requires_grad={}, device=cpu)"


def test_conv_relu_matmul_complete_types():
    src = """graph(%x : Float(1, 3, 8, 8, strides=[192, 64, 8, 1], requires_grad=0, device=cpu),
      %w : Float(4, 3, 3, 3, strides=[27, 9, 3, 1], requires_grad=1, device=cpu),
      %m : Float(144, 5, strides=[5, 1], requires_grad=0, device=cpu)):
  %1 : int = prim::Constant[value=1]()
  %0 : int = prim::Constant[value=0]()
  %none : NoneType = prim::Constant()
  %s : int[] = prim::ListConstruct(%1, %1)
  %p : int[] = prim::ListConstruct(%0, %0)
  %c : Tensor = aten::conv2d(%x, %w, %none, %s, %p, %s, %1)
  %r : Tensor = aten::relu(%c)
  %f : Tensor = aten::flatten(%r, %1, %1)
  %v : Tensor = aten::view(%r, %s)
  %mm : Tensor = aten::matmul(%f, %m)
  %cmp : Tensor = aten::gt(%r, %0)
  return (%mm, %cmp)
"""
    g, changed = run("propagate_input_shapes", src)
    text = str(g)
    assert changed
    assert "%c : Float(1, 4, 6, 6, strides=[144, 36, 6, 1], requires_grad=1, device=cpu) = aten::conv2d" in text
    assert "%r : Float(1, 4, 6, 6, strides=[144, 36, 6, 1], requires_grad=1, device=cpu) = aten::relu" in text
    assert "%cmp : Bool(1, 4, 6, 6, strides=[144, 36, 6, 1], requires_grad=0, device=cpu)" in text
    # view to [1, 1] of 144 elements cannot run: its type stays as it was
    assert "%v : Tensor = aten::view" in text


def test_if_merges_and_loop_reaches_fixed_point():
    src = """graph(%x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu),
      %y : Float(2, 1, strides=[1, 1], requires_grad=0, device=cpu),
      %c : bool, %n : int):
  %1 : int = prim::Constant[value=1]()
  %t : bool = prim::Constant[value=1]()
  %a : Tensor = prim::If(%c)
    block0():
      %b : Tensor = aten::neg(%x)
      -> (%b)
    block1():
      %d : Tensor = aten::neg(%y)
      -> (%d)
  %l : Tensor = prim::Loop(%n, %t, %y)
    block0(%i : int, %acc : Tensor):
      %e : Tensor = aten::add(%acc, %x, %1)
      -> (%t, %e)
  return (%a, %l)
"""
    g, _ = run("propagate_input_shapes", src)
    text = str(g)
    assert "%a : Float(2, *, requires_grad=0, device=cpu) = prim::If" in text
    assert "%l : Float(2, *, requires_grad=0, device=cpu) = prim::Loop" in text
    assert "block0(%i : int, %acc : Float(2, *, requires_grad=0, device=cpu)):" in text


def test_unknown_inputs_change_nothing():
    src = "graph(%x : Tensor):\n  %1 : Tensor = aten::relu(%x)\n  return (%1)\n"
    assert not run("propagate_input_shapes", src)[1]
