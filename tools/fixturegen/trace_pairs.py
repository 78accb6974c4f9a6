"""Traced graphs from PyTorch 2.13 (dev-only: needs torch) for the models of trace_models.py:
for each case its `.graph` and `.inlined_graph` texts and the node kinds of the inlined graph
(what irjit's tracer must record, in order), plus the tracer warnings torch raised.

    .venv-torch/bin/python -m irjit.tools.fixturegen.trace_pairs --out tests/fixtures/trace
"""

from __future__ import annotations

import argparse
import json
import warnings
from pathlib import Path

import torch

from .trace_models import build


def _normalised(text: str) -> str:
    """Source paths as the other fixtures spell them (torch's site-packages, /home/user)."""
    site = str(Path(torch.__file__).parent.parent)
    here = str(Path(__file__).parent / "trace_models.py")
    return (text.replace(site, "/usr/local/lib/python3.11/site-packages")
            .replace(here, "/home/user/trace_models.py"))


def _kinds(graph) -> list[str]:
    return [n.kind() for n in graph.nodes()]


def trace_case(fn, shapes) -> dict:
    inputs = tuple(torch.randn(*s) for s in shapes)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        traced = torch.jit.trace(fn, inputs)
    is_module = isinstance(fn, torch.nn.Module)
    graph = traced.graph
    inlined = traced.inlined_graph if is_module else graph
    return {"module": is_module, "inputs": [list(s) for s in shapes],
            "graph": _normalised(str(graph)), "inlined_graph": _normalised(str(inlined)), "kinds": _kinds(inlined),
            "scopes": [n.scopeName() for n in inlined.nodes()],
            "warnings": sorted({type(w.message).__name__ for w in caught
                                if "Tracer" in type(w.message).__name__})}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", type=Path, required=True)
    out = ap.parse_args().out
    torch.manual_seed(0)
    torch.set_num_threads(1)
    cases = {name: trace_case(fn, shapes) for name, (fn, shapes) in build(torch).items()}
    out.mkdir(parents=True, exist_ok=True)
    (out / "traced.json").write_text(json.dumps(cases, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
