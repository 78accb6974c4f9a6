"""Native groups under grad mode (runtime/native_autograd.py): a group whose arguments require
grad runs as a differentiated forward graph and records a backward graph, both native; the
outputs and gradients are the interpreter's, and the executed nodes ran in native units."""

from __future__ import annotations

import numpy as np
import pytest

from irjit.compiler import parse_ir
from irjit.ops.errors import IRRuntimeError
from irjit.ops.tensor import Tensor
from irjit.runtime import no_grad
from irjit.runtime.autograd import backward
from irjit.runtime.interpreter import Interpreter
from irjit.runtime.native import NativeRunner
from irjit.ops.types import TensorType
from irjit.runtime.native_autograd import group_gradient

from .native_coverage import measured

CONV_RELU = """graph(%x : Tensor, %w : Tensor, %b : Tensor):
  %s : int[] = prim::Constant[value=[1, 1]]()
  %p : int[] = prim::Constant[value=[0, 0]]()
  %one : int = prim::Constant[value=1]()
  %c : Tensor = aten::conv2d(%x, %w, %b, %s, %p, %s, %one)
  %r : Tensor = aten::relu(%c)
  return (%r)"""

LINEAR_TANH = """graph(%x : Tensor, %w : Tensor, %b : Tensor):
  %h : Tensor = aten::linear(%x, %w, %b)
  %y : Tensor = aten::tanh(%h)
  return (%y)"""

ATTENTION = """graph(%q : Tensor, %k : Tensor, %v : Tensor):
  %m1 : int = prim::Constant[value=-1]()
  %m2 : int = prim::Constant[value=-2]()
  %scale : float = prim::Constant[value=0.5]()
  %none : NoneType = prim::Constant()
  %kt : Tensor = aten::transpose(%k, %m2, %m1)
  %s : Tensor = aten::matmul(%q, %kt)
  %z : Tensor = aten::mul(%s, %scale)
  %a : Tensor = aten::softmax(%z, %m1, %none)
  %o : Tensor = aten::matmul(%a, %v)
  return (%o)"""

# tanh_backward has no derivative formula: the interpreter records nothing for it (its output
# does not require grad), and the native group treats it the same way
NO_FORMULA = """graph(%x : Tensor, %w : Tensor, %y : Tensor):
  %a : Tensor = aten::mul(%x, %w)
  %t : Tensor = aten::tanh_backward(%a, %y)
  %o : Tensor = aten::mul(%t, %x)
  return (%o)"""


def _arrays(shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(np.float32) for s in shapes]


def _forward_backward(run, arrays, requires_grad):
    """Outputs and the gradients of sum(outputs) w.r.t. the inputs flagged in requires_grad."""
    xs = [Tensor(a.copy(), rg) for a, rg in zip(arrays, requires_grad)]
    outs = run(xs)
    roots = [o for o in outs if o.requires_grad]
    leaves = [x for x in xs if x.requires_grad]
    with no_grad():
        grads = backward(roots, inputs=leaves) if roots else [None] * len(leaves)
    return [o.data for o in outs], grads, outs


def _check(text, shapes, monkeypatch, requires_grad=None, runner=None, calls=3):
    """Native vs interpreter over `calls` calls (the graph's first call profiles its layouts,
    and the backward graph's first call, in the second, its own); the last call's Coverage
    (which executed aten:: nodes ran natively)."""
    requires_grad = requires_grad or [True] * len(shapes)
    arrays = _arrays(shapes)
    want_outs, want_grads, _ = _forward_backward(Interpreter(parse_ir(text)).run, arrays, requires_grad)
    runner = runner or NativeRunner(parse_ir(text))
    for call in range(calls):
        with measured(monkeypatch) as cov:
            got_outs, got_grads, outs = _forward_backward(runner.run, arrays, requires_grad)
        monkeypatch.undo()
        for g, w in zip(got_outs, want_outs):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
        assert [g is None for g in got_grads] == [w is None for w in want_grads]
        for g, w in zip(got_grads, want_grads):
            if w is not None:
                np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
    return cov, runner, outs


