"""A group's element-wise loop nest as the epilogue of its last tiled product (gemm_epilogue.py):
a linear layer with and without bias, with an activation, the sum of two products (an LSTM's
gates) and a product plus another input, in both tile orientations and with partial tiles,
equal the interpreter's results (bounds checks on and off, one thread and several); a loop
nest that reduces, or a product whose output the group also hands out, stays a pass of its
own."""

from __future__ import annotations

import re

import numpy as np
import pytest

from irjit.compiler.codegen import gemm_tiled, parallel
from irjit.compiler.codegen.unit import NativeUnit

from . import typed_graph
from .lowering_check import interpreted

LINEAR = """graph(%x : Tensor, %w : Tensor, %b : Tensor):
  %y : Tensor = aten::linear(%x, %w, %b)
  %r : Tensor = aten::relu(%y)
  return (%r)"""

LINEAR_NO_BIAS = """graph(%x : Tensor, %w : Tensor):
  %none : NoneType = prim::Constant()
  %y : Tensor = aten::linear(%x, %w, %none)
  %t : Tensor = aten::tanh(%y)
  return (%t)"""

GATES = """graph(%x : Tensor, %h : Tensor, %wi : Tensor, %wh : Tensor, %bi : Tensor, %bh : Tensor):
  %one : int = prim::Constant[value=1]()
  %ti : Tensor = aten::t(%wi)
  %a : Tensor = aten::matmul(%x, %ti)
  %a2 : Tensor = aten::add(%a, %bi, %one)
  %th : Tensor = aten::t(%wh)
  %c : Tensor = aten::matmul(%h, %th)
  %s : Tensor = aten::add(%a2, %c, %one)
  %g : Tensor = aten::add(%s, %bh, %one)
  return (%g)"""

PLUS_INPUT = """graph(%a : Tensor, %b : Tensor, %c : Tensor):
  %one : int = prim::Constant[value=1]()
  %p : Tensor = aten::matmul(%a, %b)
  %s : Tensor = aten::sub(%p, %c, %one)
  %e : Tensor = aten::sigmoid(%s)
  return (%e, %s)"""

REDUCES = """graph(%a : Tensor, %b : Tensor):
  %dims : int[] = prim::Constant[value=[1]]()
  %false : bool = prim::Constant[value=0]()
  %none : NoneType = prim::Constant()
  %p : Tensor = aten::matmul(%a, %b)
  %s : Tensor = aten::sum(%p, %dims, %false, %none)
  return (%s)"""

HANDS_OUT = """graph(%a : Tensor, %b : Tensor):
  %p : Tensor = aten::matmul(%a, %b)
  %e : Tensor = aten::exp(%p)
  return (%p, %e)"""


def _arrays(types: list[tuple], seed: int = 0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape).astype(np.float32) for shape in types]


def _check(text: str, shapes: list[tuple], name: str, fused: bool, checks: bool = False):
    types = ", ".join(f"Float({', '.join(map(str, s))})" for s in shapes)
    graph = typed_graph(text, types)
    unit = NativeUnit(graph, name, bounds_checks=checks)
    tiled = [p for p in unit_products(graph) if p.algorithm == "tiled"]
    assert tiled, "the product should be tiled"
    assert (tiled[-1].epilogue is not None) == fused and (unit.kernel is None) == fused
    args = _arrays(shapes)
    status, outs = unit.call(args)
    assert status == 0
    want = interpreted(text, args)
    for got, w in zip(outs, want):
        np.testing.assert_allclose(got, w.data, rtol=1e-4, atol=1e-4)
    return outs


def unit_products(graph):
    from irjit.compiler.codegen.lower import lower_group
    return lower_group(graph, "inspect").products


@pytest.mark.parametrize("m,n,k", [(64, 96, 40), (37, 50, 300), (128, 33, 40)])
@pytest.mark.parametrize("checks", [False, True])
def test_linear_bias_activation(m, n, k, checks):
    _check(LINEAR, [(m, k), (n, k), (n,)], f"epi_linear_{m}_{n}_{k}_{int(checks)}", True, checks)
    _check(LINEAR_NO_BIAS, [(m, k), (n, k)], f"epi_linear_nb_{m}_{n}_{k}_{int(checks)}", True, checks)


