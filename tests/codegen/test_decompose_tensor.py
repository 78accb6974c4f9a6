"""The LSTM and GRU cells decompose into two linear layers and pointwise gates
(compiler/codegen/decompose_tensor.py) that run natively, without grad and under grad, with the
interpreter's outputs and gradients; max/min over a dim under grad become argmax/argmin and a
gather."""

from __future__ import annotations

import numpy as np
import pytest

from irjit.compiler.codegen.decompose import decompose_for_native

from ..runtime.test_native_grad import _check
from . import typed_graph
from .lowering_check import assert_native_matches

LSTM_CELL = """graph(%x : Tensor, %h : Tensor, %c : Tensor, %wi : Tensor, %wh : Tensor, %bi : Tensor, %bh : Tensor):
  %hx : Tensor[] = prim::ListConstruct(%h, %c)
  %hy : Tensor, %cy : Tensor = aten::lstm_cell(%x, %hx, %wi, %wh, {biases})
  return (%hy, %cy)"""

GRU_CELL = """graph(%x : Tensor, %h : Tensor, %wi : Tensor, %wh : Tensor, %bi : Tensor, %bh : Tensor):
  %hy : Tensor = aten::gru_cell(%x, %h, %wi, %wh, {biases})
  return (%hy)"""

NONE_BIASES = "%none, %none"


def _graph(template: str, with_bias: bool) -> str:
    text = template.format(biases="%bi, %bh" if with_bias else NONE_BIASES)
    if not with_bias:
        text = text.replace("):\n", "):\n  %none : NoneType = prim::Constant()\n", 1)
    return text


def _cell_shapes(gates: int, states: int, n=3, features=4, hidden=5):
    return ([(n, features)] + [(n, hidden)] * states +
            [(gates * hidden, features), (gates * hidden, hidden), (gates * hidden,), (gates * hidden,)])


