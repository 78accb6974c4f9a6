"""The benchmark's real architectures (bench_models.py) as run fixtures: per network,
tests/fixtures/bench/arch/<name>/ with graph.ir (the inlined graph of the scripted module in
eval mode), params.npz (every attribute the graph reads), inputs.npz (arg0) and expected.npz
(torch eager's forward, out0).

    .venv-torch/bin/python -m irjit.tools.fixturegen.bench_archs --out tests/fixtures/bench/arch
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

import numpy as np
import torch

from .common import NORM_HOME, NORM_SITE, check_no_leaks, save_npz, seed_for, setup_torch, write_text
from .runcases import _getattr_leaves, _resolve

MODELS = Path(__file__).resolve().parent / "bench_models.py"
NORM_MODELS = f"{NORM_HOME}/bench_models.py"


def load_models():
    """bench_models.py as the top-level module `bench_models` (its classes print as
    `__torch__.bench_models.X`)."""
    spec = importlib.util.spec_from_file_location("bench_models", MODELS)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["bench_models"] = mod
    spec.loader.exec_module(mod)
    return mod


def build(name: str, models=None):
    """(eval-mode model with seeded weights and BatchNorm statistics, input) of `name`."""
    models = models or load_models()
    cls, shape = models.ARCHITECTURES[name]
    torch.manual_seed(seed_for(name))
    model = cls()
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):  # statistics as after training, not 0 and 1
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 1.5)
    return model.eval(), torch.randn(*shape)


def attribute_arrays(scripted, graph) -> dict:
    """Every tensor, bool, int or float attribute the graph reads from `self`, by dotted path."""
    arrays = {}
    for path, _ in _getattr_leaves(graph):
        value = _resolve(scripted, path)
        if isinstance(value, torch.Tensor):
            arrays[path] = value.detach().numpy().copy()
        elif isinstance(value, (bool, int, float)):
            arrays[path] = np.array(value)
    return arrays


def write_architecture(folder: Path, name: str, models) -> None:
    model, x = build(name, models)
    scripted = torch.jit.script(model)
    site = str(Path(torch.__file__).resolve().parents[1]) + "/"
    text = str(scripted.inlined_graph).replace(str(MODELS), NORM_MODELS).replace(site, NORM_SITE)
    check_no_leaks(text, str(folder))
    with torch.no_grad():
        out = model(x)
    folder.mkdir(parents=True, exist_ok=True)
    write_text(folder / "graph.ir", text)
    save_npz(folder / "params.npz", attribute_arrays(scripted, scripted.inlined_graph))
    save_npz(folder / "inputs.npz", {"arg0": x.numpy()})
    save_npz(folder / "expected.npz", {"out0": out.numpy()})


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, type=Path)
    args = ap.parse_args(argv)
    setup_torch()
    models = load_models()
    for name in models.ARCHITECTURES:
        write_architecture(args.out / name, name, models)
    return 0


if __name__ == "__main__":
    sys.exit(main())
