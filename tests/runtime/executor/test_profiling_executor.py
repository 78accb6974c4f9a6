"""The profiling executor on the forum question's conv2d+relu module, guard failures and
bailouts, bounded re-specialization, introspection and threads."""

import threading
from pathlib import Path

import numpy as np
import pytest

import irjit
from irjit.runtime.executor import (COUNTERS, GraphExecutor, debug_set_autodiff_subgraph_inlining,
                              get_settings, last_executed_optimized_graph, make_executor,
                              set_profiling_executor, update_settings)
from irjit.runtime.executor.profiling import ProfilingGraphExecutor
from irjit.compiler.settings import ExecutorSettings
from irjit.runtime.loader import build_module
from irjit.ops.tensor import Tensor

SEED = Path(__file__).resolve().parents[2] / "fixtures" / "seed"
THRESHOLDS_1 = ExecutorSettings(autodiff_node_threshold=1, autodiff_inline_threshold=1)


def _module(graph, seed=0):
    rng = np.random.default_rng(seed)
    m = build_module(graph, {"conv.weight": rng.standard_normal((32, 3, 3, 3)).astype(np.float32)})
    m.set("conv", m.get("conv"))
    w = Tensor(m.get("conv").get("weight"), True)
    m.get("conv").set("weight", w)
    return m, w


def _x(shape=(1, 3, 8, 8), requires_grad=True, seed=1):
    return Tensor(np.random.default_rng(seed).standard_normal(shape).astype(np.float32), requires_grad)


def _graph(name="script_conv_relu.ir"):
    return irjit.parse_ir((SEED / name).read_text())


def test_seed_thresholds_1_first_graph_for_is_profiled_then_optimized():
    g = _graph()
    ex = ProfilingGraphExecutor(g, settings=THRESHOLDS_1)
    m, _ = _module(g)
    x = _x()
    first = str(ex.graph_for(m, x))
    assert "prim::profile[profiled_type=Float(1, 3, 8, 8, strides=[192, 64, 8, 1], requires_grad=1, device=cpu), seen_none=0](%x.1)" in first
    assert "   = prim::profile()\n" in first and "DifferentiableGraph" not in first
    second = str(ex.graph_for(m, x))
    assert "prim::profile" not in second
    lines = second.splitlines()
    conv = next(l for l in lines if "aten::conv2d" in l)
    assert conv.startswith("  %") and "Float(1, 32, 6, 6, strides=[1152, 36, 6, 1], requires_grad=1, device=cpu)" in conv
    assert any("prim::RequiresGradCheck[types=[Tensor(requires_grad=1)]]" in l for l in lines)
    assert '= prim::Constant[name="fallback_function", fallback=1]()' in second
    assert "prim::CallFunction" in second and "prim::TupleUnpack" in second
    dg_section = second.split("with prim::DifferentiableGraph_0 = graph(")[1]
    assert "aten::relu" in dg_section and "aten::conv2d" not in dg_section
    irjit.parse_ir(second).lint()  # the printout is valid IR


def test_seed_default_thresholds_no_differentiable_graph():
    g = _graph()
    ex = ProfilingGraphExecutor(g, settings=ExecutorSettings())
    m, _ = _module(g)
    x = _x()
    ex.graph_for(m, x)
    optimized = str(ex.graph_for(m, x))
    assert "DifferentiableGraph" not in optimized and "RequiresGradCheck" not in optimized
    assert "aten::conv2d" in optimized and "aten::relu" in optimized


def test_seed_bailout_style_has_the_forum_shape():
    g = _graph()
    settings = ExecutorSettings(autodiff_node_threshold=1, autodiff_inline_threshold=1,
                                guard_style="bailout")
    ex = ProfilingGraphExecutor(g, settings=settings)
    m, _ = _module(g)
    x = _x()
    ex.graph_for(m, x)
    text = str(ex.graph_for(m, x))
    assert " : int = prim::BailoutTemplate_0()" in text
    assert "prim::BailOut[index=0](" in text and "prim::BailOut[index=2](" in text
    assert "= prim::DifferentiableGraph_1(" in text
    assert "with prim::BailoutTemplate_0 = graph(%self : __torch__.models.MyModule," in text
    assert "with prim::DifferentiableGraph_1 = graph(" in text
    irjit.parse_ir(text).lint()


