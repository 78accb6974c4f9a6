"""`autograd.backward` of a one-node tape (what a graph run as one DifferentiableGraph or
native group records) takes a shorter path than the general walk: it must give the walk's
gradients, accumulate repeated roots and edges, hand back the gradient of a root asked for
as an input, and refuse a tensor written in place after it was recorded."""

import numpy as np
import pytest

from irjit.ops.errors import IRRuntimeError
from irjit.ops.tensor import Tensor
from irjit.runtime import autograd
from irjit.runtime.autograd import backward, run_op


def _leaves():
    rng = np.random.default_rng(0)
    return [Tensor(rng.standard_normal((3, 4)).astype(np.float32), True) for _ in range(3)]


def _both_paths(monkeypatch, make):
    """backward of the tape `make()` records, by the one-node path and by the general walk."""
    got = make()
    monkeypatch.setattr(autograd, "_backward_one_node", lambda *args: None)
    walked = make()
    return got, walked


@pytest.mark.parametrize("seeded", [False, True])
@pytest.mark.parametrize("case", ["repeated_root", "repeated_edge", "root_as_input", "unconnected",
                                  "input_given_twice"])
def test_one_node_tape_gives_the_walks_gradients(monkeypatch, case, seeded):
    """With given gradients, and with the seeds of the roots' sums (`grad_outputs` None: the
    short path's shared read-only ones, counted once per listing of a root)."""
    x, y, z = _leaves()
    g = np.full((3, 4), 0.5, np.float32)
    given = (lambda *gs: None) if seeded else (lambda *gs: list(gs))
    ones = np.ones((3, 4), np.float32)
    if seeded:
        g = ones

    def make():
        if case == "repeated_root":
            out = run_op("aten::mul", x, y)
            return backward([out, out], given(g, 2 * g), inputs=[x, y])
        if case == "repeated_edge":
            out = run_op("aten::mul", x, x)
            return backward([out], given(g), inputs=[x])
        if case == "root_as_input":
            out = run_op("aten::mul", x, y)
            return backward([out, out] if seeded else [out], given(g), inputs=[out, y])
        if case == "input_given_twice":  # (its gradient goes to its last position)
            out = run_op("aten::mul", x, y)
            return backward([out], given(g), inputs=[x, y, x])
        out = run_op("aten::mul", x, y)
        return backward([out], given(g), inputs=[x, z])
    got, walked = _both_paths(monkeypatch, make)
    assert [a is None for a in got] == [a is None for a in walked]
    for a, b in zip(got, walked):
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-6)
            assert a.flags.writeable  # (never a shared seed)
    if case == "repeated_root":
        np.testing.assert_allclose(got[0], (2 if seeded else 3) * g * y.data, rtol=1e-6)
    if case == "repeated_edge":
        np.testing.assert_allclose(got[0], 2 * g * x.data, rtol=1e-6)
    if case == "root_as_input":
        np.testing.assert_array_equal(got[0], 2 * g if seeded else g)
        if seeded:
            np.testing.assert_allclose(got[1], 2 * x.data, rtol=1e-6)
    if case == "unconnected":
        assert got[1] is None
    if case == "input_given_twice":
        assert got[0] is None and got[2] is not None
    if seeded:  # (the shared seeds are as they were)
        assert (autograd.shared_ones(ones) == 1).all() and (autograd.shared_ones(ones, 2) == 2).all()


def test_a_large_seed_is_broadcast_only_for_an_entry_that_takes_it():
    """The seeds of a one-node tape: one element broadcast (stride 0) for a large output of a
    node whose entry reads a seed as it is (`takes_broadcast_seed`), shared read-only ones
    otherwise; an output listed twice gets one seed of twos."""
    class Entry:
        takes_broadcast_seed = True
        schema = None

        def derivative(self, emitter, grads, inputs, outputs):
            seen.append(grads)
            return [np.zeros(3, np.float32)]
    seen = []
    x = Tensor(np.zeros(3, np.float32), True)
    big = Tensor(np.zeros(autograd.BROADCAST_SEED_SIZE + 1, np.float32), True)
    small = Tensor(np.zeros(3, np.float32), True)
    node = autograd.GradNode(Entry(), [], [big.data, small.data], [x])
    big.grad_fn, small.grad_fn = (node, 0), (node, 1)
    got = backward([big, small, big], inputs=[x])
    assert got[0].flags.writeable
    g_big, g_small = seen[-1]
    assert g_big.strides == (0,) and (g_big == 2).all() and not g_big.flags.writeable
    assert g_small is autograd.shared_ones(small.data) and not g_small.flags.writeable
    Entry.takes_broadcast_seed = False
    backward([big], inputs=[x])
    assert seen[-1][0].strides == (4,) and (seen[-1][0] == 1).all()


