"""DifferentiableGraphOp's generated step (runtime/executor/differentiable_graph.py): a plan's
program calls it instead of the op, and it gives what the op's own path gives: the same
outputs, the same tape node (edges, captures, versions) and so the same gradients, for inputs
that require grad or not, with grad mode on or off; calls it does not cover take the op's
path."""

from __future__ import annotations

import numpy as np
import pytest

import irjit
from irjit.ops.tensor import Tensor
from irjit.runtime.autograd import GRAD_MODE, backward

from .test_differentiable_graph import CAT

LINEAR_TANH = """graph(%x : Tensor, %h : Tensor, %W : Tensor, %b : Tensor):
  %one : int = prim::Constant[value=1]()
  %t : Tensor = aten::t(%W)
  %m : Tensor = aten::matmul(%x, %t)
  %a : Tensor = aten::add(%m, %b, %one)
  %s : Tensor = aten::add(%a, %h, %one)
  %y : Tensor = aten::tanh(%s)
  return (%y, %s)"""

SHAPES = [(3, 4), (3, 4), (4, 4), (4,)]


def _args(shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(np.float32) for s in shapes]


def _ops(fn) -> list:
    return list(fn.executor.optimized_plan._ops.values())


def _trained(text, shapes, backend="native"):
    fn = irjit.load(irjit.parse_ir(text), executor="profiling", backend=backend)
    args = [Tensor(a) for a in _args(shapes)]
    for _ in range(3):
        fn.run(*args)
        fn.backward()
    return fn, args


def test_the_plan_program_calls_the_generated_step():
    fn, args = _trained(LINEAR_TANH, SHAPES)
    (op,) = _ops(fn)
    assert hasattr(op.step, "source") and "GradNode(entry" in op.step.source
    program = fn.executor.optimized_plan.runner._last._program
    assert op.step in program.__globals__.values() and op not in program.__globals__.values()


def _positions(op) -> list[int]:
    """Per input of f (as the plan passes them), the position of the graph input it is."""
    names = ["x", "h", "W", "b"]
    return [next(k for k, n in enumerate(names) if v.name.startswith(n))
            for v in op.gradient.f.inputs]


def _run_both(op, inputs):
    """The step's and the op's own results for the same inputs, and their tape nodes."""
    got, want = op.step(inputs), op(inputs)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert type(g) is type(w) is Tensor
        np.testing.assert_array_equal(g.data, w.data)
        assert g.requires_grad == w.requires_grad
        assert (g.grad_fn is None) == (w.grad_fn is None)
        if g.grad_fn is not None:
            (gn, gi), (wn, wi) = g.grad_fn, w.grad_fn
            assert gi == wi and gn.entry is wn.entry and gn.label == wn.label
            assert [e is None for e in gn.edges] == [e is None for e in wn.edges]
            assert all(a is b for a, b in zip(gn.edges, wn.edges) if a is not None)
            assert [(t, v) for t, v in gn.versions] == [(t, v) for t, v in wn.versions]
            assert len(gn.inputs) == len(wn.inputs)
            for a, b in zip(gn.inputs, wn.inputs):
                np.testing.assert_array_equal(a, b)
    return got, want


@pytest.mark.parametrize("flags", [(True, True, True, True), (True, False, True, False),
                                   (False, False, False, True)])
def test_step_records_what_the_op_records(flags):
    fn, _ = _trained(LINEAR_TANH, SHAPES)
    (op,) = _ops(fn)
    arrays = _args(SHAPES, seed=1)
    position = _positions(op)
    grads = []
    for use_step in (True, False):
        leaves = [Tensor(a.copy(), flag) for a, flag in zip(arrays, flags)]
        inputs = [leaves[k] for k in position]
        got, want = _run_both(op, inputs)
        outs = got if use_step else want
        backward([outs[0]], None)
        grads.append([None if t.grad is None else t.grad.data.copy() for t in leaves])
    for a, b, flag in zip(*grads, flags):
        assert (a is None) == (b is None) == (not flag)
        if flag:
            np.testing.assert_array_equal(a, b)


def test_step_without_grad_mode_records_nothing():
    fn, _ = _trained(LINEAR_TANH, SHAPES)
    (op,) = _ops(fn)
    arrays = _args(SHAPES)
    inputs = [Tensor(arrays[k], True) for k in _positions(op)]
    enabled, GRAD_MODE.enabled = GRAD_MODE.enabled, False
    try:
        got, _ = _run_both(op, inputs)
    finally:
        GRAD_MODE.enabled = enabled
    assert all(t.grad_fn is None and not t.requires_grad for t in got)


