"""Every executor gives the interpreter's outputs and gradients on every runnable fixture;
with inputs that require grad this runs the autodiff-optimized graphs (DifferentiableGraph
forward through `f`, backward through `df`)."""

import numpy as np
import pytest

import irjit
from irjit.runtime.values import flatten_value, to_numpy

from tests.runtime.test_run_fixtures import _cases, _load_npz

EXECUTORS = ["legacy", "profiling"]


def _run(case, kind, runs):
    inputs = _load_npz(case / "inputs.npz")
    fn = irjit.load(case / "graph.ir", params=_load_npz(case / "params.npz") or None,
                      constants=_load_npz(case / "constants.npz") or None, executor=kind)
    args = [inputs[f"arg{i}"] for i in range(len(inputs))]
    for _ in range(runs):  # profiling executors specialize after their profiled runs
        irjit.manual_seed(0)
        outs = fn.run(*args)
    grads = fn.backward() if any(isinstance(x, irjit.Tensor) and x.requires_grad
                                 for _, x in flatten_value(tuple(outs))) else {}
    return [to_numpy(v) for _, v in flatten_value(tuple(outs))], grads


@pytest.mark.parametrize("kind", EXECUTORS)
@pytest.mark.parametrize("case,meta", _cases())
def test_executor_matches_interpreter(case, meta, kind):
    tol = meta["tolerance"]
    want_outs, want_grads = _run(case, "interp", 1)
    got_outs, got_grads = _run(case, kind, 3)
    assert len(got_outs) == len(want_outs)
    for i, (g, w) in enumerate(zip(got_outs, want_outs)):
        assert g.shape == w.shape, f"out{i}"
        if w.dtype.kind in "fc":
            np.testing.assert_allclose(g, w, rtol=tol["rtol"], atol=tol["atol"], err_msg=f"out{i}")
        else:
            np.testing.assert_array_equal(g, w, err_msg=f"out{i}")
    for name, w in want_grads.items():
        np.testing.assert_allclose(got_grads[name], w, rtol=tol["grad_rtol"], atol=tol["grad_atol"],
                                   err_msg=f"grad.{name}")