def test_one_node_tape_refuses_an_input_written_in_place():
    x, y, _ = _leaves()
    out = run_op("aten::mul", x, y)
    y.bump_version()  # (as an in-place op on y would)
    with pytest.raises(IRRuntimeError, match="modified by an in-place operation"):
        backward([out], [np.ones((3, 4), np.float32)], inputs=[x])


def test_a_tape_of_two_nodes_takes_the_walk():
    x, y, _ = _leaves()
    out = run_op("aten::tanh", run_op("aten::mul", x, y))
    assert autograd._backward_one_node([out], None, [x, y]) is None


# ---- the general walk with views' window entries (x[i] in a loop)

def _select(x: Tensor, i: int, own_version: bool = False) -> Tensor:
    """`x[i]` on the tape as a native view group records it: a WindowEntry node whose edge is x
    (the view shares x's version, unless `own_version`)."""
    from irjit.runtime.native_group_ops import _Schema, _WindowBackward
    data = x.data[i]
    entry = _WindowBackward(_Schema("aten::select"), x.data, [(data.shape, data.strides, i * x.data.strides[0])])
    node = autograd.GradNode(entry, [], [data], [x], "aten::select", [(x, x._version[0])])
    view = Tensor(data, True, (node, 0), None if own_version else x._version)
    view._base = x
    return view


def _rnn_like(x: Tensor, w: Tensor, h: Tensor, steps: int) -> Tensor:
    for i in range(steps):
        h = run_op("aten::tanh", run_op("aten::add", run_op("aten::matmul", _select(x, i), w),
                                        run_op("aten::matmul", h, w)))
    return h


def test_views_of_one_base_add_into_its_gradient():
    """A loop over x[i] (each view used once) and a weight used twice a step: the gradients
    are those of the same graph without views (x's rows as leaves of their own)."""
    rng = np.random.default_rng(1)
    x = Tensor(rng.standard_normal((4, 3, 5)).astype(np.float64), True)
    w = Tensor(rng.standard_normal((5, 5)).astype(np.float64) * 0.3, True)
    h = Tensor(rng.standard_normal((3, 5)).astype(np.float64), True)
    out = _rnn_like(x, w, h, 4)
    g = rng.standard_normal((3, 5))
    dx, dw, dh = backward([out], [g], inputs=[x, w, h])
    rows = [Tensor(x.data[i].copy(), True) for i in range(4)]
    h2 = h
    for i in range(4):
        h2 = run_op("aten::tanh", run_op("aten::add", run_op("aten::matmul", rows[i], w),
                                         run_op("aten::matmul", h2, w)))
    *drows, dw2, dh2 = backward([h2], [g], inputs=rows + [w, h])
    np.testing.assert_allclose(dx, np.stack(drows), rtol=1e-12)
    np.testing.assert_allclose(dw, dw2, rtol=1e-12)
    np.testing.assert_allclose(dh, dh2, rtol=1e-12)


def test_a_view_used_twice_sums_its_gradients_first():
    rng = np.random.default_rng(2)
    x = Tensor(rng.standard_normal((2, 4)).astype(np.float32), True)
    v = _select(x, 1)
    out = run_op("aten::add", run_op("aten::mul", v, v), run_op("aten::sin", v))
    (dx,) = backward([out], [np.ones(4, np.float32)], inputs=[x])
    np.testing.assert_allclose(dx[1], 2 * x.data[1] + np.cos(x.data[1]), rtol=1e-6)
    np.testing.assert_array_equal(dx[0], 0)


def test_a_view_of_a_computed_base_reaches_the_base_inputs():
    """The base's own node runs after every view's gradient was added into it."""
    rng = np.random.default_rng(3)
    a, b = (Tensor(rng.standard_normal((3, 4)).astype(np.float64), True) for _ in range(2))
    base = run_op("aten::mul", a, b)
    out = run_op("aten::add", run_op("aten::exp", _select(base, 0)), run_op("aten::sin", _select(base, 2)))
    da, db = backward([out], [np.ones(4)], inputs=[a, b])
    gbase = np.zeros((3, 4))
    gbase[0], gbase[2] = np.exp(base.data[0]), np.cos(base.data[2])
    np.testing.assert_allclose(da, gbase * b.data, rtol=1e-12)
    np.testing.assert_allclose(db, gbase * a.data, rtol=1e-12)


def test_a_view_whose_base_was_written_in_place_still_refuses():
    """The view's node checks its base's version (its consumer checks only the view's, a
    version box of its own here)."""
    x, y, _ = _leaves()
    out = run_op("aten::mul", _select(x, 1, own_version=True), Tensor(y.data[1], True))
    x.bump_version()  # (as an in-place op on x would)
    with pytest.raises(IRRuntimeError, match="modified by an in-place operation"):
        backward([out], [np.ones(4, np.float32)], inputs=[x])


