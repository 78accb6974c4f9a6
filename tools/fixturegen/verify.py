"""Sanity checks of a generated fixture folder (numpy only, no torch).

    python -m irjit.tools.fixturegen.verify tests/fixtures/generated

Checks: every .ir is non-empty and ends with a newline and holds no un-normalised path;
the roundtrip manifest and files agree; every run case has the files and npz keys (with
dtypes and shapes) its manifest entry describes; the run cases cover the required ops;
the folder stays under the size budget.  Exits non-zero on any problem.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np

SIZE_BUDGET = 8 * 1024 * 1024
LEAK = re.compile(r"(/tm" r"p/|/wor" r"k/|/roo" r"t/|torchdev|venv-torch)")

# ops the run cases must cover (at least one of each group)
REQUIRED_OPS = [
    ["aten::add"], ["aten::sub"], ["aten::mul"], ["aten::div"], ["aten::floor_divide", "aten::floordiv"],
    ["aten::remainder"], ["aten::pow"], ["aten::neg"], ["aten::abs"], ["aten::exp"], ["aten::log"],
    ["aten::sqrt"], ["aten::rsqrt"], ["aten::eq"], ["aten::ne"], ["aten::lt"], ["aten::le"], ["aten::gt"],
    ["aten::ge"], ["aten::relu", "aten::relu_"], ["aten::tanh"], ["aten::sigmoid"], ["aten::gelu"],
    ["aten::softmax"], ["aten::log_softmax"], ["aten::leaky_relu"], ["aten::hardtanh"], ["aten::elu", "aten::elu_"],
    ["aten::silu", "aten::silu_"], ["aten::sum"], ["aten::mean"], ["aten::max"], ["aten::min"], ["aten::argmax"],
    ["aten::var"], ["aten::std"], ["aten::norm", "aten::linalg_vector_norm"], ["aten::mm"], ["aten::matmul"],
    ["aten::bmm"], ["aten::addmm"], ["aten::linear"], ["aten::t"], ["aten::transpose"], ["aten::permute"],
    ["aten::conv1d"], ["aten::conv2d"], ["aten::conv_transpose2d"], ["aten::max_pool2d"], ["aten::avg_pool2d"],
    ["aten::adaptive_avg_pool2d"], ["aten::batch_norm"], ["aten::layer_norm"], ["aten::group_norm"],
    ["aten::dropout"], ["aten::embedding"], ["aten::cat"], ["aten::stack"], ["aten::split"], ["aten::chunk"],
    ["aten::where"], ["aten::clamp"], ["aten::masked_fill"], ["aten::index_select"], ["aten::gather"],
    ["aten::slice"], ["aten::select"], ["aten::unsqueeze"], ["aten::index"], ["aten::arange"], ["aten::zeros"],
    ["aten::ones"], ["aten::full"], ["aten::zeros_like"], ["aten::ones_like"], ["aten::full_like"], ["aten::to"],
    ["aten::type_as"], ["aten::contiguous"], ["aten::view"], ["aten::reshape"], ["aten::flatten"],
    ["aten::squeeze"], ["aten::expand"], ["aten::size"], ["aten::dim"], ["aten::numel"], ["aten::len"],
    ["aten::append"], ["prim::TupleConstruct"], ["prim::TupleUnpack"], ["prim::ListConstruct"],
    ["prim::ListUnpack"], ["aten::format"], ["aten::split"], ["aten::upper"], ["prim::If"], ["prim::Loop"],
    ["aten::lstm_cell"], ["aten::gru_cell"], ["prim::GetAttr"], ["prim::DictConstruct"],
]


def _npz(path: Path):
    with np.load(path, allow_pickle=False) as d:
        return {k: d[k] for k in d.files}


def _check_array(errors, where, arr, entry):
    kind = entry["kind"]
    if kind == "Tensor":
        if str(arr.dtype) != entry["dtype"] and not (entry["dtype"] == "bool" and arr.dtype == np.bool_):
            errors.append(f"{where}: dtype {arr.dtype} != {entry['dtype']}")
        if list(arr.shape) != entry["shape"]:
            errors.append(f"{where}: shape {list(arr.shape)} != {entry['shape']}")
    elif kind == "list":
        if arr.ndim != 1 or len(arr) != entry["len"]:
            errors.append(f"{where}: list of len {entry['len']} stored as shape {arr.shape}")
    else:
        want = {"int": np.int64, "float": np.float64, "bool": np.bool_}.get(kind)
        if arr.ndim != 0:
            errors.append(f"{where}: scalar stored with shape {arr.shape}")
        if want is not None and arr.dtype != want:
            errors.append(f"{where}: {kind} stored as {arr.dtype}")
        if kind == "str" and arr.dtype.kind != "U":
            errors.append(f"{where}: str stored as {arr.dtype}")


def _check_ir(errors, path: Path):
    raw = path.read_bytes()
    if not raw:
        errors.append(f"{path}: empty")
        return
    if not raw.endswith(b"\n"):
        errors.append(f"{path}: no trailing newline")
    text = raw.decode("utf-8")
    if not text.startswith("graph("):
        errors.append(f"{path}: does not start with graph(")
    if LEAK.search(text):
        errors.append(f"{path}: un-normalised path")


def verify(root: Path) -> list:
    errors: list = []
    rt = root / "roundtrip"
    if rt.is_dir():
        manifest = json.loads((rt / "manifest.json").read_text())
        listed = {e["file"] for e in manifest}
        on_disk = {p.name for p in rt.glob("*.ir")}
        if listed != on_disk:
            errors.append(f"roundtrip: manifest/files differ: {sorted(listed ^ on_disk)[:5]}")
        texts = {}
        for p in sorted(rt.glob("*.ir")):
            _check_ir(errors, p)
            t = p.read_bytes()
            if t in texts:
                errors.append(f"{p.name}: duplicate of {texts[t]}")
            texts[t] = p.name
        for e in manifest:
            if set(e) != {"file", "section", "origin", "torch_parse_ir_accepts", "torch_reprint_identical",
                          "torch_parse_error", "node_kinds", "also_produced_by"}:
                errors.append(f"roundtrip manifest {e.get('file')}: unexpected fields")
    ad = root / "autodiff"
    if ad.is_dir():
        for d in sorted(p for p in ad.iterdir() if p.is_dir()):
            for f in ("input.ir", "f.ir", "df.ir"):
                _check_ir(errors, d / f)
            json.loads((d / "gradient.json").read_text())
    run = root / "run"
    if run.is_dir():
        manifest = json.loads((run / "manifest.json").read_text())
        dirs = {p.name for p in run.iterdir() if p.is_dir()}
        if dirs != set(manifest):
            errors.append(f"run: manifest/dirs differ: {sorted(dirs ^ set(manifest))[:5]}")
        covered = set()
        for name, e in manifest.items():
            d = run / name
            covered.update(e["op_counts"])
            _check_ir(errors, d / "graph.ir")
            inputs = _npz(d / "inputs.npz")
            if list(inputs) != [i["key"] for i in e["inputs"]]:
                errors.append(f"{name}: inputs.npz keys {list(inputs)}")
            for i in e["inputs"]:
                if i["key"] in inputs:
                    _check_array(errors, f"{name}/inputs/{i['key']}", inputs[i["key"]], i)
            want_out = [o["key"] for o in e["outputs"]]
            grads = e["gradients"]
            want = want_out + (grads["keys"] if grads["computed"] else [])
            expected = _npz(d / "expected.npz")
            if list(expected) != want:
                errors.append(f"{name}: expected.npz keys {list(expected)} != {want}")
            for o in e["outputs"]:
                if o["key"] in expected:
                    _check_array(errors, f"{name}/expected/{o['key']}", expected[o["key"]], o)
            has_params = (d / "params.npz").exists()
            if has_params != (e["params"] is not None):
                errors.append(f"{name}: params.npz presence")
            if has_params:
                params = _npz(d / "params.npz")
                keys = list(dict.fromkeys(p["key"] for p in e["params"]))
                if list(params) != keys:
                    errors.append(f"{name}: params.npz keys {list(params)} != {keys}")
                for p in e["params"]:
                    if p["key"] in params:
                        _check_array(errors, f"{name}/params/{p['key']}", params[p["key"]], p)
                if grads["computed"]:
                    for k in grads["keys"]:
                        if not k.startswith("grad.arg") and k[5:] not in params:
                            errors.append(f"{name}: gradient key {k} is not a param")
            has_consts = (d / "constants.npz").exists()
            if has_consts != (e["constants"] is not None):
                errors.append(f"{name}: constants.npz presence")
            if has_consts and list(_npz(d / "constants.npz")) != e["constants"]:
                errors.append(f"{name}: constants.npz keys")
            if e["frozen"] and e["params"] is not None:
                errors.append(f"{name}: frozen case with params")
        for group in REQUIRED_OPS:
            if not covered.intersection(group):
                errors.append(f"run: no case covers {' / '.join(group)}")
    total = sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
    if total > SIZE_BUDGET:
        errors.append(f"total size {total} bytes exceeds {SIZE_BUDGET}")
    return errors


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    root = Path(argv[0] if argv else "tests/fixtures/generated")
    errors = verify(root)
    for e in errors:
        print("verify:", e, file=sys.stderr)
    n_ir = sum(1 for _ in root.rglob("*.ir"))
    total = sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
    print(f"verify: {root}: {n_ir} .ir files, {total} bytes, {len(errors)} problem(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
