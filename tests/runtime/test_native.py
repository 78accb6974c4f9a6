"""The native runner: after a profiled first call, a graph runs as native units plus
interpreted nodes with the interpreter's results; a unit whose guards refuse the arguments
is interpreted for that call."""

from __future__ import annotations

import numpy as np
import pytest

from irjit.compiler import parse_ir
from irjit.ops.errors import IRRuntimeError
from irjit.ops.tensor import Tensor
from irjit.runtime import no_grad
from irjit.runtime.interpreter import Interpreter
from irjit.runtime.native import NativeRunner

GRAPH = """graph(%x : Tensor, %a : Tensor, %b : Tensor):
  %one : int = prim::Constant[value=1]()
  %m : Tensor = aten::mul(%x, %a)
  %s : Tensor = aten::add(%m, %b, %one)
  %t : Tensor = aten::sum(%s)
  %r : Tensor = aten::relu(%s)
  %q : Tensor = aten::mul(%t, %r)
  return (%q, %t)"""


def _inputs(shape=(5, 7), dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    return [Tensor(rng.standard_normal(s).astype(dtype)) for s in [shape, shape, shape[-1:]]]


def _check(runner, xs):
    """The runner's results on a first (profiled) and a second (native) call."""
    expected = Interpreter(parse_ir(GRAPH)).run(xs)
    for _ in range(2):
        with no_grad():
            got = runner.run(xs)
        for e, g in zip(expected, got):
            assert g.data.dtype == e.data.dtype and g.data.shape == e.data.shape
            np.testing.assert_allclose(g.data, e.data, rtol=1e-5, atol=1e-5)


def test_native_units_and_interpreted_nodes_give_the_interpreters_results():
    runner = NativeRunner(parse_ir(GRAPH))
    _check(runner, _inputs())
    _check(runner, _inputs(seed=1))
    s = runner.stats
    assert (s.units, s.nodes_native, s.nodes_interpreted, s.bailouts) == (1, 5, 0, 0)
    assert s.line().startswith("native: units=1 nodes_native=5 nodes_interpreted=0 compile_ms=")


def test_each_input_layout_gets_its_own_specialization():
    runner = NativeRunner(parse_ir(GRAPH))
    _check(runner, _inputs((5, 7)))
    _check(runner, _inputs((2, 3), np.float64))
    x, a, b = _inputs((5, 7))
    _check(runner, [Tensor(np.ascontiguousarray(x.data.T).T), a, b])  # a column-major input
    assert runner.stats.bailouts == 0 and len(runner._plans) == 3


def test_a_refused_unit_is_interpreted_and_counted_as_a_bailout():
    runner = NativeRunner(parse_ir(GRAPH), max_specializations=1)
    _check(runner, _inputs((5, 7)))
    plan = runner._plans[next(iter(runner._plans))]
    x, a, b = _inputs((5, 7))
    xs = [Tensor(np.asfortranarray(x.data)), a, b]
    with no_grad():
        got = plan.run(xs)  # the plan for contiguous inputs, called with a column-major one
    expected = Interpreter(parse_ir(GRAPH)).run(xs)
    np.testing.assert_allclose(got[0].data, expected[0].data, rtol=1e-5)
    assert runner.stats.bailouts == 1


def test_run_time_numbers_are_kernel_arguments_with_weak_scalar_promotion():
    text = """graph(%x : Tensor, %s : float, %k : int):
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::mul(%x, %s)
  %b : Tensor = aten::add(%a, %k, %one)
  %c : Tensor = aten::sub(%b, %x, %k)
  return (%c)"""
    runner = NativeRunner(parse_ir(text))
    x = Tensor(np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32))
    for s, k in [(0.5, 2), (1.5, 3), (-2.25, 4)]:
        with no_grad():
            got = runner.run([x, s, k])[0]
        expected = Interpreter(parse_ir(text)).run([x, s, k])[0]
        assert got.data.dtype == np.float32
        np.testing.assert_allclose(got.data, expected.data, rtol=1e-6)
    assert (runner.stats.units, runner.stats.nodes_native, runner.stats.bailouts) == (1, 3, 0)


