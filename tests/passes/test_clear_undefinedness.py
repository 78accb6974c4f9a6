"""clear_undefinedness: PyTorch's ClearUndefinedness, and the profiling executor's use of it."""

import numpy as np
import pytest

import irjit
from irjit.ops.tensor import Tensor

from . import run_text as run
from ..runtime.test_native_program import LINEAR_TANH


def test_a_graph_without_tensor_types_is_unchanged():
    g, changed = run("clear_undefinedness", "graph(%a : int, %b : Tensor):\n  return (%a, %b)\n")
    assert not changed


@pytest.mark.parametrize("backend", ["interp", "native"])
def test_a_profiling_executor_takes_another_batch_size_under_training(backend):
    """The backward graph of a DifferentiableGraph has inputs typed as the forward that made
    it saw them (x : Float(3, 4)); its executor clears those types before profiling, as
    PyTorch's does, so that no size is folded from them: calls of another batch size train
    (the sizes of `x` once became the constant [3, 4] and backward failed)."""
    fn = irjit.load(LINEAR_TANH, executor="profiling", backend=backend)
    ref = irjit.load(LINEAR_TANH)
    rng = np.random.default_rng(7)
    for batch in (3, 5, 3):
        args = [rng.standard_normal(s).astype(np.float32)
                for s in ((batch, 4), (batch, 4), (4, 4), (4,))]
        for _ in range(4):
            got = fn.run(*[Tensor(a) for a in args])
            g = fn.backward()
        want = ref.run(*[Tensor(a) for a in args])
        w = ref.backward()
        np.testing.assert_allclose(got[0][0].data, want[0][0].data, rtol=1e-5, atol=1e-6)
        for name in w:
            np.testing.assert_allclose(g[name], w[name], rtol=1e-4, atol=1e-5)
