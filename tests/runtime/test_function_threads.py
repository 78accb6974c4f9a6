"""One `Function` shared between threads: each thread's backward() belongs to its own call."""

import threading
from pathlib import Path

import numpy as np
import pytest

import irjit

from .threads import run_concurrently

CASE = Path(__file__).resolve().parents[1] / "fixtures" / "run" / "conv_relu_script"


@pytest.mark.parametrize("executor", ["interp", "legacy", "profiling"])
def test_threads_sharing_a_function_get_their_own_outputs_and_gradients(executor):
    params = dict(np.load(CASE / "params.npz"))
    shared = irjit.load(CASE / "graph.ir", params=params, executor=executor)
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((1, 3, 8, 8)).astype(np.float32) for _ in range(6)]
    want = []
    for x in xs:
        alone = irjit.load(CASE / "graph.ir", params=params)
        out = alone(x)
        want.append((out, alone.backward()))
    got: dict = {}

    def work(i):
        for _ in range(3):
            out = shared(xs[i])
            grads = shared.backward()
        got[i] = (out, grads)

    run_concurrently(work, len(xs))
    for i, (out, grads) in enumerate(want):
        np.testing.assert_allclose(got[i][0], out, rtol=1e-5, atol=1e-6)
        for k in ("arg0", "conv.weight", "conv.bias"):
            np.testing.assert_allclose(got[i][1][k], grads[k], rtol=1e-4, atol=1e-5)


def test_backward_in_a_thread_that_made_no_call_is_an_error():
    fn = irjit.load(CASE / "graph.ir", params=str(CASE / "params.npz"))
    fn(np.zeros((1, 3, 8, 8), np.float32))
    errors = []
    t = threading.Thread(target=lambda: errors.append(pytest.raises(RuntimeError, fn.backward)))
    t.start()
    t.join()
    assert "in this thread" in str(errors[0].value)


def test_a_call_in_another_thread_does_not_change_this_threads_backward():
    """Thread A calls, thread B calls, then A asks for gradients: A's, not B's."""
    params = dict(np.load(CASE / "params.npz"))
    fn = irjit.load(CASE / "graph.ir", params=params)
    xa = np.full((1, 3, 8, 8), 0.5, np.float32)
    xb = np.full((1, 3, 8, 8), -2.0, np.float32)
    alone = irjit.load(CASE / "graph.ir", params=params)
    alone(xa)
    want = alone.backward()["arg0"]
    fn(xa)
    t = threading.Thread(target=fn, args=(xb,))
    t.start()
    t.join()
    np.testing.assert_allclose(fn.backward()["arg0"], want, rtol=1e-5)