def test_conv_relu_with_a_grad_input_runs_forward_and_backward_natively(monkeypatch):
    cov, _, _ = _check(CONV_RELU, [(1, 3, 8, 8), (4, 3, 3, 3), (4,)], monkeypatch,
                       requires_grad=[True, False, False])
    assert cov.native["aten::conv2d"] == 1 and cov.native["aten::relu"] == 1
    assert cov.native["aten::mul"] == 1  # relu's backward (the gradient times x > 0), in df
    assert cov.native["aten::convolution_backward"] == 1  # df runs entirely natively too
    assert dict(cov.interpreted) == {}


def test_linear_with_grad_runs_entirely_natively(monkeypatch):
    cov, _, _ = _check(LINEAR_TANH, [(6, 5), (3, 5), (3,)], monkeypatch)
    assert dict(cov.interpreted) == {}
    # tanh's backward is symbolic_script's `g * (1 - y * y)` (`1 - t` compiles to neg + add)
    assert cov.native["aten::linear"] == 1 and cov.native["aten::neg"] == 1


@pytest.mark.parametrize("op", [
    '%m : str = prim::Constant[value="floor"]()\n  %y : Tensor = aten::div(%s, %w, %m)',
    "%m : NoneType = prim::Constant()\n  %y : Tensor = aten::div(%s, %w, %m)",
    "%p : float = prim::Constant[value=2.5]()\n  %y : Tensor = aten::pow(%s, %p)",
    "%y : Tensor = aten::pow(%s, %w)",
    "%p : float = prim::Constant[value=2.]()\n  %y : Tensor = aten::pow(%p, %w)",
    "%p : float = prim::Constant[value=0.25]()\n  %y : Tensor = aten::lerp(%s, %w, %p)",
    "%a : float = prim::Constant[value=-0.5]()\n  %b : float = prim::Constant[value=0.5]()\n"
    "  %y : Tensor = aten::clamp(%s, %a, %b)",
    "%a : NoneType = prim::Constant()\n  %b : float = prim::Constant[value=0.5]()\n"
    "  %y : Tensor = aten::clamp(%s, %a, %b)",
    "%f : Tensor = aten::floor(%s)\n  %y : Tensor = aten::mul(%f, %s)",
    "%k : int[] = prim::Constant[value=[1, 3]]()\n  %y : Tensor = aten::_grad_sum_to_size(%s, %k)",
    "%k : int[] = prim::Constant[value=[2, 3]]()\n  %y : Tensor = aten::_grad_sum_to_size(%s, %k)",
    "%p : float = prim::Constant[value=0.5]()\n  %t : bool = prim::Constant[value=0]()\n"
    "  %y : Tensor = aten::dropout(%s, %p, %t)",
])
def test_formulas_that_branch_when_the_backward_runs_fold_and_run_natively(op, monkeypatch):
    """symbolic_script's div (rounding mode), pow, lerp, clamp and _grad_sum_to_size backwards
    test their constant arguments or sizes when they run (`rounding_mode is None`,
    `float(exponent) == 0.0`, `min is not None and ...`, `self_size is None`), dropout's scale
    is computed from p and train when f runs: the runner's specialization folds the tests and
    the branches, so f and df run natively, with the interpreter's gradients."""
    cov, _, _ = _check(f"""graph(%x : Tensor, %w : Tensor):
  %s : Tensor = aten::sigmoid(%x)
  {op}
  %z : Tensor = aten::tanh(%y)
  return (%z)""", [(2, 3), (2, 3) if "lerp" in op else (3,)], monkeypatch)
    assert dict(cov.interpreted) == {}


def test_attention_like_graph_runs_natively_with_the_interpreters_gradients(monkeypatch):
    cov, _, _ = _check(ATTENTION, [(2, 3, 4), (2, 5, 4), (2, 5, 4)], monkeypatch)
    assert dict(cov.interpreted) == {}
    assert cov.native["aten::softmax"] == 1 and cov.native["aten::_softmax_backward_data"] == 1


def test_each_requires_grad_pattern_gets_its_own_gradient(monkeypatch):
    """Which arguments require grad decides what df computes; the same runner serves both."""
    shapes = [(6, 5), (3, 5), (3,)]
    _, runner, _ = _check(LINEAR_TANH, shapes, monkeypatch, requires_grad=[True, False, False])
    cov, _, _ = _check(LINEAR_TANH, shapes, monkeypatch, requires_grad=[False, True, True],
                       runner=runner, calls=2)
    assert dict(cov.interpreted) == {}
    assert sum(1 for op in runner._gradients.all_decisions() if op) == 2


