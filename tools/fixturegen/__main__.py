"""Generate TorchScript IR fixtures with PyTorch 2.13 (a dev-only tool: irjit itself never
imports torch).

What it writes (the formats of ``shared/fixtures``, see its README.md):

* ``<out>/roundtrip/NNNN_<name>.ir`` + ``manifest.json``: graph texts exactly as
  ``str(graph)`` prints them (scripted / traced / frozen modules and functions, inlined
  graphs, ``scope:`` annotations, profiling- and legacy-executor outputs, fuser groups,
  ``_jit_differentiate`` forward/backward graphs, ``torch._C.parse_ir`` reprints), with
  byte-identical duplicates dropped;
* ``<out>/autodiff/<case>/``: input / f / df graphs and gradient.json of the
  ``_jit_differentiate`` cases;
* ``<out>/run/<case>/`` + ``run/manifest.json``: runnable cases (graph.ir, inputs.npz,
  params.npz, constants.npz, expected.npz);
* ``<out>/passes_frozen/``: before/after pairs of PyTorch's passes on frozen and inference
  graphs (``pass_pairs_frozen.py``, committed as ``tests/fixtures/passes_frozen``), with the
  frozen graphs' tensor constants as npz;
* ``<out>/printed_tensors/``: tensor constants as at::Tensor's printout shows them, with their
  exact values (``printed_tensors.py``);
* ``<out>/symbolic_script/``: ``_jit_differentiate`` of one op per function of symbolic_script
  (``symbolic_script_cases.py``, committed as ``tests/fixtures/autodiff/symbolic_script``);
* ``<out>/summary.json``: counts and the cases torch itself failed on (skipped).

Source paths in ``# file:line:col`` comments are normalised (torch ->
``/usr/local/lib/python3.11/site-packages/...``, the zoo in ``models.py`` ->
``/home/user/models.py``).  Generation is deterministic (fixed seeds, one thread,
JIT state reset between cases, each section in a fresh interpreter) and idempotent: the
selected output folders are wiped and rewritten.

Run it with a dev venv that has torch 2.13.0 (never a project dependency)::

    python3 -m venv .venv-torch
    .venv-torch/bin/pip install torch==2.13.0 numpy
    .venv-torch/bin/python -m irjit.tools.fixturegen --out tests/fixtures/generated
    .venv-torch/bin/python -m irjit.tools.fixturegen --out tests/fixtures/generated --only run
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

SECTIONS = ("roundtrip", "run", "pass_pairs_frozen", "printed_tensors", "symbolic_script")

README = """# Generated IR fixtures

Written by `tools/fixturegen` (PyTorch 2.13.0, CPU) - do not edit by hand. Regenerate from the
repository root with a dev venv holding torch 2.13.0 (never a project dependency):

    .venv-torch/bin/python -m irjit.tools.fixturegen --out tests/fixtures/generated [--only roundtrip|run]
    python -m irjit.tools.fixturegen.verify tests/fixtures/generated   # numpy-only sanity checks

Formats are those of `shared/fixtures` (see its README.md); source paths are normalised the same way
(`/usr/local/lib/python3.11/site-packages/...`, `/home/user/models.py:LINE:COL`, where models.py is
`tools/fixturegen/models.py`).

- `roundtrip/NNNN_<name>.ir` + `manifest.json` (`file`, `section`, `origin`, `torch_parse_ir_accepts`,
  `torch_reprint_identical`, `torch_parse_error`, `node_kinds`, `also_produced_by`). Byte-identical
  duplicates are dropped (their names go to `also_produced_by`), and so are executor snapshots that
  differ from an earlier file only in the numbering of `%N` values (listed there with a note).
  Sections: `static`, `scopes`, `autodiff`, `irparser`, `profiling_{grad,nograd}`,
  `noinline_{grad,nograd}` (autodiff subgraph inlining off), `fuser_{grad,nograd}` (TensorExpr fuser),
  `legacy_{grad,nograd}` (legacy executor), `legacyfuser`. The `[...]` suffix of an executor
  `origin` names the JIT settings.
