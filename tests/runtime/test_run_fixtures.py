"""Every runnable fixture (PyTorch 2.13's outputs and gradients) is reproduced by the interpreter."""

import json
from pathlib import Path

import numpy as np
import pytest

import irjit
from irjit.runtime.values import flatten_value, to_numpy

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
ROOTS = [FIXTURES / "run", FIXTURES / "generated" / "run"]


def _cases():
    cases = []
    for root in ROOTS:
        manifest = root / "manifest.json"
        if not manifest.exists():
            continue
        for name, meta in sorted(json.loads(manifest.read_text()).items()):
            if (root / name / "graph.ir").exists():
                cases.append(pytest.param(root / name, meta, id=f"{root.parent.name}/{name}"))
    return cases


def _load_npz(path: Path) -> dict:
    if not path.exists():
        return {}
    with np.load(path, allow_pickle=False) as f:
        return {k: f[k] for k in f.files}


def load_case(case: Path):
    inputs = _load_npz(case / "inputs.npz")
    fn = irjit.load(case / "graph.ir", params=_load_npz(case / "params.npz") or None,
                      constants=_load_npz(case / "constants.npz") or None)
    args = [inputs[f"arg{i}"] for i in range(len(inputs))]
    return fn, args


@pytest.mark.parametrize("case,meta", _cases())
def test_outputs_and_gradients_match_pytorch(case, meta):
    expected = _load_npz(case / "expected.npz")
    tol = meta["tolerance"]
    fn, args = load_case(case)
    irjit.manual_seed(0)
    outs = fn.run(*args)
    leaves = flatten_value(tuple(outs))
    out_keys = sorted((k for k in expected if k.startswith("out")), key=lambda k: int(k[3:]))
    assert len(leaves) == len(out_keys), f"{len(leaves)} outputs, expected {len(out_keys)}"
    for key, (path, value) in zip(out_keys, leaves):
        got, want = to_numpy(value), expected[key]
        assert got.shape == want.shape, f"{key} {path}: shape {got.shape} != {want.shape}"
        if want.dtype.kind in "fc":
            np.testing.assert_allclose(got, want, rtol=tol["rtol"], atol=tol["atol"], err_msg=key)
        else:
            np.testing.assert_array_equal(got, want, err_msg=key)
    if meta.get("gradients", {}).get("computed"):
        grads = fn.backward()
        for key in meta["gradients"]["keys"]:
            name = key[len("grad."):]
            assert name in grads, f"no gradient for {name}; have {sorted(grads)}"
            np.testing.assert_allclose(grads[name], expected[key], rtol=tol["grad_rtol"],
                                       atol=tol["grad_atol"], err_msg=key)