def test_backward_graph_shape_bookkeeping_folds_under_the_specialization():
    """In a df-like graph, sizes of inputs and None size arguments become constants, so
    both `_grad_sum_to_size` nodes are identities (None; sizes equal to their input's) and fold
    away, leaving tanh_backward and mul fused in one unit."""
    text = """graph(%g : Tensor, %y : Tensor, %size : int[]?):
  %one : int = prim::Constant[value=1]()
  %s : int[] = aten::size(%y)
  %d : Tensor = aten::tanh_backward(%g, %y)
  %r : Tensor = aten::_grad_sum_to_size(%d, %size)
  %q : Tensor = aten::_grad_sum_to_size(%r, %s)
  %o : Tensor = aten::mul(%q, %y)
  return (%o)"""
    rng = np.random.default_rng(0)
    g, y = (Tensor(rng.standard_normal((4, 5)).astype(np.float32)) for _ in range(2))
    runner = NativeRunner(parse_ir(text))
    expected = Interpreter(parse_ir(text)).run([g, y, None])[0]
    for _ in range(2):
        with no_grad():
            got = runner.run([g, y, None])[0]
        np.testing.assert_allclose(got.data, expected.data, rtol=1e-6)
    assert (runner.stats.units, runner.stats.nodes_native, runner.stats.nodes_interpreted) == (1, 2, 0)


def test_linear_calls_blas_and_fuses_bias_and_relu():
    text = """graph(%x : Tensor, %w : Tensor, %b : Tensor, %w2 : Tensor):
  %h : Tensor = aten::linear(%x, %w, %b)
  %r : Tensor = aten::relu(%h)
  %y : Tensor = aten::matmul(%r, %w2)
  return (%y)"""
    rng = np.random.default_rng(0)
    xs = [Tensor(rng.standard_normal(s)) for s in [(6, 9), (5, 9), (5,), (5, 3)]]
    runner = NativeRunner(parse_ir(text))
    expected = Interpreter(parse_ir(text)).run(xs)[0]
    for _ in range(2):
        with no_grad():
            got = runner.run(xs)[0]
        np.testing.assert_allclose(got.data, expected.data, rtol=1e-12)
    s = runner.stats
    assert (s.units, s.nodes_native, s.nodes_interpreted, s.bailouts) == (2, 3, 0, 0)


def test_lstm_cell_chunks_become_slices_that_fuse():
    text = """graph(%x : Tensor, %h : Tensor, %c : Tensor, %w : Tensor, %b : Tensor):
  %four : int = prim::Constant[value=4]()
  %one : int = prim::Constant[value=1]()
  %wt : Tensor = aten::t(%w)
  %m : Tensor = aten::matmul(%x, %wt)
  %gates : Tensor = aten::add(%m, %b, %one)
  %parts : Tensor[] = aten::chunk(%gates, %four, %one)
  %i : Tensor, %f : Tensor, %g : Tensor, %o : Tensor = prim::ListUnpack(%parts)
  %i2 : Tensor = aten::sigmoid(%i)
  %f2 : Tensor = aten::sigmoid(%f)
  %g2 : Tensor = aten::tanh(%g)
  %o2 : Tensor = aten::sigmoid(%o)
  %fc : Tensor = aten::mul(%f2, %c)
  %ig : Tensor = aten::mul(%i2, %g2)
  %c2 : Tensor = aten::add(%fc, %ig, %one)
  %t : Tensor = aten::tanh(%c2)
  %h2 : Tensor = aten::mul(%o2, %t)
  return (%h2, %c2)"""
    rng = np.random.default_rng(0)
    xs = [Tensor(rng.standard_normal(s).astype(np.float32)) for s in
          [(3, 5), (3, 4), (3, 4), (16, 5), (16,)]]
    runner = NativeRunner(parse_ir(text))
    expected = Interpreter(parse_ir(text)).run(xs)
    for _ in range(2):
        with no_grad():
            got = runner.run(xs)
        for e, g in zip(expected, got):
            np.testing.assert_allclose(g.data, e.data, rtol=1e-5, atol=1e-6)
    s = runner.stats
    assert (s.units, s.nodes_native, s.nodes_interpreted, s.bailouts) == (2, 16, 0, 0)  # chunk + ListUnpack became 4 slices