def test_arrays_in_take_the_ops_path():
    fn, _ = _trained(LINEAR_TANH, SHAPES)
    (op,) = _ops(fn)
    arrays = _args(SHAPES)
    inputs = [Tensor(arrays[k], True) for k in _positions(op)]
    inputs[1] = inputs[1].data  # (a bare array: not the step's case)
    _run_both(op, inputs)


def test_gradients_through_the_executor_match_the_interpreter():
    fn, args = _trained(LINEAR_TANH, SHAPES)
    ref = irjit.load(irjit.parse_ir(LINEAR_TANH), executor="interp")
    for seed in range(3):
        arrays = _args(SHAPES, seed)
        outs = fn.run(*[Tensor(a) for a in arrays])
        want = ref.run(*arrays)
        for o, w in zip(outs, want):
            np.testing.assert_allclose(o.data, w.data, rtol=1e-6, atol=1e-6)
        got, expected = fn.backward(), ref.backward()
        for k in expected:
            np.testing.assert_allclose(got[k], expected[k], rtol=1e-5, atol=1e-6, err_msg=k)


def test_an_op_with_a_tensor_list_keeps_its_own_path():
    fn, _ = _trained(CAT, [(4, 3), (4, 3)])
    ops = _ops(fn)
    assert ops and any(op.step == op.__call__ for op in ops)


def test_the_private_step_records_what_the_step_records_but_versions():
    """`private_step` (a training program's own leaves) records the same node as `step`
    without versions to check, so the same gradients."""
    fn, _ = _trained(LINEAR_TANH, SHAPES)
    (op,) = _ops(fn)
    arrays = _args(SHAPES, seed=2)
    position = _positions(op)
    grads, nodes = [], []
    for step in (op.step, op.private_step()):
        leaves = [Tensor(a.copy(), True) for a in arrays]
        outs = step([leaves[k] for k in position])
        nodes.append(outs[0].grad_fn[0])
        backward([outs[0]], None)
        grads.append([t.grad.data for t in leaves])
    assert op.private_step() is op.private_step() and op.private_step() is not op.step
    assert len(nodes[0].versions) == 4 and nodes[1].versions == ()
    assert nodes[0].entry is nodes[1].entry and len(nodes[0].inputs) == len(nodes[1].inputs)
    for a, b in zip(*grads):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("f_gives", ["nothing", "tensors"])
def test_the_training_programs_inline_op_takes_the_ops_path_where_f_differs(monkeypatch, f_gives):
    """A training program runs the op of its own leaves inline (`leaf_lines`: f's call, the
    node and the results in the program); where f's program refuses the arrays, or gives
    Tensors, it takes the op's own path (`__call__`, `_record`) with the same outputs and
    gradients."""
    fn, args = _trained(LINEAR_TANH, SHAPES)
    for _ in range(3):  # (the native runner's plan, then its training program)
        fn.run(*args)
        fn.backward()
    program = fn.executor._train_program
    assert program is not None and ".raw_call([x" in program.source and "GradNode" in program.source
    want = [o.data.copy() for o in fn.run(*args)], fn.backward()
    (op,) = _ops(fn)
    runner, taken = op._f_runner, []
    raw = runner.raw_call
    if f_gives == "nothing":
        monkeypatch.setattr(runner, "raw_call", lambda arrays: taken.append(arrays) and None)
    else:
        monkeypatch.setattr(runner, "raw_call", lambda arrays: taken.append(arrays) or [
            Tensor(o) if isinstance(o, np.ndarray) else o for o in raw(arrays)])
    ran = []
    monkeypatch.setattr(fn.executor, "_train_program", lambda inputs, copy: ran.append(
        program(inputs, copy)) or ran[-1])
    outs = fn.run(*args)
    assert taken and ran[-1] is not None and ran[-1][0] is outs  # (the program's, with f's calls)
    assert all(o.requires_grad and o.grad_fn is not None for o in outs)
    got = fn.backward()
    for a, b in zip(outs, want[0]):
        np.testing.assert_array_equal(a.data, b)
    assert sorted(got) == sorted(want[1])
    for name in got:
        np.testing.assert_array_equal(got[name], want[1][name])