def test_an_op_without_a_derivative_formula_passes_no_gradient_as_on_the_tape(monkeypatch):
    """The interpreter's tape records nothing for such an op: x gets the gradient through the
    last mul only, and w none; the group runs natively with exactly those gradients."""
    cov, _, _ = _check(NO_FORMULA, [(4, 5), (4, 5), (4, 5)], monkeypatch)
    assert dict(cov.interpreted) == {}
    assert cov.native["aten::tanh_backward"] == 1


def test_zeros_like_in_a_group_needs_no_gradient(monkeypatch):
    text = """graph(%x : Tensor, %y : Tensor):
  %none : NoneType = prim::Constant()
  %zero : int = prim::Constant[value=0]()
  %m : Tensor = aten::gt(%x, %zero)
  %z : Tensor = aten::zeros_like(%x, %none, %none, %none, %none, %none)
  %e : Tensor = aten::where(%m, %x, %z)
  %o : Tensor = aten::mul(%e, %y)
  return (%o)"""
    cov, _, _ = _check(text, [(3, 4), (3, 4)], monkeypatch)
    assert dict(cov.interpreted) == {}
    assert cov.native["aten::zeros_like"] == 1


def test_a_group_whose_outputs_need_no_gradient_runs_natively_under_grad(monkeypatch):
    """Comparisons and integer casts of inputs that require grad: nothing to record, so the
    group runs its unit (before, it was interpreted for want of a gradient)."""
    text = """graph(%x : Tensor, %y : Tensor):
  %long : int = prim::Constant[value=4]()
  %false : bool = prim::Constant[value=0]()
  %none : NoneType = prim::Constant()
  %lt : Tensor = aten::lt(%x, %y)
  %eq : Tensor = aten::eq(%x, %y)
  %either : Tensor = aten::__or__(%lt, %eq)
  %i : Tensor = aten::to(%x, %long, %false, %false, %none)
  return (%either, %i)"""
    cov, runner, outs = _check(text, [(3, 4), (3, 4)], monkeypatch)
    assert dict(cov.interpreted) == {}
    assert cov.native["aten::__or__"] == 1 and cov.native["aten::to"] == 1
    assert all(not o.requires_grad and o.grad_fn is None for o in outs)


def test_a_cast_to_another_dtype_is_differentiated_as_a_copy(monkeypatch):
    """`to` may return its input itself, but not when the dtype changes: such a group is
    differentiated and runs natively, forward and backward."""
    text = """graph(%x : Tensor):
  %double : int = prim::Constant[value=7]()
  %false : bool = prim::Constant[value=0]()
  %none : NoneType = prim::Constant()
  %d : Tensor = aten::to(%x, %double, %false, %false, %none)
  %t : Tensor = aten::tanh(%d)
  return (%d, %t)"""
    cov, _, outs = _check(text, [(3, 4)], monkeypatch)
    assert dict(cov.interpreted) == {}
    assert cov.native["aten::to"] == 1 and cov.native["aten::type_as"] == 1  # df casts back
    assert outs[0].requires_grad and outs[0].data.dtype == np.float64


def test_backward_twice_gives_the_same_gradients(monkeypatch):
    _, runner, outs = _check(ATTENTION, [(2, 3, 4), (2, 5, 4), (2, 5, 4)], monkeypatch)
    xs = [Tensor(a, True) for a in _arrays([(2, 3, 4), (2, 5, 4), (2, 5, 4)], seed=3)]
    out = runner.run(xs)[0]
    with no_grad():
        first = backward([out], inputs=xs)
        second = backward([out], inputs=xs)
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)


def test_outputs_that_do_not_depend_on_a_grad_input_do_not_require_grad():
    text = """graph(%x : Tensor, %y : Tensor):
  %a : Tensor = aten::tanh(%x)
  %b : Tensor = aten::sigmoid(%y)
  return (%a, %b)"""
    runner = NativeRunner(parse_ir(text))
    x, y = (Tensor(a) for a in _arrays([(3, 4), (3, 4)]))
    x.requires_grad = True
    for _ in range(2):
        a, b = runner.run([x, y])
        assert a.requires_grad and a.grad_fn is not None
        assert not b.requires_grad and b.grad_fn is None