def test_forward_and_backward_match_the_interpreter_and_count_bailouts():
    from irjit.runtime.autograd import backward
    from irjit.runtime.interpreter import Interpreter
    g = _graph()
    COUNTERS.reset()
    ex = ProfilingGraphExecutor(g, settings=THRESHOLDS_1)
    m, w = _module(g)
    for run in range(3):
        x = _x(seed=run)
        (out,) = ex.run(m, x)
        backward([out])
        m2, w2 = _module(g)
        x2 = Tensor(x.data.copy(), True)
        (ref,) = Interpreter(g).run([m2, x2])
        backward([ref])
        np.testing.assert_allclose(out.data, ref.data, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(x.grad, x2.grad, rtol=1e-4, atol=1e-4)
        w.grad = None
    assert ex.bailouts == 0
    # an input that does not require grad fails the RequiresGradCheck: the fallback runs
    x = _x(requires_grad=False)
    w.requires_grad = False
    (out,) = ex.run(m, x)
    (ref,) = Interpreter(g).run([_module(g)[0], x])
    np.testing.assert_allclose(out.data, ref.data, rtol=1e-5, atol=1e-5)
    assert ex.bailouts == 1 and COUNTERS.bailouts >= 1


def test_shape_changes_bail_out_and_recompilation_is_bounded():
    g = _graph()
    settings = ExecutorSettings(guard_style="bailout", bailout_depth=2)
    COUNTERS.reset()
    ex = ProfilingGraphExecutor(g, settings=settings)
    m, _ = _module(g)
    from irjit.runtime.interpreter import Interpreter
    shapes = [(1, 3, 8, 8)] * 2 + [(2, 3, 9, 9)] * 3 + [(1, 3, 12, 7)] * 3 + [(3, 3, 5, 5)] * 3
    for i, shape in enumerate(shapes):
        x = _x(shape, seed=i)
        (out,) = ex.run(m, x)
        (ref,) = Interpreter(g).run([m, x])
        np.testing.assert_allclose(out.data, ref.data, rtol=1e-5, atol=1e-5)
    assert ex.bailouts >= 3
    # depth 2: the top executor and one fallback level specialize, the next level does not
    assert COUNTERS.specializations <= 2
    assert "bailout depth left 2" in ex.debug_state()


def test_graph_executor_front_end_follows_the_settings():
    previous = get_settings()
    try:
        set_profiling_executor(False)
        assert type(GraphExecutor(_graph())).__name__ == "LegacyGraphExecutor"
        set_profiling_executor(True)
        assert type(GraphExecutor(_graph())).__name__ == "ProfilingGraphExecutor"
        debug_set_autodiff_subgraph_inlining(False)
        g = _graph()
        ex = GraphExecutor(g)
        m, _ = _module(g)
        x = _x()
        ex.graph_for(m, x)
        assert "prim::DifferentiableGraph_0" in str(ex.graph_for(m, x))
        assert last_executed_optimized_graph() is not None
        with pytest.raises(ValueError):
            make_executor(g, "nope")
    finally:
        update_settings(**{f: getattr(previous, f) for f in previous.__dataclass_fields__})


def test_debug_state_and_last_executed_graph():
    g = _graph()
    ex = ProfilingGraphExecutor(g, settings=THRESHOLDS_1)
    m, _ = _module(g)
    x = _x()
    ex.run(m, x)
    assert last_executed_optimized_graph() is ex.last_graph
    assert "# profiled graph" in ex.debug_state()
    ex.run(m, x)
    assert "# optimized graph" in ex.debug_state()
    assert "prim::DifferentiableGraph" in str(last_executed_optimized_graph())


def test_two_threads_share_one_profiling_executor():
    g = _graph()
    ex = ProfilingGraphExecutor(g, settings=THRESHOLDS_1)
    m, _ = _module(g)
    from irjit.runtime.interpreter import Interpreter
    errors, ok = [], []

    def work(seed):
        try:
            for i in range(10):
                x = _x(seed=seed * 100 + i)
                (out,) = ex.run(m, x)
                (ref,) = Interpreter(g).run([m, x])
                ok.append(np.allclose(out.data, ref.data, rtol=1e-5, atol=1e-5))
        except Exception as e:  # pragma: no cover - reported by the assert
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(ok) == 20 and all(ok)
    assert ex.optimized_plan is not None


def test_a_failed_bailout_continues_after_the_guard_without_repeating_side_effects():
    text = """graph(%l : int[]):
  %one : int = prim::Constant[value=1]()
  %two : float = prim::Constant[value=2.]()
  %none : NoneType = prim::Constant()
  %l2 : int[] = aten::append(%l, %one)
  %n : int = aten::len(%l)
  %sizes : int[] = prim::ListConstruct(%n)
  %z : Tensor = aten::ones(%sizes, %none, %none, %none, %none)
  %y : Tensor = aten::mul(%z, %two)
  return (%y)
"""
    g = irjit.parse_ir(text)
    ex = ProfilingGraphExecutor(g, settings=ExecutorSettings(guard_style="bailout"))
    lst = []
    for run in range(1, 6):
        (y,) = ex.run(lst)
        assert len(lst) == run  # one append per run, even when the run bailed out after it
        np.testing.assert_allclose(y.data, np.full(run, 2.0))
    assert ex.bailouts >= 3 and ex._template_interpreters


def test_settings_setters_take_effect_for_new_executors():
    from irjit.runtime.executor import (set_autodiff_thresholds, set_guard_style,
                                  set_num_profiled_runs)
    previous = get_settings()
    try:
        set_num_profiled_runs(2)
        set_autodiff_thresholds(node_threshold=1, inline_threshold=1)
        set_guard_style("bailout")
        g = _graph()
        ex = make_executor(g, "profiling")
        m, _ = _module(g)
        x = _x()
        ex.run(m, x)
        ex.run(m, x)
        assert ex.optimized_plan is None  # still profiling: two profiled runs
        ex.run(m, x)
        text = str(ex.last_graph)
        assert "prim::BailoutTemplate_0" in text and "prim::DifferentiableGraph_1" in text
        with pytest.raises(ValueError):
            set_guard_style("sometimes")
        with pytest.raises(ValueError):
            set_num_profiled_runs(0)
    finally:
        update_settings(**{f: getattr(previous, f) for f in previous.__dataclass_fields__})


def test_optimized_pointwise_function_matches_pytorch_2_13_outside_the_subgraph():
    """PyTorch 2.13's `last_executed_optimized_graph()` after run 2 of the pointwise function
    with inputs that require grad (fixture 285): the same guard, subgraph node and fallback,
    up to value numbering. (Inside the subgraph the formulas' bookkeeping differs.)"""
    import re
    from irjit.runtime.loader import Function
    fixtures = Path(__file__).resolve().parents[2] / "fixtures"
    want = (fixtures / "roundtrip" / "285_prof_fn_pointwise_grad_run2.ir").read_text()
    fn = Function(irjit.parse_ir((fixtures / "generated" / "run" / "pointwise_fn_script"
                                     / "graph.ir").read_text()), executor="profiling")
    x = np.random.default_rng(0).standard_normal((4, 4)).astype(np.float32)
    fn.run(x, x.copy())
    fn.run(x, x.copy())
    got = str(fn.executor.last_graph)

    def top(text):
        head = text.split("\nwith ")[0]
        names: dict = {}
        return re.sub(r"%(\d+)\b", lambda m: "%" + names.setdefault(m.group(1), str(len(names))), head)
    assert top(got) == top(want)


def test_profiled_seed_graph_matches_pytorch_2_13_run1():
    """After one run with inputs that require grad, the executed (profiled) graph of the seed
    module is PyTorch 2.13's (fixture 338), up to value numbering."""
    import re
    from irjit.runtime.loader import Function
    fixtures = Path(__file__).resolve().parents[2] / "fixtures"
    case = fixtures / "run" / "conv_relu_script"
    fn = Function(irjit.parse_ir((case / "graph.ir").read_text()), params=str(case / "params.npz"),
                  executor="profiling")
    with np.load(case / "inputs.npz") as f:
        fn.run(f["arg0"])
    want = (fixtures / "roundtrip" / "338_prof_mod_conv_relu_grad_run1.ir").read_text()

    def renumbered(text):
        names: dict = {}
        return re.sub(r"%(\d+)\b", lambda m: "%" + names.setdefault(m.group(1), str(len(names))), text)
    assert renumbered(str(fn.executor.last_graph)) == renumbered(want)


# ---- training calls through the optimized plan's training program

from ..test_native_program import (LINEAR_TANH as TRAIN_LINEAR_TANH, SHAPES as TRAIN_SHAPES,  # noqa: E402
                                   _same_gradients)


def _training_pair(monkeypatch, text=TRAIN_LINEAR_TANH):
    """Two profiling executors' Functions of `text` (native backend), the second without the
    executor's training path (the general path: `_prepare`'s Tensors, `run`)."""
    from irjit.compiler import parse_ir
    fast, slow = (irjit.load(parse_ir(text), executor="profiling", backend="native")
                  for _ in range(2))
    monkeypatch.setattr(slow, "_train_arrays", None)
    return fast, slow


def _taken(monkeypatch, fn) -> list:
    """The results of `fn`'s executor's `train_arrays` (which `fn.run` calls) from now on."""
    taken, train = [], fn.executor.train_arrays
    assert fn._train_arrays == train
    monkeypatch.setattr(fn, "_train_arrays",
                        lambda arrays, flags=None, copy=True: taken.append(train(arrays, flags, copy)) or taken[-1])
    return taken


@pytest.mark.parametrize("as_tensors", [True, False])
def test_a_training_call_runs_the_optimized_plans_train_program(monkeypatch, as_tensors):
    """A training call of Tensors that do not require grad (or of arrays) runs the optimized
    plan's training program: outputs and gradients bitwise the general path's, one invocation
    counted, the optimized graph recorded as last executed; Tensors' arrays are shared as
    `_prepare` shares them, arrays the backward reads are copied (a caller writing them after
    the call changes nothing); the DifferentiableGraph's node records no versions (nothing
    but the program holds its leaves)."""
    from irjit.runtime.executor import COUNTERS
    from irjit.runtime.executor.counters import last_executed_optimized_graph
    fast, slow = _training_pair(monkeypatch)
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in TRAIN_SHAPES]
    args = [Tensor(a) for a in arrays] if as_tensors else arrays
    for fn in (fast, slow):
        for _ in range(5):  # (the executors of f and df profile too)
            fn.run(*args)
            fn.backward()
    taken = _taken(monkeypatch, fast)
    before = COUNTERS.invocations
    got = fast.run(*args)
    middle = COUNTERS.invocations
    want = slow.run(*args)
    # (as many invocations counted: the executor's; its DifferentiableGraph's f's plan is
    # taken and run as PyTorch's op does, with getPlanFor, which counts no invocation)
    assert taken[-1] is not None and middle - before == COUNTERS.invocations - middle == 1
    assert last_executed_optimized_graph() is slow.executor.last_graph
    fast_graph = fast.executor.optimized_plan.graph
    assert fast.executor.last_graph is fast_graph
    values = fast._calls.last[0]
    assert all(type(v) is Tensor and v.requires_grad for v in values)
    shared = [np.shares_memory(v.data, a) for v, a in zip(values, arrays)]
    assert shared == ([True] * 4 if as_tensors else [False] * 4)
    (y, y2), = got
    assert y is y2 and y.grad_fn[0].versions == ()
    np.testing.assert_array_equal(y.data, want[0][0].data)
    if not as_tensors:
        for a in arrays:
            a[...] = 7.0
    assert _same_gradients(fast, slow) == ["arg0", "arg1", "arg2", "arg3"]


