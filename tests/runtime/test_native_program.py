"""Plan programs and the fast paths around them (runtime/native_program.py): a call first tries
the latest plan's program without building the layout key, `Function.run(...,
requires_grad=False)` hands the caller's arrays to it, native groups under grad run f and df
on arrays. Each must give exactly what the general path gives: these tests change what the
fast path would have to notice between calls (layouts, views, strides, alignment, keyed
values, grad mode, errors, threads) and compare with the interpreter."""

from __future__ import annotations

import re

import numpy as np
import pytest

import irjit
from irjit.compiler import parse_ir
from irjit.ops.errors import IRRuntimeError, IRTypeError
from irjit.ops.tensor import Tensor
from irjit.runtime import no_grad
from irjit.runtime.autograd import backward
from irjit.runtime.interpreter import Interpreter
from irjit.runtime.native import NativeRunner

from .threads import run_concurrently

LINEAR_TANH = """graph(%x : Tensor, %h : Tensor, %W : Tensor, %b : Tensor):
  %one : int = prim::Constant[value=1]()
  %t : Tensor = aten::t(%W)
  %m : Tensor = aten::matmul(%x, %t)
  %a : Tensor = aten::add(%m, %b, %one)
  %s : Tensor = aten::add(%a, %h, %one)
  %y : Tensor = aten::tanh(%s)
  %r : (Tensor, Tensor) = prim::TupleConstruct(%y, %y)
  return (%r)"""
SHAPES = ((3, 4), (3, 4), (4, 4), (4,))

# a product feeding a loop nest: two groups, the first's output an intermediate
TWO_GROUPS = """graph(%x : Tensor, %w : Tensor):
  %a : Tensor = aten::mm(%x, %w)
  %b : Tensor = aten::tanh(%a)
  %c : Tensor = aten::mm(%b, %w)
  return (%c, %a)"""

VIEW_OF_INPUT = """graph(%x : Tensor):
  %t : Tensor = aten::t(%x)
  return (%t)"""

SELECT_LOOP = """graph(%x : Tensor, %w : Tensor):
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %n : int = prim::Constant[value=4]()
  %true : bool = prim::Constant[value=1]()
  %h0 : Tensor = aten::select(%x, %zero, %zero)
  %h : Tensor = prim::Loop(%n, %true, %h0)
    block0(%i : int, %hi : Tensor):
      %xi : Tensor = aten::select(%x, %zero, %i)
      %m : Tensor = aten::mm(%hi, %w)
      %s : Tensor = aten::add(%m, %xi, %one)
      %t : Tensor = aten::tanh(%s)
      -> (%true, %t)
  return (%h)"""

FLAG = """graph(%x : Tensor, %flag : bool, %k : float):
  %one : int = prim::Constant[value=1]()
  %r : Tensor = prim::If(%flag)
    block0():
      %a : Tensor = aten::mul(%x, %k)
      -> (%a)
    block1():
      %b : Tensor = aten::add(%x, %k, %one)
      -> (%b)
  return (%r)"""

DIVIDE = """graph(%x : Tensor, %y : Tensor):
  %d : Tensor = aten::floor_divide(%x, %y)
  %e : Tensor = aten::mul(%d, %x)
  return (%e)"""


def _arrays(shapes=SHAPES, seed=0, dtype=np.float32):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


def _interpreted(text, arrays, requires_grad=False):
    fn = irjit.load(text)
    outs = fn.run(*arrays, requires_grad=requires_grad)
    return outs, (fn.backward() if requires_grad else None)


def _leaves(outs):
    return [o for out in outs for o in (out if isinstance(out, tuple) else (out,))]


def _same(got, want):
    for g, w in zip(_leaves(got), _leaves(want)):
        g, w = (x.data if isinstance(x, Tensor) else x for x in (g, w))
        assert np.asarray(g).shape == np.asarray(w).shape
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def _compiled(text, types=None):
    fn = irjit.compile(text, types)
    return fn


