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
    monkeypatch.setattr(autograd, "_only_node", lambda roots: None)
    walked = make()
    return got, walked


@pytest.mark.parametrize("case", ["repeated_root", "repeated_edge", "root_as_input", "unconnected"])
def test_one_node_tape_gives_the_walks_gradients(monkeypatch, case):
    x, y, z = _leaves()
    g = np.full((3, 4), 0.5, np.float32)

    def make():
        if case == "repeated_root":
            out = run_op("aten::mul", x, y)
            return backward([out, out], [g, 2 * g], inputs=[x, y])
        if case == "repeated_edge":
            out = run_op("aten::mul", x, x)
            return backward([out], [g], inputs=[x])
        if case == "root_as_input":
            out = run_op("aten::mul", x, y)
            return backward([out], [g], inputs=[out, y])
        out = run_op("aten::mul", x, y)
        return backward([out], [g], inputs=[x, z])
    got, walked = _both_paths(monkeypatch, make)
    assert [a is None for a in got] == [a is None for a in walked]
    for a, b in zip(got, walked):
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-6)
    if case == "repeated_root":
        np.testing.assert_allclose(got[0], 3 * g * y.data, rtol=1e-6)
    if case == "repeated_edge":
        np.testing.assert_allclose(got[0], 2 * g * x.data, rtol=1e-6)
    if case == "root_as_input":
        np.testing.assert_array_equal(got[0], g)
    if case == "unconnected":
        assert got[1] is None


def test_one_node_tape_refuses_an_input_written_in_place():
    x, y, _ = _leaves()
    out = run_op("aten::mul", x, y)
    y.bump_version()  # (as an in-place op on y would)
    assert autograd._only_node([out]) is not None
    with pytest.raises(IRRuntimeError, match="modified by an in-place operation"):
        backward([out], [np.ones((3, 4), np.float32)], inputs=[x])


def test_a_tape_of_two_nodes_takes_the_walk():
    x, y, _ = _leaves()
    out = run_op("aten::tanh", run_op("aten::mul", x, y))
    assert autograd._only_node([out]) is None
