"""Runtime fixtures: graphs PyTorch 2.13 scripts, with inputs, parameters and what PyTorch's
profiling executor returns on its third run with gradients on (outputs and input gradients).

    .venv-torch/bin/python -m irjit.tools.fixturegen.runtime_cases --out tests/fixtures/runtime

Each case folder holds graph.ir (the inlined graph), inputs.npz (arg0, ...), params.npz and
expected.npz (out0, grad.arg0), in the formats of the run fixtures.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

import numpy as np
import torch

from .common import NORM_SITE, check_no_leaks, save_npz, setup_torch, write_text

HERE = Path(__file__).resolve().parent
MODELS = HERE / "runtime_models.py"
NORM_MODELS = "/home/user/runtime_models.py"


def _models():
    spec = importlib.util.spec_from_file_location("models", MODELS)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["models"] = mod
    spec.loader.exec_module(mod)
    return mod


def _normalize(text: str) -> str:
    site = str(Path(torch.__file__).resolve().parents[1]) + "/"
    return text.replace(str(MODELS), NORM_MODELS).replace(site, NORM_SITE)


def _cases(m):
    torch.manual_seed(0)
    x4 = torch.randn(1, 8, 5, 5)
    return {
        "cast_int_double": (torch.jit.script(m.fn_cast_int_double), [torch.randn(3, 4) * 3]),
        "append_in_loop": (torch.jit.script(m.AppendInLoop()), [x4, 3]),
        "split_transpose_convs": (torch.jit.script(m.SplitTransposeConvs()), [x4]),
        "extend_in_loop": (torch.jit.script(m.ExtendInLoop()), [torch.randn(2, 8, 3)]),
    }


def write_case(folder: Path, scripted, args) -> None:
    graph = scripted.inlined_graph if hasattr(scripted, "inlined_graph") else scripted.graph
    text = _normalize(str(graph))
    check_no_leaks(text, str(folder))
    inputs = [a.detach().clone().requires_grad_() if isinstance(a, torch.Tensor) else a
              for a in args]
    for _ in range(3):  # profile, specialize, run the optimized graph
        for a in inputs:
            if isinstance(a, torch.Tensor):
                a.grad = None
        out = scripted(*inputs)
        out.sum().backward()
    folder.mkdir(parents=True, exist_ok=True)
    write_text(folder / "graph.ir", text)
    save_npz(folder / "inputs.npz", {f"arg{i}": (a.detach().numpy() if isinstance(a, torch.Tensor)
                                                  else np.array(a)) for i, a in enumerate(inputs)})
    params = {k: v.detach().numpy() for k, v in getattr(scripted, "named_parameters", dict)()}
    if params:
        save_npz(folder / "params.npz", params)
    expected = {"out0": out.detach().numpy()}
    expected.update({f"grad.arg{i}": a.grad.numpy() for i, a in enumerate(inputs)
                     if isinstance(a, torch.Tensor)})
    save_npz(folder / "expected.npz", expected)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, type=Path)
    args = ap.parse_args(argv)
    setup_torch()
    for name, (scripted, inputs) in _cases(_models()).items():
        write_case(args.out / name, scripted, inputs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