def test_the_latest_plan_is_tried_first_and_a_changed_layout_finds_its_own():
    runner = NativeRunner(parse_ir(TWO_GROUPS))
    x, w = _arrays(((3, 4), (4, 4)))
    layouts = [[Tensor(x), Tensor(w)],
               [Tensor(np.asfortranarray(x)), Tensor(w)],  # another layout: another plan
               [Tensor(np.ascontiguousarray(x[:, ::-1])), Tensor(w)],
               [Tensor(x), Tensor(w)]]
    with no_grad():
        for inputs in layouts * 2:
            got = runner.run(inputs)
            _same(got, Interpreter(parse_ir(TWO_GROUPS)).run(inputs))
    assert len(runner._plans) == 2 and runner.stats.bailouts == 0


# two products and an element-wise step: two consecutive units, the second reading the first's
PRODUCTS = """graph(%x : Tensor, %w : Tensor, %b : Tensor):
  %one : int = prim::Constant[value=1]()
  %m : Tensor = aten::mm(%x, %w)
  %t : Tensor = aten::tanh(%m)
  %u : Tensor = aten::mm(%t, %w)
  %s : Tensor = aten::add(%u, %b, %one)
  return (%s)"""


def test_consecutive_units_run_in_one_native_call_and_a_later_refusal_bails_out():
    """A program calls its consecutive units as one native call (`unit_sequence`); when the
    second refuses an argument the key does not hold (a misaligned array), the units run one
    by one and the second bails out: the interpreter's results either way."""
    fn = _compiled(PRODUCTS, "Float(3, 4), Float(4, 4), Float(4)")
    xs = _arrays(((3, 4), (4, 4), (4,)))
    for _ in range(3):
        got = fn.run(*xs, requires_grad=False)
    plan = fn.interpreter._last
    for program in (plan._program, plan.raw_call):
        assert re.search(r"if seq\d+\(", program.source)
    # (the array program checks that the inputs it passes on are arrays before the buffers:
    # other objects take the units one by one, refused at the first that reads one)
    assert plan._program.source.count("._fn(") == 2 and plan.raw_call.source.count("._fn(") == 4
    assert "v2.__class__ is ndarray" in plan.raw_call.source
    assert plan.raw_call([xs[0], xs[1], Tensor(xs[2])]) is None
    assert plan.raw_call([xs[0], xs[1], xs[2].astype(np.float64)]) is None
    _same(plan.raw_call(xs), _interpreted(PRODUCTS, xs)[0])
    _same(got, _interpreted(PRODUCTS, xs)[0])
    b = np.frombuffer(b"\0" + xs[2].tobytes(), np.float32, offset=1)  # (read by the second unit)
    assert b.ctypes.data % 4 and (b == xs[2]).all() and fn.interpreter.stats.bailouts == 0
    runner = fn.interpreter
    with no_grad():  # (the runner's own call: the plan of the key, which a unit may refuse)
        _same(runner.run([Tensor(xs[0]), Tensor(xs[1]), Tensor(b)]), _interpreted(PRODUCTS, xs)[0])
        assert runner.stats.bailouts == 1
        _same(runner.run([Tensor(x) for x in xs]), _interpreted(PRODUCTS, xs)[0])
    assert runner.stats.bailouts == 1


def test_a_view_and_a_strided_input_give_the_interpreters_results():
    runner = NativeRunner(parse_ir(TWO_GROUPS))
    big = _arrays(((6, 8), (4, 4)))
    with no_grad():
        for x in (big[0][:3, :4], big[0][2:5, 1:5], big[0][::2, ::2], big[0][:3, :4]):
            inputs = [Tensor(x), Tensor(big[1])]
            _same(runner.run(inputs), Interpreter(parse_ir(TWO_GROUPS)).run(inputs))


def test_function_without_grad_takes_the_callers_arrays_only_where_nothing_can_tell():
    fn = _compiled(LINEAR_TANH, "Float(3, 4), Float(3, 4), Float(4, 4), Float(4)")
    xs = _arrays()
    for _ in range(3):
        got = fn.run(*xs, requires_grad=False)
    _same(got, _interpreted(LINEAR_TANH, xs)[0])
    plan = fn.interpreter._last
    assert plan._array_program is not None
    assert got[0][0] is got[0][1]  # the tuple holds one Tensor twice, as the interpreter's
    assert not any(np.shares_memory(got[0][0].data, x) for x in xs)
    # a strided or unaligned array is not the plan's: the general path copies it
    strided = np.zeros((3, 8), np.float32)
    strided[:, ::2] = xs[0]
    raw = np.zeros(3 * 4 * 4 + 1, np.uint8)[1:].view(np.float32).reshape(3, 4)
    raw[...] = xs[0]
    assert not raw.flags.aligned
    for x in (strided[:, ::2], raw):
        _same(fn.run(x, *xs[1:], requires_grad=False), got)
    assert fn.backward()["arg0"].tolist() == np.zeros((3, 4)).tolist()  # (a call without grad)


