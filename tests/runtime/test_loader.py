"""`Function.run`'s per-input requires_grad flags: the inputs flagged False get no gradient
(and the graph is differentiated without them), under every executor and the native runner."""

import numpy as np
import pytest

import irjit
from irjit.ops.tensor import Tensor

GRAPH = """graph(%x : Tensor, %w : Tensor, %b : Tensor):
  %one : int = prim::Constant[value=1]()
  %wt : Tensor = aten::t(%w)
  %y : Tensor = aten::matmul(%x, %wt)
  %z : Tensor = aten::add(%y, %b, %one)
  %r : Tensor = aten::tanh(%z)
  return (%r)
"""


def _inputs():
    rng = np.random.default_rng(0)
    return [rng.standard_normal(s).astype(np.float32) for s in ((3, 4), (5, 4), (5,))]


def _functions():
    return {"interp": irjit.load(GRAPH), "profiling": irjit.load(GRAPH, executor="profiling"),
            "compile": irjit.compile(GRAPH, "Float(3, 4), Float(5, 4), Float(5)")}


@pytest.mark.parametrize("how", ["interp", "profiling", "compile"])
def test_inputs_flagged_false_get_no_gradient(how):
    args = _inputs()
    want = irjit.load(GRAPH)
    want.run(*args)
    full = want.backward()
    fn = _functions()[how]
    for _ in range(3):  # (the profiling executor and the native runner specialize first)
        fn.run(*args, requires_grad=[False, True, True])
        got = fn.backward()
    assert sorted(got) == ["arg1", "arg2"]
    for name in got:
        np.testing.assert_allclose(got[name], full[name], rtol=1e-5, atol=1e-6)
    fn.run(*args)  # (all of them again)
    assert sorted(fn.backward()) == ["arg0", "arg1", "arg2"]


def test_a_tensor_flagged_false_is_detached():
    fn = irjit.load(GRAPH)
    x = Tensor(_inputs()[0], True)
    out, = fn.run(x, *_inputs()[1:], requires_grad=(False, True, False))
    assert out.requires_grad and x.requires_grad  # (the caller's tensor is left as it is)
    assert sorted(fn.backward()) == ["arg1"]


def test_flags_must_match_the_inputs():
    with pytest.raises(ValueError, match="2 flags for 3 inputs"):
        irjit.load(GRAPH).run(*_inputs(), requires_grad=[True, True])


TWICE = """graph(%x : Tensor, %h : Tensor, %w : Tensor, %b : Tensor):
  %one : int = prim::Constant[value=1]()
  %wt : Tensor = aten::t(%w)
  %y : Tensor = aten::matmul(%x, %wt)
  %z : Tensor = aten::add(%y, %b, %one)
  %s : Tensor = aten::add(%z, %h, %one)
  %r : Tensor = aten::tanh(%s)
  %t : (Tensor, Tensor) = prim::TupleConstruct(%r, %r)
  return (%t)
"""


def _twice(how: str, seed: int):
    """A Function of TWICE run by `how`, and inputs for it."""
    rng = np.random.default_rng(seed)
    args = [rng.standard_normal(s).astype(np.float32) for s in ((3, 4), (3, 4), (4, 4), (4,))]
    if how == "compile":
        return irjit.compile(TWICE, "Float(3, 4), Float(3, 4), Float(4, 4), Float(4)"), args
    return irjit.load(TWICE, executor=how), args