def test_training_calls_go_straight_to_the_programs_that_took_the_latest_ones(monkeypatch):
    """Once a training call went through, the executor tries that training program first
    and its DifferentiableGraph's f and df run through their native plans' calls without
    their executors' tests; arrays of another layout (which those refuse) take the general
    paths, bitwise as the Function without the training path, and the layout before still
    goes straight. A plan of guards, a DifferentiableGraph and tuples reads no sizes itself:
    its program checks the inputs' dtypes only and takes every batch size, as PyTorch runs
    the DifferentiableGraph behind its requires-grad guard (f and df check what they run)."""
    fast, slow = _training_pair(monkeypatch)
    rng = np.random.default_rng(6)
    first = [Tensor(rng.standard_normal(s).astype(np.float32)) for s in TRAIN_SHAPES]
    wider = [Tensor(rng.standard_normal(s).astype(np.float32))
             for s in ((5, 4), (5, 4), (4, 4), (4,))]
    programs = {}
    for args in (first, wider, first):
        for fn in (fast, slow):
            for _ in range(5):
                fn.run(*args)
                fn.backward()
        ex = fast.executor
        assert ex._train_program is not None and ".shape !=" not in ex._train_program.source
        assert ex._train_program is programs.setdefault("first", ex._train_program)
        for op in ex.optimized_plan._ops.values():  # (one per layout the runner specialized)
            for runner in (op._f_runner, op._df_runner):
                assert runner.raw_call.__name__.startswith("direct")
        # (the training program runs the ops inline, calling f with its leaves' arrays)
        assert ".raw_call([x" in ex._train_program.source and "GradNode" in ex._train_program.source
        got, want = fast.run(*args), slow.run(*args)
        np.testing.assert_array_equal(got[0][0].data, want[0][0].data)
        _same_gradients(fast, slow)


