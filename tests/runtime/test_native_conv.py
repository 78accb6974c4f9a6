"""The convolution and pooling fixtures forward and backward under both executors with native
units: outputs and gradients equal the interpreter's, and no convolution, pooling or
index_select node nor any of their backwards is left to the interpreter (scripted, traced and
frozen graphs; 1-D, transposed, strided, dilated, grouped and depthwise convolutions; a module
whose conv has no bias)."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

import irjit
from irjit.runtime.values import flatten_value, to_numpy

from .native_coverage import measured
from .test_run_fixtures import _cases, _load_npz

FIXTURES = ["conv1d_script", "conv_bn_pool_frozen", "conv_bn_pool_script", "conv_bn_pool_trace",
            "conv_f_fn_script", "conv_f_fn_trace", "conv_relu_frozen", "conv_relu_script",
            "conv_transpose_script", "conv_variants_frozen", "conv_variants_script",
            "gather_index_script", "pooling_script", "small_cnn_frozen", "small_cnn_script",
            "small_cnn_train_script"]
CASES = {p.id.split("/")[-1]: p.values for p in _cases() if p.id.startswith("generated/")}
COVERED = ("conv", "_convolution", "pool", "index_select")  # substrings of the kinds this pins


def _run(case, executor, monkeypatch=None):
    """Outputs and gradients of a fourth call, and with `monkeypatch` that call's Coverage."""
    inputs = _load_npz(case / "inputs.npz")
    fn = irjit.load(case / "graph.ir", params=_load_npz(case / "params.npz") or None,
                    constants=_load_npz(case / "constants.npz") or None, executor=executor)
    args = [inputs[f"arg{i}"] for i in range(len(inputs))]
    cov = None
    for call in range(4):
        with contextlib.ExitStack() as stack:
            if call == 3 and monkeypatch is not None:
                cov = stack.enter_context(measured(monkeypatch))
            irjit.manual_seed(0)
            outs = fn.run(*args)
            grads = fn.backward() if any(isinstance(x, irjit.Tensor) and x.requires_grad
                                         for _, x in flatten_value(tuple(outs))) else {}
    return [to_numpy(v) for _, v in flatten_value(tuple(outs))], grads, cov


@pytest.mark.parametrize("executor", ["profiling", "legacy"])
@pytest.mark.parametrize("name", FIXTURES)
def test_conv_and_pooling_fixtures_run_natively_with_the_interpreters_results(name, executor,
                                                                               monkeypatch):
    case, meta = CASES[name]
    tol = meta["tolerance"]
    want_outs, want_grads, _ = _run(case, "interp")
    got_outs, got_grads, cov = _run(case, executor, monkeypatch)
    monkeypatch.undo()
    for g, w in zip(got_outs, want_outs):
        np.testing.assert_allclose(g, w, rtol=tol["rtol"], atol=tol["atol"])
    assert sorted(got_grads) == sorted(want_grads)
    for key, w in want_grads.items():
        np.testing.assert_allclose(got_grads[key], w, rtol=tol["grad_rtol"], atol=tol["grad_atol"])
    left = {k: n for k, n in cov.interpreted.items() if any(s in k for s in COVERED)}
    assert left == {}, f"{name} ({executor}): still interpreted {left}"
    assert sum(cov.native.values()) > 0