@pytest.mark.parametrize("how", ["interp", "profiling", "compile"])
@pytest.mark.parametrize("flags", [True, (False, True, True, False)])
def test_backward_of_a_one_node_tape_equals_the_walk(monkeypatch, how, flags):
    """`Function.backward()` of a one-node tape (`autograd`'s short path: shared read-only ones
    per output, twos for the output returned twice, gradients routed to the inputs' names)
    gives the general walk's gradients, as writeable arrays of the caller's."""
    from irjit.runtime import autograd, loader
    fn, args = _twice(how, seed=1)
    for _ in range(2):  # (specialized by now)
        fn.run(*args, requires_grad=flags)
        fn.backward()
    fn.run(*args, requires_grad=flags)
    of_sums, sums = autograd.backward_of_sums, []
    monkeypatch.setattr(loader, "backward_of_sums", lambda *a: sums.append(of_sums(*a)) or sums[-1])
    monkeypatch.setattr(fn, "_outputs_sums", None)
    got = fn.backward()
    # (backward of the same call again gives the same: through the plan of its outputs that
    # the call before made, which runs the same sums plan)
    again = fn.backward()
    assert (fn._outputs_sums is not None) == (flags is True and how != "interp")
    taken = []
    one_node = autograd._backward_one_node
    monkeypatch.setattr(loader, "backward_of_sums", lambda *a: None)
    monkeypatch.setattr(fn, "_outputs_sums", None)
    monkeypatch.setattr(autograd, "_backward_one_node", lambda *a: taken.append(one_node(*a)))
    walked = fn.backward()
    assert taken and sorted(got) == sorted(walked) == sorted(again)
    # (the call's own Tensors of every input: `backward_of_sums` is asked, and takes the tape
    # of one native group or DifferentiableGraph, not the interpreter's of several nodes)
    assert [s is not None for s in sums] == (
        [] if flags is not True else [False, False] if how == "interp" else [True])
    for name in got:
        np.testing.assert_array_equal(got[name], walked[name])
        np.testing.assert_array_equal(again[name], walked[name])
        assert got[name].flags.writeable and not np.shares_memory(got[name], again[name])
    want = irjit.load(TWICE)  # (the interpreter's tape, walked)
    want.run(*args, requires_grad=flags)
    for name, g in want.backward().items():
        np.testing.assert_allclose(got[name], g, rtol=1e-5, atol=1e-6)
    if how == "compile":  # (a native group's one node: the short path takes it)
        assert taken[0] is not None


@pytest.mark.parametrize("how", ["profiling", "compile"])
def test_backward_tries_the_roots_of_the_call_before_and_checks_them(how):
    """After a backward of a call's outputs' sums, the next backward finds the roots as that
    one did (`autograd.outputs_sums_plan`) and checks them: an output the caller stopped
    requiring grad is no root, and the general path gives what the walk does."""
    fn, args = _twice(how, seed=2)
    for _ in range(3):
        fn.run(*args)
        want = fn.backward()
    assert fn._outputs_sums is not None
    (y, y2), = fn.run(*args)
    np.testing.assert_array_equal(fn.backward()["arg0"], want["arg0"])
    y.requires_grad = False  # (both outputs are one Tensor: no root is left)
    got = fn.backward()
    assert all(not g.any() for g in got.values())
    (z, z2), = fn.run(*args)
    got = fn.backward()
    for name in want:
        np.testing.assert_array_equal(got[name], want[name])


def test_backward_names_an_input_that_turns_floating_point():
    """(the route of the calls before left that input unnamed)"""
    fn = irjit.load("""graph(%x : Tensor, %y : Tensor):
  %r : Tensor = aten::neg(%x)
  return (%r)
""")
    x = np.full((2, 3), 1.5, np.float32)
    for _ in range(2):
        fn.run(x, np.ones((2, 3), np.int64))
        assert sorted(fn.backward()) == ["arg0"]
    fn.run(x, np.ones((2, 3), np.float32))
    got = fn.backward()
    assert sorted(got) == ["arg0", "arg1"]
    np.testing.assert_array_equal(got["arg0"], -np.ones((2, 3), np.float32))
    np.testing.assert_array_equal(got["arg1"], np.zeros((2, 3), np.float32))


SEEDED = """graph(%x : Tensor, %a : Tensor, %b : Tensor):
  %one : int = prim::Constant[value=1]()
  %m : Tensor = aten::mul(%x, %a)
  %z : Tensor = aten::add(%m, %b, %one)
  %t : Tensor = aten::tanh(%z)
  %s : Tensor = aten::sigmoid(%x)
  %r : Tensor = aten::mul(%t, %s)
  %p : Tensor = aten::add(%x, %a, %one)
  return (%r, %p)
"""
_LARGE = 70000  # (past autograd.BROADCAST_SEED_SIZE: a broadcast seed)