def test_no_grad_runs_groups_natively_without_recording():
    runner = NativeRunner(parse_ir(LINEAR_TANH))
    xs = [Tensor(a, True) for a in _arrays([(6, 5), (3, 5), (3,)])]
    with no_grad():
        runner.run(xs)
        out = runner.run(xs)[0]
    assert not out.requires_grad and out.grad_fn is None
    assert not runner._gradients.all_decisions()  # no group was differentiated


def test_groups_that_write_in_place_are_not_differentiated():
    inplace = parse_ir("""graph(%x : Float(4, 5, strides=[5, 1], device=cpu)):
  %one : int = prim::Constant[value=1]()
  %y : Float(4, 5, strides=[5, 1], device=cpu) = aten::add_(%x, %one, %one)
  return (%y)""")
    assert group_gradient(inplace, (True,)) is None
    view = parse_ir("""graph(%x : Float(4, 5, strides=[5, 1], device=cpu)):
  %t : Float(5, 4, strides=[1, 5], device=cpu) = aten::t(%x)
  %c : Float(5, 4, strides=[1, 5], device=cpu) = aten::contiguous(%t)
  return (%c)""")
    assert group_gradient(view, (True,)) is not None


# rnn_loop's step: a select at the loop counter, natively forward (a view) and backward
SELECT_STEP = """graph(%x : Tensor, %w : Tensor, %n : int):
  %true : bool = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %h0 : Tensor = aten::select(%x, %zero, %zero)
  %h : Tensor = prim::Loop(%n, %true, %h0)
    block0(%i : int, %hi : Tensor):
      %xi : Tensor = aten::select(%x, %zero, %i)
      %m : Tensor = aten::matmul(%xi, %w)
      %s : Tensor = aten::add(%m, %hi, %one)
      %t : Tensor = aten::tanh(%s)
      -> (%true, %t)
  return (%h, %h0)"""


def test_a_view_output_under_grad_is_native_and_aliases_as_interpreted(monkeypatch):
    arrays = _arrays([(4, 3, 5), (5, 5)])
    runner = NativeRunner(parse_ir(SELECT_STEP))

    def run(xs):
        return runner.run(xs + [4])

    def interpret(xs):
        return Interpreter(parse_ir(SELECT_STEP)).run(xs + [4])

    want_outs, want_grads, want = _forward_backward(interpret, arrays, [True, True])
    for call in range(3):
        with measured(monkeypatch) as cov:
            got_outs, got_grads, got = _forward_backward(run, arrays, [True, True])
        monkeypatch.undo()
    for g, w in zip(got_outs + got_grads, want_outs + want_grads):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
    assert not cov.interpreted["aten::select"] and not cov.interpreted["aten::select_backward"]
    # 5 forward; under grad every x[i] (and %h0) is a group of a view alone (x[i] by
    # isolate_input_views), whose gradient is added into its window of x's gradient: no
    # select_backward, nor a select that a fused group's backward would recompute
    assert cov.native["aten::select"] == 5 and cov.native["aten::select_backward"] == 0
    h0 = got[1]  # a view of x: its memory, version counter and base are x's
    assert h0._base is not None and np.shares_memory(h0.data, h0._base.data)
    assert want[1]._base is not None and h0.data.strides == want[1].data.strides


@pytest.mark.parametrize("flags", [(True, True, True), (True, False, True)])
def test_the_gradient_of_a_group_recomputes_captured_views_in_df(flags):
    """f outputs only what it computes (views of its inputs that df needs, such as the
    transposed weight of a matmul, are recomputed in df), and df takes no vjps of f's
    temporaries (they are always zero)."""
    sub = parse_ir("""graph(%x : Float(6, 5, strides=[5, 1], device=cpu),
      %w : Float(3, 5, strides=[5, 1], device=cpu),
      %b : Float(3, strides=[1], device=cpu)):
  %one : int = prim::Constant[value=1]()
  %wt : Float(5, 3, strides=[1, 5], device=cpu) = aten::t(%w)
  %m : Float(6, 3, strides=[3, 1], device=cpu) = aten::matmul(%x, %wt)
  %h : Float(6, 3, strides=[3, 1], device=cpu) = aten::add(%m, %b, %one)
  %y : Float(6, 3, strides=[3, 1], device=cpu) = aten::tanh(%h)
  return (%y)""")
    grad = group_gradient(sub, flags)
    assert all(o.node.kind != "aten::t" for o in grad.f.outputs)
    assert all(i < grad.f_real_outputs for i in grad.df_input_vjps)
    assert grad.df_output_vjps == [i for i, f in enumerate(flags) if f]


