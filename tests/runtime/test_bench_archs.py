"""The benchmark's real architectures (tests/fixtures/bench/arch: ResNet-, MobileNet- and
ViT-style networks and a 2-layer LSTM, scripted by PyTorch 2.13 in eval mode) give torch's
forward outputs under the interpreter and with native units."""

from pathlib import Path

import numpy as np
import pytest

import irjit

ARCH = Path(__file__).resolve().parents[1] / "fixtures" / "bench" / "arch"
NAMES = sorted(p.name for p in ARCH.iterdir() if (p / "graph.ir").exists())


def _npz(path: Path) -> dict:
    with np.load(path) as f:
        return {k: f[k] for k in f.files}


def test_the_four_architectures_are_there():
    assert NAMES == ["lstm2", "mobilenet_dw", "resnet_blocks", "vit_encoder"]


@pytest.mark.parametrize("backend", ["interp", "native"])
@pytest.mark.parametrize("name", NAMES)
def test_forward_matches_torch(name, backend):
    folder = ARCH / name
    fn = irjit.load(folder / "graph.ir", params=_npz(folder / "params.npz"), executor="profiling",
                    backend=backend)
    x = _npz(folder / "inputs.npz")["arg0"]
    want = _npz(folder / "expected.npz")["out0"]
    for _ in range(3):  # the profiled call, then the specialized plan
        (out,) = fn.run(x, requires_grad=False)
        np.testing.assert_allclose(out.data, want, rtol=1e-4, atol=1e-5)