def _seeded(how: str):
    rng = np.random.default_rng(3)
    args = [rng.standard_normal(_LARGE).astype(np.float32) for _ in range(3)]
    if how == "compile":
        return irjit.compile(SEEDED, ", ".join([f"Float({_LARGE})"] * 3)), args
    return irjit.load(SEEDED, executor="profiling", backend=how), args


@pytest.mark.parametrize("how", ["native", "interp", "compile"])
def test_a_broadcast_seed_gives_the_dense_seeds_gradients(how):
    """`Function.backward()` seeds a large output of a DifferentiableGraph or native group with
    one broadcast element: the gradients equal those of dense ones (to an ulp: df's
    specialization for the stride-0 vjp is code of its own), they are writeable arrays of
    their own (`%p`'s gradient w.r.t. `%a` is the seed itself: copied out), and the seed's
    one element is never written."""
    from irjit.runtime import autograd
    fn, args = _seeded(how)
    for _ in range(4):  # (specialized by now)
        fn.run(*args)
        got = fn.backward()
    dense = fn.backward([np.ones(_LARGE, np.float32)] * 2)
    assert sorted(got) == sorted(dense) == ["arg0", "arg1", "arg2"]
    one = autograd.broadcast_ones(args[0])
    for name, g in got.items():
        np.testing.assert_allclose(g, dense[name], rtol=1e-6, atol=1e-6)
        assert g.flags.writeable and g.flags.c_contiguous and not np.shares_memory(g, one)
        g += 1  # (the caller's to write)
    assert one.base.shape == () and one.base == 1 and not one.flags.writeable
    fn.run(*args)
    again = fn.backward()
    for name, g in again.items():
        np.testing.assert_allclose(g, dense[name], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("how", ["native", "compile"])
def test_df_specialized_for_a_stride_0_vjp_reads_its_one_element(monkeypatch, how):
    """Output gradients given as one element broadcast (stride 0, a buffer of four bytes)
    reach a native df specialized for that layout, which reads only that element: the
    gradients equal those of the dense array of the same value (an out-of-bounds read would
    not), with dense gradients and broadcast ones in turn."""
    from irjit.runtime import native
    keys = []
    specialize = native.NativeRunner._profile_and_specialize

    def spy(self, key, inputs, grad=False):
        keys.append(key)
        return specialize(self, key, inputs, grad)
    monkeypatch.setattr(native.NativeRunner, "_profile_and_specialize", spy)
    fn, args = _seeded(how)
    for _ in range(4):
        fn.run(*args, requires_grad=[True, True, False])
    broadcast = fn.backward([np.broadcast_to(np.float32(2.5), (_LARGE,))] * 2)
    dense = fn.backward([np.full(_LARGE, 2.5, np.float32)] * 2)
    broadcast_again = fn.backward([np.broadcast_to(np.float32(-0.5), (_LARGE,))] * 2)
    assert sorted(dense) == ["arg0", "arg1"]
    stride_0 = (np.dtype(np.float32), (_LARGE,), (0,))
    assert any(stride_0 in key for key in keys)  # (df specialized for it, natively)
    for name in dense:
        np.testing.assert_allclose(broadcast[name], dense[name], rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(broadcast_again[name], dense[name] * -0.2, rtol=1e-5, atol=1e-6)


PRODUCT = """graph(%x : Tensor, %w : Tensor, %b : Tensor):
  %one : int = prim::Constant[value=1]()
  %y : Tensor = aten::matmul(%x, %w)
  %z : Tensor = aten::add(%y, %b, %one)
  %r : Tensor = aten::tanh(%z)
  %q : Tensor = aten::mm(%x, %w)
  return (%q, %r)
"""


@pytest.mark.parametrize("how", ["native", "interp", "compile"])
def test_a_broadcast_seed_of_a_matrix_reaches_products(how):
    """A 400x200 seed (strides (0, 0)) read by df's products and sums: the gradients equal
    those of dense ones and of the dense array of the same value (to rounding: sums of 400
    products of another order)."""
    rng = np.random.default_rng(4)
    args = [rng.standard_normal(s).astype(np.float32) for s in ((400, 64), (64, 200), (200,))]
    fn = irjit.compile(PRODUCT, "Float(400, 64), Float(64, 200), Float(200)") if how == "compile" \
        else irjit.load(PRODUCT, executor="profiling", backend=how)
    for _ in range(4):
        fn.run(*args)
        got = fn.backward()
    dense = fn.backward([np.ones((400, 200), np.float32)] * 2)
    broadcast = fn.backward([np.broadcast_to(np.float32(2.5), (400, 200))] * 2)
    dense_value = fn.backward([np.full((400, 200), 2.5, np.float32)] * 2)
    for name in dense:
        np.testing.assert_allclose(got[name], dense[name], rtol=1e-5, atol=1e-4)  # (of ~150)
        np.testing.assert_allclose(broadcast[name], dense_value[name], rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("how", ["profiling", "compile"])
def test_a_training_calls_input_written_in_place_is_caught_at_each_backward(how):
    """The short backward (`autograd.backward_of_sums`) checks the version counters the call
    recorded, as the walk does: a Tensor of the call's written in place before backward makes
    it fail, again at a second backward; the next call is fine. (Native training programs
    record no versions when nothing can write their Tensors: see the next test; the general
    path, taken here, does.)"""
    from irjit.ops.errors import IRRuntimeError
    fn, args = _twice(how, seed=2)
    fn._train_arrays = None
    for _ in range(3):
        fn.run(*args)
        fn.backward()
    fn.run(*args)
    fn._calls.last[0][0].bump_version()  # (the call's Tensor of x, as an in-place op would)
    for _ in range(2):
        with pytest.raises(IRRuntimeError, match="modified by an in-place operation"):
            fn.backward()
    fn.run(*args)
    assert sorted(fn.backward()) == ["arg0", "arg1", "arg2", "arg3"]


def test_a_compiled_training_programs_node_records_no_versions_when_nothing_can_write():
    """`irjit.compile`'s training program: the call's Tensors are its own (copies, or arrays
    no backward reads) and every step is pure, so the node it records has no versions to
    check; its gradients are the general path's."""
    fn, args = _twice("compile", seed=3)
    ref, _ = _twice("compile", seed=3)
    ref._train_arrays = None
    for _ in range(3):  # (first calls specialize: they may run otherwise)
        for f in (fn, ref):
            f.run(*args)
            f.backward()
    out = fn.run(*args)
    leaves = [t for t in out if getattr(t, "grad_fn", None) is not None] or \
        [t for o in out for t in o if getattr(t, "grad_fn", None) is not None]
    assert leaves and leaves[0].grad_fn[0].versions == ()
    ref.run(*args)
    got, want = fn.backward(), ref.backward()
    assert sorted(got) == sorted(want)
    for name in got:
        np.testing.assert_array_equal(got[name], want[name])


def test_the_profiling_executor_runs_calls_without_grad_by_its_plans_array_program():
    """Once its plan is native, a call without grad of Tensors (requiring grad or not) or arrays
    runs the plan's array program: the general path's outputs, new Tensors that require no
    grad, counted as invocations, its graph the one last executed."""
    from irjit.ops.tensor import Tensor
    from irjit.runtime.executor.counters import COUNTERS, last_executed_optimized_graph
    fn, args = _twice("profiling", seed=3)
    slow, _ = _twice("profiling", seed=3)
    slow.executor.run_arrays = None  # (the general path: prepare_inputs, executor.run)
    for _ in range(3):  # (both specialized and native by now)
        fn.run(*args, requires_grad=False)
        slow.run(*args, requires_grad=False)
    taken = []
    run_arrays = fn.executor.run_arrays
    fn.executor.run_arrays = lambda *a: taken.append(run_arrays(*a)) or taken[-1]
    for inputs in (args, [Tensor(a) for a in args], [Tensor(a, True) for a in args]):
        before = COUNTERS.invocations
        got = fn.run(*inputs, requires_grad=False)
        assert COUNTERS.invocations == before + 1 and taken[-1] is got
        assert last_executed_optimized_graph() is fn.executor.last_graph
        want = slow.run(*inputs, requires_grad=False)
        for a, b in zip(got[0], want[0]):
            assert type(a) is Tensor and not a.requires_grad and a.grad_fn is None
            np.testing.assert_array_equal(a.data, b.data)
    assert len(taken) == 3