def test_an_array_program_leaves_its_inputs_types_to_the_units_entries():
    """An array program whose inputs only units read, that it calls itself, checks no input's
    type in Python: the units' entries check it first (exact ndarray, then dtype and layout),
    so anything else (a Tensor, a list, a subclass, a scalar) is refused as before: None,
    nothing run, the plan's arena kept."""
    fn = _compiled(LINEAR_TANH, "Float(3, 4), Float(3, 4), Float(4, 4), Float(4)")
    xs = _arrays()
    for _ in range(3):
        fn.run(*xs, requires_grad=False)
    plan = fn.interpreter._last
    assert "is ndarray" not in plan._raw_program.source
    arenas = len(plan._arenas)
    assert plan.raw_call(xs) is not None and len(plan._arenas) == arenas
    for bad in (Tensor(xs[0]), xs[0].tolist(), xs[0].view(np.matrix), np.float32(1.0)):
        assert plan.raw_call([bad, *xs[1:]]) is None
        assert plan.run_arrays([bad, *xs[1:]]) is None
    assert len(plan._arenas) == arenas


def test_an_output_viewing_an_input_keeps_function_runs_copy():
    fn = _compiled(VIEW_OF_INPUT, "Float(3, 4)")
    x = _arrays(((3, 4),))[0]
    for _ in range(3):
        out = fn.run(x, requires_grad=False)[0]
    assert fn.interpreter._last._array_program is None  # (the output would be the caller's)
    assert not np.shares_memory(out.data, x)
    np.testing.assert_array_equal(out.data, x.T)


def test_grad_on_and_off_between_calls_of_one_function():
    fn = _compiled(LINEAR_TANH)
    xs = _arrays()
    want_outs, want_grads = _interpreted(LINEAR_TANH, xs, requires_grad=True)
    for requires_grad in (False, True, True, False, True, False, False, True):
        outs = fn.run(*xs, requires_grad=requires_grad)
        _same(outs, want_outs)
        assert outs[0][0].requires_grad == requires_grad
        if requires_grad:
            grads = fn.backward()
            for k, g in want_grads.items():
                np.testing.assert_allclose(grads[k], g, rtol=1e-4, atol=1e-5)


def test_keyed_values_are_checked_by_the_program():
    """A bool selects a branch and a number is keyed by its type (a float input takes ints
    too): a call with the other bool, or the other type, must not run the latest plan."""
    runner = NativeRunner(parse_ir(FLAG))
    x = Tensor(_arrays(((2, 3),))[0])
    with no_grad():
        for flag, k in [(True, 2), (True, 2), (False, 2), (True, 3), (False, 2.5), (True, 2)]:
            _same(runner.run([x, flag, k]), Interpreter(parse_ir(FLAG)).run([x, flag, k]))


def test_a_kernel_status_is_the_interpreters_error_and_later_calls_still_run():
    runner = NativeRunner(parse_ir(DIVIDE))
    x = Tensor(np.arange(1, 7, dtype=np.int64).reshape(2, 3))
    y = Tensor(np.full((2, 3), 2, np.int64))
    zero = Tensor(np.array([[1, 0, 1], [1, 1, 1]], np.int64))
    with no_grad():
        for _ in range(2):
            ok = runner.run([x, y])
        with pytest.raises(IRRuntimeError) as native_error:
            runner.run([x, zero])
        with pytest.raises(IRRuntimeError) as interpreted_error:
            Interpreter(parse_ir(DIVIDE)).run([x, zero])
        assert str(native_error.value) == str(interpreted_error.value)
        again = runner.run([x, y])
    _same(again, ok)
    assert runner.stats.bailouts == 1