def test_irjit_compile_gives_a_function_running_native_units():
    import irjit
    fn = irjit.compile(GRAPH, input_types="Float(5, 7), Float(5, 7), Float(7)")
    xs = [x.data for x in _inputs()]
    expected = Interpreter(parse_ir(GRAPH)).run([Tensor(x) for x in xs])
    for _ in range(2):
        got = fn.run(*xs, requires_grad=False)
    for e, g in zip(expected, got):
        np.testing.assert_allclose(g.data, e.data, rtol=1e-5, atol=1e-5)
    assert fn.interpreter.stats.units == 1


def test_gradients_of_a_compiled_function_go_through_the_tape():
    import irjit
    text = """graph(%x : Tensor, %y : Tensor):
  %a : Tensor = aten::mul(%x, %y)
  %b : Tensor = aten::tanh(%a)
  return (%b)"""
    xs = [np.linspace(-1, 1, 6).reshape(2, 3), np.full((2, 3), 0.5)]
    native = irjit.grad(irjit.compile(text), xs)
    interpreted = irjit.grad(irjit.load(text), xs)
    for k in ("arg0", "arg1"):
        np.testing.assert_allclose(native[k], interpreted[k], rtol=1e-12)


def test_select_at_a_run_time_index_is_checked_in_native_code():
    text = """graph(%x : Tensor, %i : int):
  %zero : int = prim::Constant[value=0]()
  %r : Tensor = aten::select(%x, %zero, %i)
  %y : Tensor = aten::neg(%r)
  return (%y)"""
    x = Tensor(np.arange(12, dtype=np.float32).reshape(3, 4))
    runner = NativeRunner(parse_ir(text))
    with no_grad():
        for i in (0, 2, -1, 1):
            assert runner.run([x, i])[0].data.tolist() == (-x.data[i]).tolist()
        assert runner.stats.bailouts == 0 and runner.stats.nodes_native == 2
        with pytest.raises(IRRuntimeError, match="out of range|out of bounds"):
            runner.run([x, 3])  # refused natively (a bailout), then the interpreter's error
    assert runner.stats.bailouts == 1