def test_a_training_call_with_an_input_requiring_grad_takes_the_general_path(monkeypatch):
    """A caller's Tensor that requires grad is its own leaf (its gradient flows to it):
    the training program, which makes leaves of its own, refuses the call."""
    fast, _ = _training_pair(monkeypatch)
    rng = np.random.default_rng(4)
    args = [Tensor(rng.standard_normal(s).astype(np.float32)) for s in TRAIN_SHAPES]
    for _ in range(3):
        fast.run(*args)
    taken = _taken(monkeypatch, fast)
    args[2] = Tensor(args[2].data, True)
    outs = fast.run(*args)
    assert taken == [None] and outs[0][0].grad_fn is not None
    assert fast._calls.last[0][2] is args[2]


def test_a_training_program_returning_an_input_records_versions(monkeypatch):
    """An output that is one of the program's leaves reaches the caller, who may write it:
    the DifferentiableGraph's node then records versions as the general path's does."""
    text = """graph(%x : Tensor, %w : Tensor):
  %m : Tensor = aten::mm(%x, %w)
  %y : Tensor = aten::tanh(%m)
  return (%y, %w)"""
    fast, slow = _training_pair(monkeypatch, text)
    rng = np.random.default_rng(5)
    args = [Tensor(rng.standard_normal(s).astype(np.float32)) for s in ((3, 4), (4, 2))]
    for fn in (fast, slow):
        for _ in range(5):
            fn.run(*args)
            fn.backward()
    taken = _taken(monkeypatch, fast)
    got = fast.run(*args)
    assert taken[-1] is not None and got[1] is fast._calls.last[0][1]
    assert len(got[0].grad_fn[0].versions) == 2
    slow.run(*args)
    _same_gradients(fast, slow)