def test_wrong_inputs_are_the_general_paths_errors():
    fn = _compiled(LINEAR_TANH, "Float(3, 4), Float(3, 4), Float(4, 4), Float(4)")
    xs = _arrays()
    for _ in range(3):
        fn.run(*xs, requires_grad=False)
    with pytest.raises(IRTypeError, match="takes 4 inputs"):
        fn.run(*xs[:3], requires_grad=False)
    with pytest.raises(IRRuntimeError, match="aten::"):
        fn.run(xs[0], xs[1], xs[2], np.zeros(5, np.float32), requires_grad=False)


def test_a_loop_of_selects_accumulates_each_gradient_into_its_window():
    """A group that only views x (x[i]) records the windows its outputs view; backward adds
    into x's gradient in place: the interpreter's gradients, for a contiguous x and for one
    the windows cannot be taken from (a transposed copy)."""
    runner = NativeRunner(parse_ir(SELECT_LOOP))
    x, w = _arrays(((5, 3, 4), (4, 4)))
    for layout in (x, np.ascontiguousarray(x.transpose(1, 0, 2)).transpose(1, 0, 2)):
        for _ in range(3):
            got = [Tensor(layout.copy(), True), Tensor(w.copy(), True)]
            backward(runner.run(got))
        want = [Tensor(layout.copy(), True), Tensor(w.copy(), True)]
        backward(Interpreter(parse_ir(SELECT_LOOP)).run(want))
        for g, e in zip(got, want):
            np.testing.assert_allclose(g.grad, e.grad, rtol=1e-4, atol=1e-5)


def test_writing_a_viewed_input_in_place_before_backward_is_an_error():
    runner = NativeRunner(parse_ir(SELECT_LOOP))
    x, w = _arrays(((5, 3, 4), (4, 4)))
    for _ in range(3):
        xt, wt = Tensor(x.copy(), True), Tensor(w.copy(), True)
        out = runner.run([xt, wt])
    xt.bump_version()  # what an in-place op on x does
    with pytest.raises(IRRuntimeError, match="modified by an in-place operation"):
        backward(out)


@pytest.mark.parametrize("requires_grad", [False, True])
def test_threads_sharing_a_compiled_function(requires_grad):
    fn = _compiled(LINEAR_TANH, "Float(3, 4), Float(3, 4), Float(4, 4), Float(4)")
    inputs = [_arrays(seed=s) for s in range(8)]
    want = [_interpreted(LINEAR_TANH, xs, requires_grad) for xs in inputs]

    def work(i):
        for _ in range(20):
            outs = fn.run(*inputs[i], requires_grad=requires_grad)
            _same(outs, want[i][0])
            if requires_grad:
                for k, g in fn.backward().items():
                    np.testing.assert_allclose(g, want[i][1][k], rtol=1e-4, atol=1e-5)

    run_concurrently(work, len(inputs))


def test_a_group_whose_outputs_nothing_reads_still_runs_under_grad_and_without():
    text = """graph(%x : Tensor):
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %t : Tensor = aten::transpose(%x, %zero, %one)
  %n : Tensor = aten::neg(%t)
  %y : Tensor = aten::add(%x, %x, %one)
  return (%y)"""
    runner = NativeRunner(parse_ir(text))
    x = _arrays(((2, 3),))[0]
    for requires_grad in (False, True, True, False):
        xs = [Tensor(x.copy(), requires_grad)]
        out = runner.run(xs)
        _same(out, Interpreter(parse_ir(text)).run([Tensor(x.copy())]))
        if requires_grad:
            backward(out)
            np.testing.assert_allclose(xs[0].grad, np.full((2, 3), 2.0))


