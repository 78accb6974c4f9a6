"""Shared helpers for the fixture generator: torch setup, the ``models`` zoo import,
source-path normalisation, deterministic .npz writing, JIT global-state reset and
graph inspection."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import sys
import warnings
import zipfile
import zlib
from collections import OrderedDict
from pathlib import Path

import numpy as np
import torch

HERE = Path(__file__).resolve().parent
MODELS_PATH = HERE / "models.py"

NORM_SITE = "/usr/local/lib/python3.11/site-packages/"
# the folder printed graphs name as their source (fixtures must not depend on this machine)
NORM_HOME = "/home/user"
NORM_MODELS = f"{NORM_HOME}/models.py"


def load_models():
    """Import models.py as the top-level module ``models`` (class types then print as
    ``__torch__.models.X``, as in the reference fixtures)."""
    if "models" in sys.modules and getattr(sys.modules["models"], "__file__", None) == str(MODELS_PATH):
        return sys.modules["models"]
    spec = importlib.util.spec_from_file_location("models", MODELS_PATH)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["models"] = mod
    spec.loader.exec_module(mod)
    return mod


def setup_torch():
    torch.set_num_threads(1)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    torch.manual_seed(0)
    warnings.filterwarnings("ignore")


def seed_for(name: str) -> int:
    return zlib.crc32(name.encode()) & 0x7FFFFFFF


def seed(name: str):
    torch.manual_seed(seed_for(name))


# ---------------------------------------------------------------------------
# Path normalisation
# ---------------------------------------------------------------------------

_SITE = os.path.dirname(os.path.dirname(os.path.abspath(torch.__file__))) + "/"


def normalize(text: str) -> str:
    text = text.replace(str(MODELS_PATH), NORM_MODELS)
    text = text.replace(_SITE, NORM_SITE)
    return text


_LEAK_RE = re.compile(r"(/tm" r"p/|/wor" r"k/|/roo" r"t/|torchdev|venv-torch)")


def check_no_leaks(text: str, what: str):
    m = _LEAK_RE.search(text)
    if m:
        raise RuntimeError(f"un-normalised path in {what}: ...{text[max(0, m.start() - 60):m.end() + 60]}...")


# ---------------------------------------------------------------------------
# Deterministic npz / json writing
# ---------------------------------------------------------------------------


def save_npz(path: Path, arrays: "OrderedDict[str, np.ndarray] | dict"):
    """Write an uncompressed .npz like ``np.savez`` but with fixed zip timestamps so the
    bytes are reproducible."""
    with zipfile.ZipFile(path, mode="w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        for key, val in arrays.items():
            arr = np.asanyarray(val)
            info = zipfile.ZipInfo(key + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_STORED
            info.external_attr = 0o600 << 16
            with zf.open(info, "w", force_zip64=True) as fh:
                np.lib.format.write_array(fh, arr, allow_pickle=False)


def write_json(path: Path, obj):
    path.write_text(json.dumps(obj, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def write_text(path: Path, text: str):
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)


# ---------------------------------------------------------------------------
# JIT global state
# ---------------------------------------------------------------------------


def _capture_defaults():
    C = torch._C
    d = {
        "profiling_executor": True,
        "profiling_mode": True,
        "num_profiled_runs": C._jit_get_num_profiled_runs(),
        "texpr_fuser": C._jit_texpr_fuser_enabled(),
        "can_fuse_cpu": C._jit_can_fuse_on_cpu(),
        "can_fuse_cpu_legacy": C._jit_can_fuse_on_cpu_legacy(),
        "can_fuse_gpu": C._jit_can_fuse_on_gpu(),
        "te_llvm_cpu": C._jit_get_te_must_use_llvm_cpu(),
        "texpr_reductions": C._jit_texpr_reductions_enabled(),
        "texpr_dynamic": C._jit_texpr_dynamic_shape_enabled(),
        "texpr_fallback": C._jit_texpr_fallback_allowed(),
        "fusion_group_inlining": C._debug_get_fusion_group_inlining(),
        "executor_optimize": C._get_graph_executor_optimize(),
        "inline_everything": C._jit_get_inline_everything_mode(),
    }
    # getters that return the previous value
    strategy = C._jit_set_fusion_strategy([("STATIC", 2), ("DYNAMIC", 10)])
    C._jit_set_fusion_strategy(strategy)
    d["fusion_strategy"] = [tuple(x) for x in strategy]
    return d


JIT_DEFAULTS = _capture_defaults()


def reset_jit_state():
    """Restore every JIT knob the generator touches to its startup value, and drop the
    module type cache so that scripted modules get fresh graph executors."""
    C = torch._C
    d = JIT_DEFAULTS
    C._jit_set_profiling_executor(d["profiling_executor"])
    C._jit_set_profiling_mode(d["profiling_mode"])
    C._jit_set_num_profiled_runs(d["num_profiled_runs"])
    C._jit_set_texpr_fuser_enabled(d["texpr_fuser"])
    C._jit_override_can_fuse_on_cpu(d["can_fuse_cpu"])
    C._jit_override_can_fuse_on_cpu_legacy(d["can_fuse_cpu_legacy"])
    C._jit_override_can_fuse_on_gpu(d["can_fuse_gpu"])
    C._jit_set_te_must_use_llvm_cpu(d["te_llvm_cpu"])
    C._jit_set_texpr_reductions_enabled(d["texpr_reductions"])
    C._jit_set_texpr_dynamic_shape_enabled(d["texpr_dynamic"])
    C._jit_texpr_set_fallback_allowed(d["texpr_fallback"])
    C._debug_set_fusion_group_inlining(d["fusion_group_inlining"])
    C._debug_set_autodiff_subgraph_inlining(True)
    C._set_graph_executor_optimize(d["executor_optimize"])
    C._jit_set_inline_everything_mode(d["inline_everything"])
    C._jit_set_fusion_strategy(d["fusion_strategy"])
    fresh_type_store()


def fresh_type_store():
    import torch.jit._recursive as rec

    rec.concrete_type_store = rec.ConcreteTypeStore()


def fresh_function(fn):
    """A new Python function object with the same code, so ``torch.jit.script`` compiles
    it again (its cache is keyed by function object) and it gets a fresh executor."""
    import types

    new = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    new.__kwdefaults__ = fn.__kwdefaults__
    new.__qualname__ = fn.__qualname__
    new.__module__ = fn.__module__
    new.__annotations__ = dict(fn.__annotations__)
    new.__doc__ = fn.__doc__
    return new


# ---------------------------------------------------------------------------
# Graph inspection
# ---------------------------------------------------------------------------


def _walk(block_nodes, counts, subgraphs):
    for n in block_nodes:
        k = n.kind()
        counts[k] = counts.get(k, 0) + 1
        for b in n.blocks():
            _walk(b.nodes(), counts, subgraphs)
        if n.hasAttribute("Subgraph") and n.kindOf("Subgraph") == "g":
            subgraphs.append(n.g("Subgraph"))


def node_kinds(graph) -> dict:
    """Node kind -> count over the graph, its blocks and any subgraph sections, in
    printing order."""
    counts: dict = {}
    pending = []
    _walk(graph.nodes(), counts, pending)
    while pending:
        sub = pending.pop(0)
        more = []
        _walk(sub.nodes(), counts, more)
        pending = more + pending
    return counts


def graph_text(graph, print_source_ranges: bool = True) -> str:
    if print_source_ranges:
        raw = str(graph)
    else:
        raw = graph.str(False)
    text = normalize(raw)
    check_no_leaks(text, "graph text")
    return text


def first_line(msg: str) -> str:
    msg = normalize(str(msg)).strip()
    return msg.splitlines()[0] if msg else ""


def parse_ir_check(text: str):
    """How torch's own parser fares on a text: (accepts, reprint_identical, error)."""
    try:
        g = torch._C.parse_ir(text)
    except Exception as e:  # noqa: BLE001
        return False, False, first_line(e)
    try:
        again = str(g)
    except Exception:  # noqa: BLE001
        return True, False, None
    return True, again == text, None