def test_a_training_call_with_per_input_flags_runs_a_training_program_of_its_own(monkeypatch):
    """Per-input flags get the training program of those flags: gradients of the flagged
    inputs only, bitwise the general path's; a guard of the executor's graph saying an input
    does not require grad holds for an unflagged one (its branch is the DifferentiableGraph's).
    A later call of other flags takes a program of its own (its guards then fail over to
    the fallback function, as PyTorch's do) with the general path's results."""
    fast, slow = _training_pair(monkeypatch)
    rng = np.random.default_rng(6)
    args = [Tensor(rng.standard_normal(s).astype(np.float32)) for s in TRAIN_SHAPES]
    flags = [False, True, True, True]
    for fn in (fast, slow):
        for _ in range(5):
            fn.run(*args, requires_grad=flags)
            fn.backward()
    taken = _taken(monkeypatch, fast)
    got, want = fast.run(*args, requires_grad=flags), slow.run(*args, requires_grad=flags)
    assert taken[-1] is not None and fast._calls.last[3] == (0,)
    (y, _), = got
    x = fast._calls.last[0][0]
    assert not x.requires_grad and y.grad_fn[0].versions == ()
    assert all(e is not x for e in y.grad_fn[0].edges)
    np.testing.assert_array_equal(y.data, want[0][0].data)
    assert _same_gradients(fast, slow) == ["arg1", "arg2", "arg3"]
    other = [True, False, True, True]
    got, want = fast.run(*args, requires_grad=other), slow.run(*args, requires_grad=other)
    np.testing.assert_array_equal(got[0][0].data, want[0][0].data)
    g, w = fast.backward(), slow.backward()
    assert sorted(g) == sorted(w) == ["arg0", "arg2", "arg3"]
    for name in g:
        np.testing.assert_allclose(g[name], w[name], rtol=1e-6, atol=1e-6)


def test_invocations_are_counted_without_a_lock_and_exactly_under_threads():
    """`COUNTERS.invocations` counts executor runs from several threads exactly (the hot
    paths add to it without a lock), reads and resets as a number, and keeps its place in
    `as_dict` (what `irtool run --stats` prints)."""
    import threading
    from irjit.runtime.executor import COUNTERS
    from irjit.runtime.executor.counters import count_invocation
    COUNTERS.invocations = 5
    assert COUNTERS.invocations == 5 and COUNTERS.invocations == 5

    def work():
        for _ in range(20000):
            count_invocation()
    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert COUNTERS.invocations == 5 + 80000
    COUNTERS.inc("invocations", 2)
    assert list(COUNTERS.as_dict())[:2] == ["executors_constructed", "invocations"]
    assert COUNTERS.as_dict()["invocations"] == 80007
    COUNTERS.reset()
    assert COUNTERS.invocations == 0