@pytest.mark.parametrize("trips", ["constant", "run-time"])
def test_a_loops_differentiable_graphs_run_with_the_interpreters_gradients(trips):
    """Under the profiling executor, a loop of DifferentiableGraphs (behind their
    requires-grad guards) of constant trips is unrolled and differentiated as a whole under
    grad, as `irjit.compile` does (`native_whole_gradient.inline_guarded`: one tape node);
    a loop whose trips are known at run time only keeps a DifferentiableGraph per trip, a
    step of the plan's program that calls the plan's op itself. Outputs and gradients are
    the interpreter's, with some inputs not requiring grad too."""
    from irjit.runtime.native_whole_gradient import GradientPlan
    x, w = _arrays(((5, 3, 4), (4, 4)))
    text = SELECT_LOOP if trips == "constant" else \
        SELECT_LOOP.replace("%n : int = prim::Constant[value=4]()", "%n : int = aten::size(%w, %zero)")
    for flags in ([True, True], [False, True]):
        want_outs = irjit.load(text).run(x, w, requires_grad=flags)
        want = irjit.load(text)
        want.run(x, w, requires_grad=flags)
        want_grads = want.backward()
        fn = irjit.load(text, executor="profiling", backend="native")
        for _ in range(4):
            got_outs = fn.run(x, w, requires_grad=flags)
            got_grads = fn.backward()
        _same(got_outs, want_outs)
        assert sorted(got_grads) == sorted(want_grads)
        for k in want_grads:
            np.testing.assert_allclose(got_grads[k], want_grads[k], rtol=1e-4, atol=1e-5)
        runner = fn.executor.optimized_plan.runner
        whole = [p for p in runner._plans.values() if isinstance(p, GradientPlan)]
        if trips == "constant":
            (plan,) = whole
            (out,) = got_outs
            assert out.grad_fn[0].entry.op is plan.op  # (one node for the whole loop)
        else:
            assert not whole
            source = runner._last._program.source
            assert "interp.subgraph_runner" not in source and re.search(r"= op\d+\(\[", source)


def test_calls_needing_gradients_get_a_plan_whose_input_views_are_groups_of_their_own():
    """irjit.compile of a loop over x[i] whose trips are known at run time only (constant
    ones are unrolled under grad: test_native_whole_gradient.py): a call needing gradients
    gets its own plan, where x[i] is a view group of its own (its gradient added into a
    window of x's), not fused into the product's group (whose backward would scatter into
    zeros of x's size per iteration); calls without gradients keep the fused plan.
    Alternating modes, every call gives the interpreter's outputs and gradients."""
    from irjit.compiler.codegen.partition import GROUP
    x, w = _arrays(((5, 3, 4), (4, 4)))
    loop = SELECT_LOOP.replace("%n : int = prim::Constant[value=4]()", "%n : int = aten::size(%w, %zero)")
    want_outs, want_grads = _interpreted(loop, [x, w], requires_grad=True)
    fn = irjit.compile(loop, "Float(5, 3, 4), Float(4, 4)")
    for _ in range(3):
        _same(fn.run(x, w, requires_grad=False), want_outs)
        _same(fn.run(x, w), want_outs)
        got = fn.backward()
        for k in want_grads:
            np.testing.assert_allclose(got[k], want_grads[k], rtol=1e-4, atol=1e-5)
    plans = fn.interpreter._plans
    assert sorted(key[-1] for key in plans) == [False, True]
    for key, plan in plans.items():
        kinds = [[n.kind for n in g.attr("Subgraph").nodes() if n.kind != "prim::Constant"]
                 for g in plan.graph.walk() if g.kind == GROUP]
        fused = any("aten::select" in k and len(k) > 1 for k in kinds)
        assert fused != key[-1]
    assert fn.interpreter.stats.nodes_interpreted == 0


def test_an_int_list_input_is_keyed_by_its_values_and_element_types():
    """A sizes input (as a forward graph hands its backward) is keyed by value: another
    value, or a float where the key holds an int, must not run the latest plan."""
    text = """graph(%x : Tensor, %s : int[]):
  %y : Tensor = aten::reshape(%x, %s)
  %z : Tensor = aten::tanh(%y)
  return (%z)"""
    runner = NativeRunner(parse_ir(text))
    x = Tensor(_arrays(((2, 3),))[0])
    with no_grad():
        for sizes in ([3, 2], [3, 2], [2, 3], [6, 1], [3, 2], [6, 1]):
            _same(runner.run([x, sizes]), Interpreter(parse_ir(text)).run([x, sizes]))
        program = runner._last._program
        assert program([x, [6.0, 1]], [{}], False) is None  # (the float: not this plan's key)


def _training_pair(monkeypatch):
    """`irjit.compile` of LINEAR_TANH twice, the second without training programs (the general
    path: Function's copies, the runner's run, the plan's program under grad)."""
    fast = irjit.compile(LINEAR_TANH, "Float(3, 4), Float(3, 4), Float(4, 4), Float(4)")
    slow = irjit.compile(LINEAR_TANH, "Float(3, 4), Float(3, 4), Float(4, 4), Float(4)")
    monkeypatch.setattr(slow, "_train_arrays", None)
    return fast, slow


