"""What a DifferentiableGraphOp runs (runtime/executor/runnable_gradient.py): a copy of the
node's Gradient whose `df` takes no vjps of temporaries and recomputes the views of inputs
that `f` would hand it; same values, and the node's own graphs untouched."""

from __future__ import annotations

import numpy as np

from irjit.compiler import parse_ir
from irjit.compiler.autodiff import differentiate
from irjit.compiler.passes import get_pass
from irjit.ops.tensor import Tensor
from irjit.runtime.executor.runnable_gradient import runnable_gradient
from irjit.runtime.run_gradient import run_backward, run_forward

# sin, not tanh: tanh's backward captures its result, which (as in PyTorch) keeps CSE from
# merging the copy of t(w) back, so t(w) would be captured without a vjp
LINEAR_TANH = """graph(%x : Tensor(requires_grad=1), %w : Tensor(requires_grad=1),
      %b : Tensor(requires_grad=1)):
  %one : int = prim::Constant[value=1]()
  %wt : Tensor(requires_grad=1) = aten::t(%w)
  %m : Tensor(requires_grad=1) = aten::matmul(%x, %wt)
  %h : Tensor(requires_grad=1) = aten::add(%m, %b, %one)
  %y : Tensor(requires_grad=1) = aten::sin(%h)
  return (%y)"""


def _gradient():
    grad = differentiate(parse_ir(LINEAR_TANH))
    get_pass("lower_grad_of").run(grad.df)
    return grad


def test_df_takes_no_vjps_of_temporaries_and_f_outputs_no_views_of_inputs():
    grad = _gradient()
    f_text, df_text = str(grad.f), str(grad.df)
    assert any(i >= grad.f_real_outputs for i in grad.df_input_vjps)  # t(w) is captured
    run = runnable_gradient(grad)
    assert all(i < run.f_real_outputs for i in run.df_input_vjps)
    assert all(o.node.kind != "aten::t" for o in run.f.outputs)
    assert (str(grad.f), str(grad.df)) == (f_text, df_text)


def test_the_runnable_gradient_computes_the_same_gradients():
    rng = np.random.default_rng(0)
    inputs = [Tensor(rng.standard_normal(s).astype(np.float32)) for s in [(6, 5), (3, 5), (3,)]]
    seed = rng.standard_normal((6, 3)).astype(np.float32)
    grad = _gradient()
    want = run_backward(grad, inputs, run_forward(grad, inputs), [seed])
    run = runnable_gradient(grad)
    got = run_backward(run, inputs, run_forward(run, inputs), [seed])
    assert sorted(got) == sorted(want) == [0, 1, 2]
    for i in want:
        np.testing.assert_allclose(got[i], want[i], rtol=1e-6, atol=1e-6)


def test_a_gradient_with_nothing_to_drop_is_returned_as_it_is():
    grad = differentiate(parse_ir("""graph(%x : Tensor(requires_grad=1)):
  %y : Tensor(requires_grad=1) = aten::tanh(%x)
  return (%y)"""))
    assert runnable_gradient(grad) is grad
