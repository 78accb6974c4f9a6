"""Every differentiable op in the registry passes gradcheck on the samples its family provides."""

import importlib
import pkgutil
from pathlib import Path

import pytest

import irjit.ops  # noqa: F401  (registers every op)
from irjit.ops.registry import all_entries

from tests.runtime.gradcheck import gradcheck

_HERE = Path(__file__).parent


def _collect_samples() -> dict:
    samples = {}
    for info in pkgutil.iter_modules([str(_HERE)]):
        if info.name.startswith("samples_"):
            mod = importlib.import_module(f"{__package__}.{info.name}")
            for name, cases in mod.SAMPLES.items():
                assert name not in samples, f"{name} has samples in two modules"
                samples[name] = cases
    return samples


SAMPLES = _collect_samples()
# In-place variants share their formula with the out-of-place op; they are checked through it.
DIFFERENTIABLE = sorted(e.schema.full_name for e in all_entries()
                        if e.derivative is not None and not e.schema.is_inplace)


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_every_differentiable_op_has_samples(name):
    assert SAMPLES.get(name), f"no gradcheck samples for {name}"


@pytest.mark.parametrize("name,k", [(n, k) for n in sorted(SAMPLES) for k in range(len(SAMPLES[n]))])
def test_gradcheck(name, k):
    gradcheck(name, SAMPLES[name][k])