def test_two_products_and_their_biases():
    _check(GATES, [(20, 48), (20, 40), (160, 48), (160, 40), (160,), (160,)], "epi_gates", True)


@pytest.mark.parametrize("m,n,k", [(20, 160, 48), (150, 40, 33), (64, 256, 64)])
@pytest.mark.parametrize("checks", [False, True])
@pytest.mark.parametrize("cores", [1, 2])
def test_equal_products_share_one_function_the_epilogue_through_a_pointer(m, n, k, checks, cores,
                                                                          monkeypatch):
    """An LSTM's two gate products (equal plans, the second with the gates' sum as epilogue)
    are one function, which stores the first product's tiles and hands the second's to the
    epilogue through a pointer: results bitwise equal to two functions of their own, in both
    tile orientations, with partial tiles, on one thread and several."""
    monkeypatch.setattr(parallel, "thread_count", lambda: cores)
    monkeypatch.setattr(gemm_tiled, "THREAD_FLOPS", 0)
    shapes = [(m, k), (m, k), (n, k), (n, k), (n,), (n,)]
    name = f"epi_shared_{m}_{n}_{k}_{int(checks)}_{cores}"
    shared = _check(GATES, shapes, name, True, checks)
    unit = NativeUnit(typed_graph(GATES, ", ".join(f"Float({', '.join(map(str, s))})" for s in shapes)),
                      name + "_again", bounds_checks=checks)
    defined = set(re.findall(r"^define .*@(\S+_gemm_[0-9a-f]{16}\S*)\(", unit.library.llvm_ir, re.M))
    suffixes = {d.split("_gemm_")[1][16:] for d in defined}  # one function and its threads' parts
    assert "_epilogue" in suffixes and all(x.startswith("_epilogue") and "specialized" not in x
                                           for x in suffixes), defined
    monkeypatch.setattr(gemm_tiled, "share_plans", lambda module, products: None)
    monkeypatch.setattr("irjit.compiler.codegen.unit.share_plans", lambda module, products: None)
    apart = _check(GATES, shapes, name + "_apart", True, checks)
    assert shared[0].tobytes() == apart[0].tobytes()


@pytest.mark.parametrize("m,n,k", [(40, 70, 33), (17, 64, 100)])
def test_product_minus_an_input_not_transposed(m, n, k):
    assert not gemm_tiled.tiled_plan("float32", m, n, k, (k, 1), (n, 1), (n, 1)).transposed
    _check(PLUS_INPUT, [(m, k), (k, n), (m, n)], f"epi_plus_{m}_{n}", True)


def test_reductions_and_handed_out_products_stay_separate():
    _check(REDUCES, [(40, 60), (60, 50)], "epi_reduces", False)
    _check(HANDS_OUT, [(40, 60), (60, 50)], "epi_hands_out", False)


@pytest.mark.parametrize("cores", [2, 3])
def test_threads_give_the_one_thread_result(cores, monkeypatch):
    shapes = [(70, 200), (300, 200), (300,)]
    monkeypatch.setattr(parallel, "thread_count", lambda: 1)
    single = _check(LINEAR, shapes, f"epi_single_{cores}", True)
    monkeypatch.setattr(parallel, "thread_count", lambda: cores)
    monkeypatch.setattr(gemm_tiled, "THREAD_FLOPS", 0)
    multi = _check(LINEAR, shapes, f"epi_multi_{cores}", True)
    assert single[0].tobytes() == multi[0].tobytes()


def test_the_epilogue_row_loop_is_one_masked_vector_loop():
    """A tile's row is at most a few vectors: the epilogue's innermost loop is vectorized with
    its tail masked (one loop), not as a main vector loop, a vector remainder and a scalar one."""
    shapes = [(64, 48), (160, 48), (160,)]
    graph = typed_graph(LINEAR, ", ".join(f"Float({', '.join(map(str, s))})" for s in shapes))
    text = NativeUnit(graph, "epi_masked").library.llvm_ir
    start = text.index("@epi_masked_kernel_epilogue(")
    body = text[start:text.index("\n}\n", start)]
    assert "llvm.masked.load" in body and "llvm.masked.store" in body
    assert "vec.epilog" not in body