def _same_gradients(fast, slow) -> list[str]:
    """`backward()` of both Functions' latest calls: the same names and bitwise the same
    gradients; the names, sorted."""
    g, w = fast.backward(), slow.backward()
    assert sorted(g) == sorted(w)
    for name in w:
        np.testing.assert_array_equal(g[name], w[name])
    return sorted(g)


def test_a_training_call_runs_the_plans_train_program_as_the_general_path(monkeypatch):
    """`Function.run` of arrays under grad takes the latest plan's training program (the
    arrays as Tensors requiring grad, copies of those the backward reads, the body under
    grad): outputs and gradients equal the general path's bitwise; a caller writing its
    arrays after the call changes nothing."""
    fast, slow = _training_pair(monkeypatch)
    rng = np.random.default_rng(4)
    args = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]
    taken = []
    for fn in (fast, slow):
        for _ in range(3):
            fn.run(*args)
            fn.backward()
    train = fast._train_arrays
    monkeypatch.setattr(fast, "_train_arrays",
                        lambda a, f=None, c=True: taken.append(train(a, f, c)) or taken[-1])
    got, want = fast.run(*args), slow.run(*args)
    assert taken[-1] is not None and fast._calls.last[4] == ("arg0", "arg1", "arg2", "arg3")
    values = fast._calls.last[0]
    assert all(type(v) is Tensor and v.requires_grad for v in values)
    # x and W are copies (df reads them: d/dW needs x, d/dx needs W); h and b are not read
    assert [np.shares_memory(v.data, a) for v, a in zip(values, args)] == [False, True, False, True]
    assert got[0][0] is got[0][1] and got[0][0].grad_fn is not None
    np.testing.assert_array_equal(got[0][0].data, want[0][0].data)
    for a in args:  # (the call's copies are what backward reads)
        a[...] = 7.0
    assert _same_gradients(fast, slow) == ["arg0", "arg1", "arg2", "arg3"]


def test_a_training_call_with_per_input_flags_runs_a_train_program_of_its_own(monkeypatch):
    """Per-input flags (`requires_grad=[...]`) get training programs of their own: Tensors
    requiring grad where flagged, copies only of the arrays the backward reads (W, for the
    gradient of x; not h nor b), gradients of the flagged inputs
    only, bitwise the general path's."""
    fast, slow = _training_pair(monkeypatch)
    rng = np.random.default_rng(6)
    args = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]
    flags = [True, True, False, False]  # (x, h: their gradients need W, not x)
    taken = []
    for fn in (fast, slow):
        for _ in range(3):
            fn.run(*args, requires_grad=flags)
            fn.backward()
    train = fast._train_arrays
    monkeypatch.setattr(fast, "_train_arrays",
                        lambda a, f=None, c=True: taken.append(train(a, f, c)) or taken[-1])
    got, want = fast.run(*args, requires_grad=flags), slow.run(*args, requires_grad=flags)
    assert taken[-1] is not None and fast._calls.last[3] == (2, 3)
    values = fast._calls.last[0]
    assert [v.requires_grad for v in values] == flags
    # (W is copied: x's gradient reads it; h and b are read by no backward; x is captured by
    # the matmul's backward whichever operand needs a gradient)
    assert [np.shares_memory(v.data, a) for v, a in zip(values, args)][1:] == [True, False, True]
    np.testing.assert_array_equal(got[0][0].data, want[0][0].data)
    for a in args:
        a[...] = 7.0
    assert _same_gradients(fast, slow) == ["arg0", "arg1"]