- `autodiff/<case>/`: `input.ir`, `f.ir`, `df.ir`, `gradient.json` of `torch._C._jit_differentiate`.
- `run/<case>/` + `run/manifest.json`: runnable cases. On top of the shared conventions:
  `str` inputs/outputs are 0-d unicode arrays and `List[str]` 1-d unicode arrays; dict outputs have
  paths like `[0]['key']`; `constants.npz` is also written for non-frozen graphs that hold tensor
  constants (traced functions); `gradients.computed` is false with a `reason` when torch's own
  autograd cannot differentiate the case; `notes` flags graphs that mutate inputs or buffers.
- `printed_tensors/NN_<name>.ir` + `values.npz`: tensor constants of up to ten elements as
  at::Tensor's printout shows them (rank >= 3 blocks, scales, `Columns a to b`), with their exact values.
- `symbolic_script/<NNN_op>_{shaped,unshaped}/`: `input.ir`, `f.ir`, `df.ir`, `gradient.json` of
  `_jit_differentiate` on one op per symbolic_script function, with complete or plain `Tensor` types.
- `summary.json`: counts and the cases torch itself failed on (skipped).
"""
SECTION_DIRS = {"roundtrip": ("roundtrip", "autodiff"), "run": ("run",),
                "pass_pairs_frozen": ("passes_frozen",), "printed_tensors": ("printed_tensors",),
                "symbolic_script": ("symbolic_script",)}
REPO_ROOT = Path(__file__).resolve().parents[2]


def _worker(section: str, out: Path):
    from .common import setup_torch

    setup_torch()
    if section == "roundtrip":
        from . import roundtrip as mod
    elif section == "pass_pairs_frozen":
        from . import pass_pairs_frozen as mod
    elif section == "printed_tensors":
        from . import printed_tensors as mod
    elif section == "symbolic_script":
        from . import symbolic_script_cases as mod
    else:
        from . import runcases as mod
    folder = {"pass_pairs_frozen": "passes_frozen", "printed_tensors": "printed_tensors",
              "symbolic_script": "symbolic_script"}.get(section)
    stats = mod.generate(out / folder if folder else out)
    import numpy
    import torch

    stats["generated_with"] = {"torch": torch.__version__, "numpy": numpy.__version__}
    (out / f".{section}_stats.json").write_text(json.dumps(stats, indent=1, sort_keys=True) + "\n")


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m irjit.tools.fixturegen", description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="tests/fixtures/generated", help="output folder (default: %(default)s)")
    ap.add_argument("--only", choices=SECTIONS, help="generate only this section")
    ap.add_argument("--_worker", choices=SECTIONS, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    out = Path(args.out).resolve()

    if args._worker:
        _worker(args._worker, out)
        return 0

    sections = [args.only] if args.only else list(SECTIONS)
    out.mkdir(parents=True, exist_ok=True)
    for sec in sections:
        for d in SECTION_DIRS[sec]:
            shutil.rmtree(out / d, ignore_errors=True)
    if not args.only:
        for p in out.iterdir():  # full run: wipe everything else too
            if p.is_dir():
                shutil.rmtree(p)
            else:
                p.unlink()

    env = dict(os.environ)
    env["PYTHONHASHSEED"] = "0"
    env["OMP_NUM_THREADS"] = "1"
    env["MKL_NUM_THREADS"] = "1"
    env["PYTHONPATH"] = str(REPO_ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    procs = {}
    for sec in sections:  # sections are independent: run them side by side
        procs[sec] = subprocess.Popen(
            [sys.executable, "-m", "irjit.tools.fixturegen", "--out", str(out), "--_worker", sec], cwd=REPO_ROOT, env=env
        )
    failed = [sec for sec, p in procs.items() if p.wait() != 0]
    if failed:
        print(f"fixturegen: section(s) failed: {', '.join(failed)}", file=sys.stderr)
        return 1

    summary_path = out / "summary.json"
    summary = json.loads(summary_path.read_text()) if summary_path.exists() else {}
    for sec in sections:
        stats_file = out / f".{sec}_stats.json"
        summary[sec] = json.loads(stats_file.read_text())
        stats_file.unlink()
    summary_path.write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n")
    (out / "README.md").write_text(README)
    for sec in sections:
        st = summary[sec]
        counts = {k: v for k, v in st.items() if not isinstance(v, list)}
        skipped = sum(len(v) for v in st.values() if isinstance(v, list))
        print(f"{sec}: {counts}, skipped {skipped}")

    from .verify import main as verify_main

    return verify_main([str(out)])


if __name__ == "__main__":
    sys.exit(main())
