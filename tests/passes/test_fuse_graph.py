"""fuse_graph: PyTorch's legacy graph fuser pairs, unit cases; the TensorExpr fuser pairs are
not implemented (xfail)."""

from pathlib import Path

import pytest

from . import run_example as run_pair, run_text as run

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "passes"


@pytest.mark.parametrize("example", ["shaped_nograd_fn_chain_unary", "shaped_grad_fn_pointwise"])
def test_pytorch_pairs(example):
    run_pair("fuse_graph", f"fuse_legacy__{example}")


@pytest.mark.xfail(strict=True, reason="prim::TensorExprGroup fusion (tensorexpr_fuser.cpp, with "
                   "its TypeCheck guards and fallback) is not implemented; fuse_graph makes "
                   "legacy prim::FusionGroup subgraphs")
@pytest.mark.parametrize("example", ["hand_pointwise_typed", "shaped_nograd_fn_lstm_cell"])
def test_pytorch_tensorexpr_pairs(example):
    run_pair("fuse_graph", f"fuse_tensorexprs__{example}")


def test_non_fusible_op_splits_groups_and_extra_uses_become_outputs():
    src = """graph(%x : Float(2, 2, strides=[2, 1], requires_grad=0, device=cpu)):
  %a : Float(2, 2, strides=[2, 1], requires_grad=0, device=cpu) = aten::relu(%x)
  %b : Float(2, 2, strides=[2, 1], requires_grad=0, device=cpu) = aten::exp(%a)
  %m : Float(2, 2, strides=[2, 1], requires_grad=0, device=cpu) = aten::mm(%b, %a)
  %c : Float(2, 2, strides=[2, 1], requires_grad=0, device=cpu) = aten::tanh(%m)
  %d : Float(2, 2, strides=[2, 1], requires_grad=0, device=cpu) = aten::neg(%c)
  return (%d)
"""
    g, changed = run("fuse_graph", src)
    text = str(g)
    assert changed
    assert text.count("prim::FusionGroup_") == 4  # two calls, two subgraph headers
    assert "aten::mm" in text.split("with ")[0]
    # the producer %a is still used by the mm: it becomes a second output of the group
    assert "%b : Float(2, 2, strides=[2, 1], requires_grad=0, device=cpu), %a : " in text
    assert "return (%b, %a)" in text


def test_non_float_or_non_cpu_is_not_fused():
    src = """graph(%x : Long(2, strides=[1], requires_grad=0, device=cpu)):
  %a : Long(2, strides=[1], requires_grad=0, device=cpu) = aten::neg(%x)
  %b : Long(2, strides=[1], requires_grad=0, device=cpu) = aten::abs(%a)
  return (%b)
"""
    g, changed = run("fuse_graph", src)
    assert not changed
    g, changed = run("fuse_graph", src.replace("Long", "Float").replace("cpu", "cuda:0"))
    assert not changed


def test_strict_requires_known_device():
    src = """graph(%x : Tensor):
  %a : Tensor = aten::neg(%x)
  %b : Tensor = aten::abs(%a)
  return (%b)
"""
    assert run("fuse_graph", src)[1]
    assert not run("fuse_graph", src, strict=1)[1]
