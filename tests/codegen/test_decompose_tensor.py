"""The LSTM and GRU cells decompose into two linear layers and pointwise gates
(compiler/codegen/decompose_tensor.py) that run natively, without grad and under grad, with the
interpreter's outputs and gradients; max/min over a dim under grad become argmax/argmin and a
gather."""

from __future__ import annotations

import numpy as np
import pytest

from ..runtime.test_native_grad import _check
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