def _arrays(shapes, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("with_bias", [True, False])
@pytest.mark.parametrize("template, gates, states", [(LSTM_CELL, 4, 2), (GRU_CELL, 3, 1)],
                         ids=["lstm_cell", "gru_cell"])
def test_cells_run_natively_without_grad(dtype, with_bias, template, gates, states):
    runner = assert_native_matches(_graph(template, with_bias), _arrays(_cell_shapes(gates, states), dtype))
    assert runner.stats.nodes_native >= 6


@pytest.mark.parametrize("template, gates, states", [(LSTM_CELL, 4, 2), (GRU_CELL, 3, 1)],
                         ids=["lstm_cell", "gru_cell"])
def test_cells_under_grad_run_natively_with_the_interpreters_gradients(monkeypatch, template, gates, states):
    cov, _, _ = _check(_graph(template, True), _cell_shapes(gates, states), monkeypatch)
    assert dict(cov.interpreted) == {}
    assert cov.native["aten::linear"] == 2 and cov.native["aten::slice_backward"] >= 3


def test_an_unbatched_cell_stays_whole():
    text = _graph(GRU_CELL, True)
    shapes = [(4,), (5,), (15, 4), (15, 5), (15,), (15,)]
    runner = assert_native_matches(text, _arrays(shapes, np.float32), all_native=False)
    assert runner.stats.nodes_interpreted == 1


MIN_DIM = """graph(%x : Tensor):
  %d : int = prim::Constant[value=-1]()
  %k : bool = prim::Constant[value=1]()
  %v : Tensor, %i : Tensor = aten::min(%x, %d, %k)
  return (%v, %i)"""


def test_min_over_a_dim_under_grad_keeps_its_dim_and_index(monkeypatch):
    cov, _, outs = _check(MIN_DIM, [(3, 4)], monkeypatch)
    assert dict(cov.interpreted) == {}
    assert outs[0].data.shape == (3, 1) and outs[1].data.dtype == np.int64 and not outs[1].requires_grad


SORT = """graph(%x : Tensor):
  %d : int = prim::Constant[value={dim}]()
  %b : bool = prim::Constant[value={descending}]()
  %v : Tensor, %i : Tensor = aten::sort(%x, %d, %b)
  return (%v, %i)"""

TOPK = """graph(%x : Tensor):
  %k : int = prim::Constant[value={k}]()
  %d : int = prim::Constant[value={dim}]()
  %b : bool = prim::Constant[value={largest}]()
  %v : Tensor, %i : Tensor = aten::topk(%x, %k, %d, %b, %b)
  return (%v, %i)"""

# NaN (sorting as the largest), ties (kept in input order), signed zeros
WITH_NAN_AND_TIES = np.array([[3, 1, np.nan, 1, 2], [0, -0., 5, np.nan, np.nan], [2, 2, 2, 1, 1]])


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("descending", [0, 1])
def test_sort_is_native_stable_with_nan_last_as_the_interpreter(dtype, dim, descending):
    x = WITH_NAN_AND_TIES if dtype != np.int64 else np.nan_to_num(WITH_NAN_AND_TIES, nan=7)
    runner = assert_native_matches(SORT.format(dim=dim, descending=descending), [x.astype(dtype)])
    assert runner.stats.units == 2  # the ranks, then each rank's index and the gather


@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("dim", [0, -1])
@pytest.mark.parametrize("largest", [0, 1])
def test_topk_is_native_as_the_interpreter(k, dim, largest):
    assert_native_matches(TOPK.format(k=k, dim=dim, largest=largest), [WITH_NAN_AND_TIES.astype(np.float32)])


@pytest.mark.parametrize("k", [0, 4, -1])
def test_topk_of_no_element_or_more_than_the_dim_holds_is_left_to_the_interpreter(k):
    """(k = 0 is an empty result; k out of range, the interpreter's error.)"""
    graph = typed_graph(TOPK.format(k=k, dim=0, largest=1), "Float(3, 4)")
    assert not decompose_for_native(graph)
    assert [n.kind for n in graph.nodes()].count("aten::topk") == 1


@pytest.mark.parametrize("text", [SORT.format(dim=-1, descending=1), TOPK.format(k=2, dim=1, largest=1)],
                         ids=["sort", "topk"])
def test_sort_and_topk_under_grad_scatter_the_gradient_to_the_indices(monkeypatch, text):
    cov, _, outs = _check(text, [(3, 4)], monkeypatch)
    assert dict(cov.interpreted) == {}
    assert not outs[1].requires_grad


INPLACE_CHAIN = """graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %one : int = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %two : float = prim::Constant[value=2.]()
  %lo : float = prim::Constant[value=-1.]()
  %hi : float = prim::Constant[value=3.]()
  %f : bool = prim::Constant[value=0]()
  %y : Tensor = aten::clone(%x, %none)
  %a : Tensor = aten::add_(%y, %one, %one)
  %m : Tensor = aten::mul_(%y, %two)
  %c : Tensor = aten::clamp_(%y, %lo, %hi)
  %v : Tensor = aten::select(%y, %zero, %zero)
  %fl : Tensor = aten::fill_(%v, %two)
  %e : Tensor = aten::empty_like(%y, %none, %none, %none, %none, %none)
  %z : Tensor = aten::copy_(%e, %y, %f)
  %r : Tensor = aten::relu_(%z)
  %t : (Tensor, Tensor) = prim::TupleConstruct(%y, %z)
  return (%t)"""


def test_in_place_ops_on_a_clone_and_a_copy_into_empty_like_run_natively_as_the_interpreter():
    """add_, mul_, clamp_ (before the tensor is viewed and written through the view), the copy
    into empty_like and relu_ on it become functional and fuse; the select is a native view
    output and the write through it stays interpreted."""
    from irjit.compiler import parse_ir
    from irjit.ops.tensor import Tensor
    from irjit.runtime import no_grad
    from irjit.runtime.interpreter import Interpreter
    from irjit.runtime.native import NativeRunner
    x = np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4)
    (want_y, want_z), = Interpreter(parse_ir(INPLACE_CHAIN)).run([Tensor(x.copy())])
    runner = NativeRunner(parse_ir(INPLACE_CHAIN))
    with no_grad():
        for _ in range(2):
            (y, z), = runner.run([Tensor(x.copy())])
    np.testing.assert_array_equal(y.data, want_y.data)
    np.testing.assert_array_equal(z.data, want_z.data)
    plan, = runner._plans.values()
    left = sorted(n.kind for n in plan.graph.nodes() if n.kind.startswith("aten::"))
    assert left == ["aten::fill_"]