def test_the_gradient_of_a_group_makes_broadcast_sizes_constants_of_df():
    """The sizes a broadcasting add's formula captures (`_size_if_not_equal` of the
    operands' sizes) are constants of a group's complete types: f no longer returns them, and
    df holds them as constants instead of taking them as inputs."""
    sub = parse_ir("""graph(%x : Float(6, 5, strides=[5, 1], device=cpu),
      %b : Float(5, strides=[1], device=cpu)):
  %one : int = prim::Constant[value=1]()
  %h : Float(6, 5, strides=[5, 1], device=cpu) = aten::add(%x, %b, %one)
  %y : Float(6, 5, strides=[5, 1], device=cpu) = aten::tanh(%h)
  return (%y)""")
    grad = group_gradient(sub, (True, True))
    assert not any(n.kind in ("aten::size", "aten::_size_if_not_equal") for n in grad.f.walk())
    assert all(isinstance(v.type, TensorType) for v in grad.f.outputs + grad.df.inputs)
    assert any(n.kind == "prim::Constant" and n.output.type.contained() for n in grad.df.walk())


@pytest.mark.parametrize("runner_of", [Interpreter, NativeRunner])
def test_backward_fails_when_a_saved_argument_was_written_in_place(runner_of):
    """x does not require grad but w's gradient needs it: writing x afterwards makes backward
    fail, natively as in the interpreter."""
    runner = runner_of(parse_ir(LINEAR_TANH))
    arrays = _arrays([(6, 5), (3, 5), (3,)])
    for _ in range(3):
        x, w, b = Tensor(arrays[0].copy()), Tensor(arrays[1].copy(), True), Tensor(arrays[2].copy(), True)
        out = runner.run([x, w, b])[0]
    x.bump_version()
    with pytest.raises(IRRuntimeError, match="modified by an in-place operation"):
        with no_grad():
            backward([out], inputs=[w, b])


def test_a_group_whose_outputs_need_no_gradient_runs_its_unit_under_grad(monkeypatch):
    """zeros_like of an x that requires grad makes a tensor that does not (the tape records
    nothing for it), nor does what is computed from it alone: nothing to differentiate, so
    the unit runs as without grad instead of the group being interpreted."""
    text = """graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %one : int = prim::Constant[value=1]()
  %z : Tensor = aten::zeros_like(%x, %none, %none, %none, %none, %none)
  %o : Tensor = aten::add(%z, %one, %one)
  return (%o)"""
    cov, runner, outs = _check(text, [(3, 4)], monkeypatch)
    assert dict(cov.interpreted) == {} and cov.native["aten::zeros_like"] == 1
    assert not outs[0].requires_grad and outs[0].grad_fn is None
    assert not any(runner._gradients.all_decisions())


@pytest.mark.parametrize("training", [0, 1])
def test_batch_norm_spelled_as_symbolic_script_runs_with_the_interpreters_gradients(training, monkeypatch):
    """symbolic_script's batch_norm (`_batch_norm_impl_index` in f, its statistics, reserve
    and implementation index captured; `_batch_norm_impl_index_backward` in df): both
    decompose into native code; in eval mode everything runs natively."""
    cov, _, outs = _check(f"""graph(%x : Tensor, %w : Tensor, %b : Tensor, %rm : Tensor, %r : Tensor):
  %t : bool = prim::Constant[value={training}]()
  %m : float = prim::Constant[value=0.1]()
  %e : float = prim::Constant[value=1e-05]()
  %rv : Tensor = aten::exp(%r)
  %y : Tensor = aten::batch_norm(%x, %w, %b, %rm, %rv, %t, %m, %e, %t)
  %z : Tensor = aten::tanh(%y)
  return (%z)""", [(2, 3, 4), (3,), (3,), (3,), (3,)], monkeypatch,
        requires_grad=[True, True, True, False, False])
    assert np.isfinite(outs[0].data).all()
    if not training:
        assert dict(cov.interpreted) == {}
