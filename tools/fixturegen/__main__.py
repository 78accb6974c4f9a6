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
* ``<out>/summary.json``: counts and the cases torch itself failed on (skipped).

Source paths in ``# file:line:col`` comments are normalised (torch ->
``/usr/local/lib/python3.11/site-packages/...``, the zoo in ``models.py`` ->
``/home/user/models.py``).  Generation is deterministic (fixed seeds, one thread,
JIT state reset between cases, each section in a fresh interpreter) and idempotent: the
selected output folders are wiped and rewritten.

Run it with a dev venv that has torch 2.13.0 (never a project dependency)::

    python3 -m venv /tmp/torchdev
    /tmp/torchdev/bin/pip install torch==2.13.0 numpy
    /tmp/torchdev/bin/python -m tools.fixturegen --out tests/fixtures/generated
    /tmp/torchdev/bin/python -m tools.fixturegen --out tests/fixtures/generated --only run
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

SECTIONS = ("roundtrip", "run")
SECTION_DIRS = {"roundtrip": ("roundtrip", "autodiff"), "run": ("run",)}
REPO_ROOT = Path(__file__).resolve().parents[2]


def _worker(section: str, out: Path):
    from .common import setup_torch

    setup_torch()
    if section == "roundtrip":
        from . import roundtrip as mod
    else:
        from . import runcases as mod
    stats = mod.generate(out)
    (out / f".{section}_stats.json").write_text(json.dumps(stats, indent=1, sort_keys=True) + "\n")


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m tools.fixturegen", description=__doc__.split("\n\n")[0])
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
            [sys.executable, "-m", "tools.fixturegen", "--out", str(out), "--_worker", sec], cwd=REPO_ROOT, env=env
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
    for sec in sections:
        st = summary[sec]
        counts = {k: v for k, v in st.items() if not isinstance(v, list)}
        skipped = sum(len(v) for v in st.values() if isinstance(v, list))
        print(f"{sec}: {counts}, skipped {skipped}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
