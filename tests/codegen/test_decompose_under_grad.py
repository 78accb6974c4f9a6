"""Decompositions in graphs specialized under grad mode: layer norm, group norm and batch norm
in eval mode decompose and run as differentiated native groups with the interpreter's outputs
and gradients (running statistics get none); max over a dim becomes a gather at its argmax;
batch norm in training, whose running-statistic writes the tape would record, stays whole."""

from __future__ import annotations

import numpy as np

from irjit.compiler import parse_ir
from irjit.ops.tensor import Tensor
from irjit.runtime import no_grad
from irjit.runtime.autograd import backward
from irjit.runtime.interpreter import Interpreter
from irjit.runtime.native import NativeRunner

from ..runtime.test_native_grad import _check

LAYER_NORM = """graph(%x : Tensor, %w : Tensor, %b : Tensor):
  %shape : int[] = prim::Constant[value=[6]]()
  %e : float = prim::Constant[value=1e-05]()
  %t : bool = prim::Constant[value=1]()
  %y : Tensor = aten::layer_norm(%x, %shape, %w, %b, %e, %t)
  return (%y)"""

GROUP_NORM = """graph(%x : Tensor, %w : Tensor, %b : Tensor):
  %g : int = prim::Constant[value=2]()
  %e : float = prim::Constant[value=1e-05]()
  %t : bool = prim::Constant[value=1]()
  %y : Tensor = aten::group_norm(%x, %g, %w, %b, %e, %t)
  return (%y)"""

BATCH_NORM = """graph(%x : Tensor, %w : Tensor, %b : Tensor, %rm : Tensor, %rv : Tensor):
  %t : bool = prim::Constant[value={train}]()
  %m : float = prim::Constant[value=0.1]()
  %e : float = prim::Constant[value=1e-05]()
  %var : Tensor = aten::exp(%rv)
  %y : Tensor = aten::batch_norm(%x, %w, %b, %rm, %var, %t, %m, %e, %t)
  return (%y)"""

MAX_DIM = """graph(%x : Tensor):
  %d : int = prim::Constant[value=1]()
  %k : bool = prim::Constant[value=0]()
  %v : Tensor, %i : Tensor = aten::max(%x, %d, %k)
  %two : int = prim::Constant[value=2]()
  %y : Tensor = aten::mul(%v, %two)
  return (%y)"""


def test_layer_norm_under_grad_is_native_with_the_interpreters_gradients(monkeypatch):
    cov, _, _ = _check(LAYER_NORM, [(2, 3, 6), (6,), (6,)], monkeypatch)
    assert dict(cov.interpreted) == {}
    assert cov.native["aten::rsqrt"] == 1 and "aten::layer_norm" not in cov.native


def test_group_norm_under_grad_decomposes_with_the_interpreters_gradients(monkeypatch):
    cov, _, _ = _check(GROUP_NORM, [(2, 4, 3, 3), (4,), (4,)], monkeypatch)
    assert "aten::group_norm" not in cov.interpreted and cov.native["aten::rsqrt"] == 1


def test_batch_norm_in_eval_mode_under_grad_gives_the_running_statistics_no_gradient(monkeypatch):
    """Every input requires grad; as the op's derivative, the decomposition's gives rm and rv
    none (`_check` compares which gradients are None too)."""
    cov, _, _ = _check(BATCH_NORM.format(train=0), [(4, 3, 2, 2), (3,), (3,), (3,), (3,)], monkeypatch)
    assert dict(cov.interpreted) == {}
    assert cov.native["aten::detach"] == 2


def test_batch_norm_in_training_under_grad_stays_whole_and_updates_the_running_statistics(monkeypatch):
    """Its decomposition writes the running statistics with copy_, which the tape would record
    (or refuse on a leaf that requires grad); the op writes them unrecorded."""
    shapes = [(4, 3, 2, 2), (3,), (3,), (3,), (3,)]
    cov, runner, _ = _check(BATCH_NORM.format(train=1), shapes, monkeypatch,
                            requires_grad=[True, True, True, False, False])
    assert dict(cov.interpreted) == {"aten::batch_norm": 1}
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    want = [Tensor(a.copy()) for a in arrays]
    Interpreter(parse_ir(BATCH_NORM.format(train=1))).run(want)
    got = [Tensor(a.copy()) for a in arrays]
    runner.run(got)
    np.testing.assert_allclose(got[3].data, want[3].data, rtol=1e-6)  # the running mean
    assert not np.allclose(got[3].data, arrays[3])


def test_max_over_a_dim_under_grad_is_a_gather_at_argmax_so_a_tie_sends_its_gradient_to_one_index(
        monkeypatch):
    """amax would share the gradient among tied maxima; max.dim's derivative, and gather's at
    the argmax, give it all to the returned index."""
    cov, _, _ = _check(MAX_DIM, [(3, 4)], monkeypatch)
    assert dict(cov.interpreted) == {}
    assert cov.native["aten::argmax"] == 1 and cov.native["aten::gather_backward"] == 1
    runner = NativeRunner(parse_ir(MAX_DIM))
    for _ in range(2):
        x = Tensor(np.ones((2, 3), np.float32), True)
        (y,) = runner.run([x])
        with no_grad():
            (grad,) = backward([y], inputs=[x])
    np.testing.assert_array_equal(grad.data if isinstance(grad, Tensor) else grad, [[2, 0, 0], [2, 0, 0]])