@pytest.mark.parametrize("flags,copied", [
    ((True, False, False, False), [False, False, True, False]),  # dx reads W (x: sizes only)
    ((False, True, False, True), [False, False, False, False]),  # dh, db read no input
])
def test_a_training_program_copies_only_inputs_whose_values_a_backward_reads(flags, copied):
    """An input the backward reads only the sizes of (`aten::size` of a captured input) is
    not copied: any copy would have the same sizes."""
    fn = irjit.compile(LINEAR_TANH, "Float(3, 4), Float(3, 4), Float(4, 4), Float(4)")
    ref = irjit.compile(LINEAR_TANH, "Float(3, 4), Float(3, 4), Float(4, 4), Float(4)")
    ref._train_arrays = None
    rng = np.random.default_rng(7)
    args = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]
    for f in (fn, ref):
        for _ in range(3):
            f.run(*args, requires_grad=list(flags))
    assert [not np.shares_memory(v.data, a) for v, a in zip(fn._calls.last[0], args)] == copied
    for a in args:
        a[...] = -3.0
    got, want = fn.backward(), ref.backward()
    assert sorted(got) == sorted(want)
    for name in got:
        np.testing.assert_array_equal(got[name], want[name])


def test_a_training_call_of_another_layout_takes_the_general_path(monkeypatch):
    """The training program checks the copies against its plan's key: a call of other shapes,
    or of an integer array, is refused (None) and the general path runs it."""
    fast, slow = _training_pair(monkeypatch)
    rng = np.random.default_rng(5)
    args = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]
    for _ in range(3):
        fast.run(*args)
    wide = [rng.standard_normal(s).astype(np.float32) for s in ((5, 4), (5, 4), (4, 4), (4,))]
    assert fast.interpreter.train_arrays(wide) is None
    for fn in (fast, slow):
        fn.run(*wide)
    np.testing.assert_array_equal(fast.backward()["arg2"], slow.backward()["arg2"])
    fast.run(*args)
    assert fast.interpreter.train_arrays([args[0].astype(np.float64)] + args[1:]) is None
    assert fast.interpreter.train_arrays(args[:3]) is None


def test_a_training_program_that_returns_an_input_records_versions():
    """A training program's own leaves need no versions only while nothing but the program
    holds them: an output that is one of them reaches the caller, so the groups' nodes
    record versions (as the general path's do), and the gradients are the general path's."""
    text = """graph(%x : Tensor, %w : Tensor):
  %m : Tensor = aten::mm(%x, %w)
  %y : Tensor = aten::tanh(%m)
  return (%y, %w)"""
    fn = irjit.compile(text, "Float(3, 4), Float(4, 2)")
    ref = irjit.compile(text, "Float(3, 4), Float(4, 2)")
    ref._train_arrays = None
    rng = np.random.default_rng(9)
    args = [rng.standard_normal(s).astype(np.float32) for s in ((3, 4), (4, 2))]
    for f in (fn, ref):
        for _ in range(3):
            f.run(*args)
            f.backward()
    taken = fn.interpreter.train_arrays(args)
    assert taken is not None
    (y, w), leaves = taken
    assert w is leaves[1] and len(y.grad_fn[0].versions) == 2
    plain = irjit.compile(LINEAR_TANH, "Float(3, 4), Float(3, 4), Float(4, 4), Float(4)")
    arrays = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]
    for _ in range(3):
        plain.run(*arrays)
    ((out, _),), _ = plain.interpreter.train_arrays(arrays)
    assert out.grad_fn[0].versions == ()  # (nothing returned is a leaf of the program's)
    fn.run(*args)
    ref.run(*args)
    got, want = fn.backward(), ref.backward()
    for name in want:
        np.testing.assert_array_equal(got[name], want[name])


def test_a_training_call_of_tensors_shares_their_arrays(monkeypatch):
    """`Function.run` of Tensors that do not require grad takes the training program too, with
    their arrays shared as the general path shares them (no copies), and its gradients."""
    fast, slow = _training_pair(monkeypatch)
    rng = np.random.default_rng(8)
    args = [Tensor(rng.standard_normal(s).astype(np.float32)) for s in SHAPES]
    for fn in (fast, slow):
        for _ in range(3):
            fn.run(*args)
            fn.backward()
    taken, train = [], fast._train_arrays
    monkeypatch.setattr(fast, "_train_arrays",
                        lambda a, f=None, c=True: taken.append((c, train(a, f, c))) or taken[-1][1])
    got, want = fast.run(*args), slow.run(*args)
    assert taken[-1][0] is None and taken[-1][1] is not None  # (copy=None: the Tensors as given)
    assert all(np.shares_memory(v.data, t.data) and v is not t
               for v, t in zip(fast._calls.last[0], args))
    np.testing.assert_array_equal(got[0][0].data, want[0][0].data)
    _same_gradients(fast, slow)