def test_rnn_loop_body_runs_natively():
    text = """graph(%x : Tensor, %h0 : Tensor, %W : Tensor, %U : Tensor):
  %one : int = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %true : bool = prim::Constant[value=1]()
  %n : int = prim::Constant[value=3]()
  %h : Tensor = prim::Loop(%n, %true, %h0)
    block0(%i : int, %hi : Tensor):
      %xi : Tensor = aten::select(%x, %zero, %i)
      %a : Tensor = aten::matmul(%xi, %W)
      %b : Tensor = aten::matmul(%hi, %U)
      %c : Tensor = aten::add(%a, %b, %one)
      %d : Tensor = aten::tanh(%c)
      -> (%true, %d)
  return (%h)"""
    rng = np.random.default_rng(0)
    xs = [Tensor((rng.standard_normal(s) * 0.3).astype(np.float32))
          for s in [(3, 2, 4), (2, 4), (4, 4), (4, 4)]]
    runner = NativeRunner(parse_ir(text))
    expected = Interpreter(parse_ir(text)).run(xs)[0]
    for _ in range(2):
        with no_grad():
            got = runner.run(xs)[0]
        np.testing.assert_allclose(got.data, expected.data, rtol=1e-5, atol=1e-6)
    assert (runner.stats.nodes_native, runner.stats.nodes_interpreted) == (5, 0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_conv2d_with_bias_and_relu_runs_natively(dtype):
    text = """graph(%x : Tensor, %w : Tensor, %b : Tensor):
  %one : int = prim::Constant[value=1]()
  %stride : int[] = prim::Constant[value=[2, 1]]()
  %pad : int[] = prim::Constant[value=[1, 0]]()
  %dil : int[] = prim::Constant[value=[1, 1]]()
  %c : Tensor = aten::conv2d(%x, %w, %b, %stride, %pad, %dil, %one)
  %r : Tensor = aten::relu(%c)
  return (%r)"""
    rng = np.random.default_rng(0)
    xs = [Tensor(rng.standard_normal(s).astype(dtype)) for s in [(2, 3, 7, 6), (4, 3, 3, 2), (4,)]]
    runner = NativeRunner(parse_ir(text))
    expected = Interpreter(parse_ir(text)).run(xs)[0]
    for _ in range(2):
        with no_grad():
            got = runner.run(xs)[0]
        np.testing.assert_allclose(got.data, expected.data, rtol=1e-5, atol=1e-5)
    assert (runner.stats.nodes_native, runner.stats.nodes_interpreted, runner.stats.bailouts) == (2, 0, 0)


def test_debug_state_and_counters_report_native_statistics():
    import irjit
    from irjit.runtime.executor import COUNTERS
    text = """graph(%x : Tensor, %w : Tensor, %b : Tensor):
  %y : Tensor = aten::linear(%x, %w, %b)
  %r : Tensor = aten::relu(%y)
  return (%r)"""
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s).astype(np.float32) for s in [(4, 8), (16, 8), (16,)]]
    for kind in ("profiling", "legacy"):
        before = COUNTERS.as_dict()
        fn = irjit.load(irjit.parse_ir(text), executor=kind)
        for _ in range(4):
            fn.run(*args)
            fn.backward()
        after = COUNTERS.as_dict()
        state = fn.executor.debug_state()
        header = state.splitlines()[0]
        assert "; native: units=" in header and "nodes_native=0 " not in header, header
        assert after["native_units"] > before["native_units"]
        assert after["native_nodes"] > before["native_nodes"]


def test_a_graph_whose_types_are_complete_runs_natively_on_its_first_call():
    typed = """graph(%x : Float(4, 8, strides=[8, 1], device=cpu), %y : Float(4, 8, strides=[8, 1], device=cpu)):
  %z : Float(4, 8, strides=[8, 1], device=cpu) = aten::mul(%x, %y)
  %r : Float(4, 8, strides=[8, 1], device=cpu) = aten::relu(%z)
  return (%r)"""
    rng = np.random.default_rng(0)
    xs = [Tensor(rng.standard_normal((4, 8)).astype(np.float32)) for _ in range(2)]
    runner = NativeRunner(parse_ir(typed))
    with no_grad():
        got = runner.run(xs)
    assert runner.stats.units == 1 and runner.stats.nodes_native == 2
    np.testing.assert_allclose(got[0].data, np.maximum(xs[0].data * xs[1].data, 0), rtol=1e-6)
    untyped = NativeRunner(parse_ir(GRAPH))  # Tensor types: the first call is profiled
    with no_grad():
        untyped.run(_inputs())
    assert untyped.stats.units == 0 and untyped.stats.nodes_native > 0


@pytest.mark.parametrize("executor", ["interp", "profiling", "legacy"])
def test_load_takes_the_backend(executor):
    import irjit
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s).astype(np.float32) for s in [(5, 7), (5, 7), (7,)]]
    want = irjit.load(GRAPH)(*args)
    for backend, native_expected in (("native", True), ("interp", False)):
        fn = irjit.load(GRAPH, executor=executor, backend=backend)
        for _ in range(4):
            got = fn(*args)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
        if executor == "interp":
            assert hasattr(fn.interpreter, "stats") == native_expected
        else:
            assert bool(fn.executor.runner_stats()) == native_expected
    with pytest.raises(ValueError, match="valid backends"):
        irjit.load(GRAPH, executor=executor, backend="gpu")
