"""PyTorch 2.13's side of the models in model_cases.py (a dev-only tool; irjit never imports
torch): for each model, what `torch.jit.trace` and `torch.jit.script` make of it and what it
computes eagerly.

    IRJIT_CASES_TORCH=1 .venv-torch/bin/python tools/fixturegen/model_pairs.py tests/fixtures/models

writes `<out>/<Model>/`:
- `trace.graph.ir`, `trace.inlined.ir`, `trace.code`: the traced module's `.graph`,
  `.inlined_graph` and `.code`;
- `script.graph.ir`, `script.inlined.ir`, `script.code`: the same for the scripted module;
- `meta.json`: the traced graphs' node kinds (inlined: every node recursively) and scopes, the
  tracer warnings, and the `.code` of each submodule the trace called;
- `run.npz`: the state dict (`state.<name>`), the example inputs (`input.<i>`), the eager outputs
  (`output.<i>`) and the gradients of the sum of all floating-point outputs' sums with respect to
  the floating-point inputs (`grad.input.<i>`) and the parameters (`grad.state.<name>`).
Source paths are normalised to `/home/user/model_cases.py` and
`/usr/local/lib/python3.11/site-packages/` as in every other fixture.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
CASES_PATH = HERE / "model_cases.py"
NORM_PATH = "/home/user/model_cases.py"
NORM_SITE = "/usr/local/lib/python3.11/site-packages/"  # as tools/fixturegen/common.py writes it


def load_cases():
    """model_cases.py imported as the top-level module `model_cases` (so classes print as
    `__torch__.model_cases.MyCell` in both frameworks)."""
    spec = importlib.util.spec_from_file_location("model_cases", CASES_PATH)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["model_cases"] = mod
    spec.loader.exec_module(mod)
    return mod


def example_inputs(specs, seed: int) -> list[np.ndarray]:
    """The example inputs of a model as arrays (shared with the tests' reading of run.npz)."""
    rng = np.random.default_rng(seed)
    out = []
    for s in specs:
        if isinstance(s[0], str):
            _, shape, high = s
            out.append(rng.integers(0, high, size=shape).astype(np.int64))
        else:
            out.append(rng.standard_normal(s).astype(np.float32))
    return out


def _flat(out) -> list:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def main(out: Path) -> None:
    import torch
    assert os.environ.get("IRJIT_CASES_TORCH"), "set IRJIT_CASES_TORCH=1"
    torch.set_num_threads(1)
    cases = load_cases()
    site = os.path.dirname(os.path.dirname(os.path.abspath(torch.__file__))) + "/"

    def normalized(text: str) -> str:
        return text.replace(str(CASES_PATH), NORM_PATH).replace(site, NORM_SITE)

    if out.exists():
        shutil.rmtree(out)
    for index, (cls, specs) in enumerate(cases.MODELS):
        torch.manual_seed(index)
        model = cls()
        if cls in cases.EVAL:
            model.eval()
        arrays = example_inputs(specs, index)
        inputs = tuple(torch.from_numpy(a.copy()) for a in arrays)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            traced = torch.jit.trace(model, inputs)
        scripted = torch.jit.script(model)
        folder = out / cls.__name__
        folder.mkdir(parents=True)
        for prefix, m in (("trace", traced), ("script", scripted)):
            (folder / f"{prefix}.graph.ir").write_text(normalized(str(m.graph)))
            (folder / f"{prefix}.inlined.ir").write_text(normalized(str(m.inlined_graph)))
            (folder / f"{prefix}.code").write_text(m.code)
        submodule_code = {}
        for name, sub in traced.named_modules():
            if name and hasattr(sub, "forward") and "forward" in sub._c._method_names():
                submodule_code[name] = sub.code
        meta = {
            "inputs": [list(s) if not isinstance(s[0], str) else [s[0], list(s[1]), s[2]]
                       for s in specs],
            "eval": cls in cases.EVAL,
            "trace_kinds": [n.kind() for n in traced.graph.nodes()],
            "trace_inlined_kinds": [n.kind() for n in traced.inlined_graph.nodes()],
            "trace_inlined_scopes": [n.scopeName() for n in traced.inlined_graph.nodes()],
            "trace_warnings": sorted({type(w.message).__name__ for w in caught
                                      if "Tracer" in type(w.message).__name__}),
            "trace_submodule_code": submodule_code,
        }
        (folder / "meta.json").write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")

        state = {k: v.detach().clone() for k, v in model.state_dict().items()}
        grad_inputs = [torch.from_numpy(a.copy()).requires_grad_(a.dtype == np.float32)
                       for a in arrays]
        model.zero_grad()
        outs = _flat(model(*grad_inputs))
        loss = sum(o.sum() for o in outs if o.is_floating_point())
        loss.backward()
        arrays_out = {f"state.{k}": v.numpy() for k, v in state.items()}
        arrays_out.update({f"input.{i}": a for i, a in enumerate(arrays)})
        arrays_out.update({f"output.{i}": o.detach().numpy() for i, o in enumerate(outs)})
        arrays_out.update({f"grad.input.{i}": t.grad.numpy() for i, t in enumerate(grad_inputs)
                           if t.grad is not None})
        arrays_out.update({f"grad.state.{k}": p.grad.numpy()
                           for k, p in model.named_parameters() if p.grad is not None})
        for m in (traced, scripted):  # torch's own traced and scripted modules agree
            for o, e in zip(_flat(m(*inputs)), outs):
                np.testing.assert_allclose(o.detach().numpy(), e.detach().numpy(), rtol=1e-5,
                                           atol=1e-6)
        np.savez(folder / "run.npz", **arrays_out)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
