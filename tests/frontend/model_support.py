"""Shared by the model tests: the models of tools/fixturegen/model_cases.py built with
PyTorch's weights from tests/fixtures/models (written by model_pairs.py), and graph texts
compared modulo value names, source comments and mangling numbers."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
import warnings
from pathlib import Path

import numpy as np

import irjit

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "models"


def load_models():
    """model_cases.py as the top-level module `model_cases`, as the fixture generator loads it."""
    if "model_cases" in sys.modules:
        return sys.modules["model_cases"]
    spec = importlib.util.spec_from_file_location("model_cases", ROOT / "tools" / "fixturegen" / "model_cases.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["model_cases"] = mod
    spec.loader.exec_module(mod)
    return mod


MODELS = load_models().MODELS
NAMES = [cls.__name__ for cls, _ in MODELS]


class Case:
    """One model with PyTorch's weights, inputs and expected results."""

    def __init__(self, name: str):
        self.name = name
        self.folder = FIXTURES / name
        self.meta = json.loads((self.folder / "meta.json").read_text())
        with np.load(self.folder / "run.npz") as npz:
            self.arrays = {k: npz[k] for k in npz.files}
        self.cls = dict((c.__name__, c) for c, _ in MODELS)[name]

    def text(self, what: str) -> str:
        return (self.folder / what).read_text()

    def model(self):
        m = self.cls()
        if self.meta["eval"]:
            m.eval()
        m.load_state_dict({k[len("state."):]: v for k, v in self.arrays.items()
                           if k.startswith("state.")})
        return m

    def inputs(self, requires_grad: bool = False) -> tuple:
        n = len(self.meta["inputs"])
        return tuple(irjit.tensor(self.arrays[f"input.{i}"],
                                  requires_grad=requires_grad and self.arrays[f"input.{i}"].dtype.kind == "f")
                     for i in range(n))

    def traced(self, model=None):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", irjit.jit.TracerWarning)
            return irjit.jit.trace(self.model() if model is None else model, self.inputs())


def canonical_graph(text: str) -> str:
    """A printed graph without source comments, `___torch_mangle_N.` parts and value names
    (numbered in order of appearance)."""
    text = re.sub(r" # [^\n]*", "", text)
    text = re.sub(r"___torch_mangle_\d+\.", "", text)
    names: dict[str, str] = {}
    return re.sub(r"%([A-Za-z0-9_.]+)",
                  lambda m: "%" + names.setdefault(m.group(1), f"v{len(names)}"), text)