# ---- backward_of_sums: a training call's one-node tape whose edges are the call's own inputs

class _Product:
    """A tape entry as a DifferentiableGraph's: it keeps `one_node` plans; d(x*y) per edge."""
    takes_broadcast_seed = True
    schema = type("S", (), {"name": "prim::DifferentiableGraph", "full_name": "prim::DifferentiableGraph"})

    def __init__(self):
        self.one_node: dict = {}
        self.seen: list = []

    def derivative(self, emitter, grads, inputs, outputs):
        self.seen.append(grads)
        x, y = inputs
        return [grads[0] * x, grads[0] * y]  # (for the edges y, x)


def _recorded(entry: "_Product", x: Tensor, y: Tensor) -> Tensor:
    node = autograd.GradNode(entry, [x.data, y.data], [x.data * y.data], [y, x])  # (edges: y, x)
    return Tensor(node.outputs[0], True, (node, 0))


def test_backward_of_sums_gives_the_walks_gradients_bitwise_and_keeps_its_plan():
    """The seeds (twos for a root listed twice) and the edges' positions are made once and kept
    on the entry (read-only seeds); later calls, and a call of other inputs, give what
    `backward` gives, bitwise."""
    x, y, _ = _leaves()
    entry = _Product()
    for _ in range(2):
        out = _recorded(entry, x, y)
        got = autograd.backward_of_sums([out, out], [x, y])
        want = backward([out, out], inputs=[x, y])
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)
            assert a.flags.writeable
    seeds = entry.one_node[(0, 0)].__globals__["SEEDS"]
    assert "inputs[1] is not e0" in entry.one_node[(0, 0)].source and entry.seen[0][0] is seeds[0] is entry.seen[-1][0]
    assert (seeds[0] == 2).all() and not seeds[0].flags.writeable
    x2, y2, _ = _leaves()  # (other tensors, other positions: found again)
    out = _recorded(entry, x2, y2)
    got = autograd.backward_of_sums([out], [y2, x2])
    np.testing.assert_array_equal(got[0], x2.data)
    np.testing.assert_array_equal(got[1], y2.data)
    assert "inputs[0] is not e0" in entry.one_node[0].source


class _SeedOrNothing(_Product):
    """A tape entry whose formula passes the seed through to edge y and gives edge x none."""

    def derivative(self, emitter, grads, inputs, outputs):
        return [grads[0], None]


def test_outputs_sums_plan_names_the_gradients_fills_zeros_and_copies_seeds():
    """The plan of a call's outputs (the node's sums plan inlined) gives the gradients by the
    inputs' names: zeros of its input's layout for a missing one, a writeable copy of a seed
    passed through; None for outputs of another form or edges elsewhere."""
    x, y, _ = _leaves()
    entry = _SeedOrNothing()
    out = _recorded(entry, x, y)
    assert autograd.backward_of_sums([out, out], [x, y]) is not None  # (keeps the node's plan)
    plan = autograd.outputs_sums_plan([(out, out)], [out, out], ("x", "y"))
    for _ in range(2):
        again = _recorded(entry, x, y)
        got = plan([(again, again)], [x, y])
        assert list(got) == ["x", "y"]
        np.testing.assert_array_equal(got["x"], np.zeros((3, 4), np.float32))
        np.testing.assert_array_equal(got["y"], np.full((3, 4), 2, np.float32))
        assert got["x"].dtype == got["y"].dtype == np.float32
        assert got["x"].flags.writeable and got["y"].flags.writeable
    assert plan([again], [x, y]) is None
    assert plan([(again, again)], [y, x]) is None
    assert plan([(_recorded(_Product(), x, y),) * 2], [x, y]) is None  # (another entry's node)


def test_backward_of_sums_refuses_other_tapes_and_in_place_writes():
    """None when an input is no edge, an edge is not an input, or a root comes from another
    node (then `backward`); an edge written in place after the call raises as the walk does,
    and so it does again at a second backward."""
    x, y, z = _leaves()
    entry = _Product()
    out = _recorded(entry, x, y)
    assert autograd.backward_of_sums([out], [x, y, z]) is None
    assert autograd.backward_of_sums([out], [x]) is None
    other = _recorded(_Product(), x, y)
    assert autograd.backward_of_sums([out, other], [x, y]) is None
    assert autograd.backward_of_sums([run_op("aten::mul", x, y)], [x, y]) is None  # (no plans)
    x.bump_version()  # (as an in-place op on x would)
    for _ in range(2):
        with pytest.raises(IRRuntimeError, match="modified by an in-place operation"):
            autograd.backward_of_sums([out], [x, y])
