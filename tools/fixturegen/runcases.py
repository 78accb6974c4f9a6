"""Runnable cases: ``<out>/run/<case>/`` with graph.ir, inputs.npz, params.npz (graphs with
``%self``), constants.npz (graphs with tensor constants, e.g. frozen ones), expected.npz,
plus ``<out>/run/manifest.json`` - the formats of ``shared/fixtures/run``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import numpy as np
import torch

from . import zoo
from .common import (
    first_line,
    fresh_function,
    graph_text,
    node_kinds,
    reset_jit_state,
    save_npz,
    write_json,
    write_text,
)

LOSS = "sum over every floating-point Tensor output of out.sum()"
WRT = "floating-point Tensor inputs and nn.Parameters (not buffers)"

TOLERANCES = {
    "default": {"rtol": 1e-4, "atol": 1e-5, "grad_rtol": 1e-4, "grad_atol": 1e-4},
    "tight": {"rtol": 1e-5, "atol": 1e-6, "grad_rtol": 1e-4, "grad_atol": 1e-5},
    "loose": {"rtol": 1e-3, "atol": 1e-4, "grad_rtol": 1e-3, "grad_atol": 1e-3},
    "f64": {"rtol": 1e-9, "atol": 1e-11, "grad_rtol": 1e-9, "grad_atol": 1e-11},
}


@dataclass
class RunCase:
    name: str
    target: str
    kind: str  # script_module | frozen_module | traced_module | script_function | traced_function
    train: bool = False
    tol: Optional[str] = None
    notes: Optional[str] = None
    nograd_args: tuple = ()  # floating-point inputs that must not require grad


def _cases():
    cases = []
    script_mods = [
        "conv_relu", "mycell", "mlp", "seq_mlp", "modulelist", "conv_bn_pool", "small_cnn", "conv1d",
        "conv_variants", "conv_transpose", "pooling", "lstm_cell", "gru_cell", "lib_lstm_cell", "lib_gru_cell",
        "rnn_loop", "attention", "layernorm", "norms", "embedding", "bn1d_dropout", "batchnorm_only",
        "dropout_eval", "if_else", "for_loop", "while_loop", "nested_control", "nested_loops", "early_return",
        "tuple_list_dict", "optional_arg", "scalar_arith", "list_ops", "string_ops", "namedtuple_ret",
        "dict_ops", "inplace", "slice_index", "cat_stack", "where_clamp", "gather_index", "reductions",
        "float64", "int_tensor", "type_conv", "creation", "activations", "mat_ops", "shape_ops", "params",
    ]
    notes = {
        "list_ops": "graph mutates its List[int] input (aten::append); inputs.npz holds the value before the call",
        "inplace": "graph uses in-place ops on a clone of its input",
    }
    for t in script_mods:
        cases.append(RunCase(f"{t}_script", t, "script_module", notes=notes.get(t)))
    train_note = (
        "module in training mode: batch_norm uses batch statistics and updates the running_mean / "
        "running_var / num_batches_tracked buffers in place; params.npz holds their values before the call"
    )
    cases.append(RunCase("batchnorm_train_script", "batchnorm_only", "script_module", train=True, notes=train_note))
    cases.append(RunCase("small_cnn_train_script", "small_cnn", "script_module", train=True, notes=train_note))
    for t in ["conv_relu", "small_cnn", "conv_bn_pool", "attention", "mlp", "embedding", "lstm_cell",
              "conv_variants"]:
        cases.append(RunCase(f"{t}_frozen", t, "frozen_module"))
    for t in ["mycell", "conv_bn_pool", "seq_mlp", "lstm_cell", "attention", "slice_index"]:
        cases.append(RunCase(f"{t}_trace", t, "traced_module"))
    script_fns = [
        "fn_pointwise", "fn_arith", "fn_divs", "fn_unary", "fn_compare", "fn_softmax_attention", "fn_layernorm",
        "fn_int_list", "fn_linear_f", "fn_conv_f", "fn_type_refine", "fn_loop", "fn_mlp", "fn_lstm_cell",
        "fn_reduce_dims", "fn_matops", "fn_scalar_ops", "fn_strings", "fn_tuples", "fn_loop_carried",
        "fn_int_tensor", "fn_float64", "fn_batchnorm_f", "fn_misc_tensor_ops",
    ]
    fn_notes = {
        "fn_batchnorm_f": "training=True: updates its running-mean / running-var inputs (arg1, arg2) in place; "
        "inputs.npz holds their values before the call; no gradient w.r.t. arg1 / arg2 (torch cannot "
        "differentiate batch_norm w.r.t. running statistics)",
    }
    for t in script_fns:
        cases.append(
            RunCase(
                t.removeprefix("fn_") + "_fn_script",
                t,
                "script_function",
                notes=fn_notes.get(t),
                nograd_args=(1, 2) if t == "fn_batchnorm_f" else (),
            )
        )
    for t in ["fn_pointwise", "fn_many_outputs", "fn_conv_f", "fn_trace_consts", "fn_divs"]:
        cases.append(RunCase(t.removeprefix("fn_") + "_fn_trace", t, "traced_function"))
    return cases


# ---------------------------------------------------------------------------
# value conversion
# ---------------------------------------------------------------------------


def _np_scalar(v):
    if isinstance(v, bool):
        return np.array(v, dtype=np.bool_)
    if isinstance(v, int):
        return np.array(v, dtype=np.int64)
    if isinstance(v, float):
        return np.array(v, dtype=np.float64)
    if isinstance(v, str):
        return np.array(v)
    raise TypeError(f"unsupported scalar {type(v).__name__}")


def _scalar_kind(v):
    return {bool: "bool", int: "int", float: "float", str: "str"}[type(v)]


def _tensor_np(t: torch.Tensor):
    # np.array (not np.ascontiguousarray, which turns 0-d into 1-d) keeps the shape
    return np.array(t.detach().cpu().numpy(), copy=True, order="C")


def _dtype_name(t: torch.Tensor):
    return str(t.dtype).removeprefix("torch.")


def _input_entry(v, key, gin):
    base = {}
    if isinstance(v, torch.Tensor):
        base = {"kind": "Tensor", "dtype": _dtype_name(v), "shape": list(v.shape)}
        arr = _tensor_np(v)
    elif isinstance(v, list):
        if not v:
            raise TypeError("empty list input")
        elem = _scalar_kind(v[0])
        base = {"kind": "list", "elem": elem, "len": len(v)}
        arr = np.array(v, dtype={"int": np.int64, "float": np.float64, "bool": np.bool_, "str": None}[elem])
    else:
        base = {"kind": _scalar_kind(v)}
        arr = _np_scalar(v)
    base.update({"key": key, "graph_name": gin.debugName(), "graph_type": str(gin.type())})
    return base, arr


def _flatten(v, path, leaves):
    """Outputs flattened: tuples element-wise, lists of tensors element-wise, dicts by value in
    insertion order, lists of scalars/strings as one array."""
    if isinstance(v, torch.Tensor):
        leaves.append((path, v))
    elif isinstance(v, tuple):
        for i, x in enumerate(v):
            _flatten(x, f"{path}[{i}]", leaves)
    elif isinstance(v, list):
        if v and all(isinstance(x, torch.Tensor) for x in v):
            for i, x in enumerate(v):
                _flatten(x, f"{path}[{i}]", leaves)
        else:
            leaves.append((path, v))
    elif isinstance(v, dict):
        for k, x in v.items():
            _flatten(x, f"{path}[{k!r}]", leaves)
    elif v is None:
        raise TypeError("None output")
    else:
        leaves.append((path, v))
    return leaves


def _output_entry(key, path, v):
    if isinstance(v, torch.Tensor):
        return {"key": key, "path": path, "kind": "Tensor", "dtype": _dtype_name(v), "shape": list(v.shape)}, _tensor_np(v)
    if isinstance(v, list):
        if not v:
            raise TypeError("empty list output")
        elem = _scalar_kind(v[0])
        arr = np.array(v, dtype={"int": np.int64, "float": np.float64, "bool": np.bool_, "str": None}[elem])
        return {"key": key, "path": path, "kind": "list", "elem": elem, "len": len(v)}, arr
    return {"key": key, "path": path, "kind": _scalar_kind(v)}, _np_scalar(v)


# ---------------------------------------------------------------------------
# graph walking
# ---------------------------------------------------------------------------


def _all_nodes(block_nodes, acc):
    for n in block_nodes:
        acc.append(n)
        for b in n.blocks():
            _all_nodes(b.nodes(), acc)
    return acc


def _getattr_leaves(graph):
    """(path, value) for every prim::GetAttr chain from the graph's first input that ends in a
    non-module value, in graph order (repeats included)."""
    self_v = list(graph.inputs())[0]
    paths = {self_v.unique(): ""}
    leaves = []
    for n in _all_nodes(graph.nodes(), []):
        if n.kind() != "prim::GetAttr":
            continue
        src = n.input().unique()
        if src not in paths:
            continue
        prefix = paths[src]
        path = (prefix + "." if prefix else "") + n.s("name")
        out = n.output()
        if isinstance(out.type(), torch._C.ClassType):
            paths[out.unique()] = path
        else:
            leaves.append((path, out))
    return leaves


def _resolve(obj, path):
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def _tensor_constants(graph):
    out = []
    for n in _all_nodes(graph.nodes(), []):
        if n.kind() == "prim::Constant" and n.hasAttribute("value") and n.kindOf("value") == "t":
            out.append((n.output().debugName(), n.t("value")))
    return out


# ---------------------------------------------------------------------------
# one case
# ---------------------------------------------------------------------------


def _build(case: RunCase, inputs):
    s = zoo.spec(case.target)
    if case.kind == "script_module":
        obj = zoo.script_module(s, train=case.train)
        return obj, obj.inlined_graph, f"torch.jit.script({s.cls}{'.train()' if case.train else ''}).inlined_graph"
    if case.kind == "frozen_module":
        obj = zoo.freeze_module(s)
        return obj, obj.graph, f"torch.jit.freeze(torch.jit.script({s.cls}).eval()).graph"
    if case.kind == "traced_module":
        obj = zoo.trace_module(s, inputs, train=case.train)
        return obj, obj.inlined_graph, f"torch.jit.trace({s.cls}).inlined_graph"
    if case.kind == "script_function":
        obj = torch.jit.script(fresh_function(s.fn))
        if "prim::CallFunction" in node_kinds(obj.graph):
            return obj, obj.inlined_graph, f"torch.jit.script({s.name}).inlined_graph"
        return obj, obj.graph, f"torch.jit.script({s.name}).graph"
    if case.kind == "traced_function":
        obj = zoo.trace_fn(s, inputs)
        return obj, obj.graph, f"torch.jit.trace({s.name}).graph"
    raise ValueError(case.kind)


def _clone_inputs(inputs, grad: bool, nograd_args=()):
    out = []
    for i, v in enumerate(inputs):
        if isinstance(v, torch.Tensor):
            v = v.detach().clone()
            if grad and v.is_floating_point() and i not in nograd_args:
                v.requires_grad_(True)
        elif isinstance(v, list):
            v = list(v)
        out.append(v)
    return tuple(out)


def _pick_tol(case, inputs, params_t):
    if case.tol:
        return case.tol
    tensors = [v for v in inputs if isinstance(v, torch.Tensor)] + params_t
    floats = [t for t in tensors if t.is_floating_point()]
    if floats and all(t.dtype == torch.float64 for t in floats):
        return "f64"
    if not floats:
        return "tight"
    return "default"


def _torch_text_check(text, inputs, expected_leaves, tol):
    how = ""
    try:
        g = torch._C.parse_ir(text)
    except Exception as e:  # noqa: BLE001
        if "parse_tensor_constants" not in str(e):
            return f"torch.parse_ir rejects: {first_line(e)}"
        try:
            g = torch._C.parse_ir(text, parse_tensor_constants=True)
            how = " (parse_ir with parse_tensor_constants=True)"
        except Exception as e2:  # noqa: BLE001
            return f"torch.parse_ir rejects: {first_line(e2)}"
    try:
        fn = torch._C._create_function_from_graph("text_check", g)
        with torch.jit.optimized_execution(False):
            out = fn(*_clone_inputs(inputs, False))
        leaves = _flatten(out, "", [])
    except Exception as e:  # noqa: BLE001
        return f"torch cannot run the parsed text: {first_line(e)}"
    if len(leaves) != len(expected_leaves):
        return "mismatch: output count"
    for (_, a), (_, b) in zip(leaves, expected_leaves):
        if isinstance(a, torch.Tensor):
            if not isinstance(b, torch.Tensor) or a.shape != b.shape or a.dtype != b.dtype:
                return "mismatch: tensor type/shape"
            if a.is_floating_point():
                if not torch.allclose(a.detach(), b.detach(), rtol=tol["rtol"], atol=tol["atol"], equal_nan=True):
                    return "mismatch: values"
            elif not torch.equal(a, b):
                return "mismatch: values"
        elif a != b:
            return "mismatch: values"
    return "pass" + how


def build_case(case: RunCase, root: Path):
    reset_jit_state()
    s = zoo.spec(case.target)
    inputs = zoo.make_inputs(s)
    obj, graph, origin = _build(case, inputs)
    has_self = case.kind.endswith("_module")
    frozen = case.kind == "frozen_module"
    text = graph_text(graph)
    kinds = node_kinds(graph)
    g_inputs = list(graph.inputs())[1:] if has_self else list(graph.inputs())
    if len(g_inputs) != len(inputs):
        raise RuntimeError(f"graph has {len(g_inputs)} inputs, case has {len(inputs)}")

    # inputs (values before the call: graphs may mutate them)
    in_entries, in_arrays = [], {}
    for i, (v, gin) in enumerate(zip(inputs, g_inputs)):
        entry, arr = _input_entry(v, f"arg{i}", gin)
        in_entries.append(entry)
        in_arrays[f"arg{i}"] = arr

    # params: GetAttr chains from self (values before the call)
    params_entries, params_arrays, none_attrs, param_tensors = None, None, None, []
    if has_self and not frozen:
        named_params = dict(obj.named_parameters())
        params_entries, params_arrays, none_list = [], {}, []
        for path, out in _getattr_leaves(graph):
            val = _resolve(obj, path)
            if val is None:
                if path not in none_list:
                    none_list.append(path)
                continue
            entry = {"key": path, "graph_type": str(out.type())}
            if isinstance(val, torch.Tensor):
                entry.update({"kind": "Tensor", "dtype": _dtype_name(val), "shape": list(val.shape)})
                arr = _tensor_np(val)
            elif isinstance(val, list):
                elem = _scalar_kind(val[0])
                entry.update({"kind": "list", "elem": elem, "len": len(val)})
                arr = np.array(val)
            else:
                entry["kind"] = _scalar_kind(val)
                arr = _np_scalar(val)
            entry["is_parameter"] = path in named_params
            params_entries.append(entry)
            if path not in params_arrays:
                params_arrays[path] = arr.copy()
                if entry["is_parameter"] and isinstance(val, torch.Tensor) and val.is_floating_point():
                    param_tensors.append((path, val))
        none_attrs = none_list or None

    consts = _tensor_constants(graph)
    const_arrays = {k: _tensor_np(t) for k, t in consts} if consts else None

    # run: outputs and gradients
    tol_name = _pick_tol(case, inputs, [t for _, t in param_tensors])
    tol = TOLERANCES[tol_name]
    call_inputs = _clone_inputs(inputs, True, case.nograd_args)
    for _, p in param_tensors:
        p.grad = None
    with torch.jit.optimized_execution(False):
        out = obj(*call_inputs)
    leaves = _flatten(out, "", [])
    if not leaves:
        raise RuntimeError("no outputs")
    out_entries, expected = [], {}
    for i, (path, v) in enumerate(leaves):
        entry, arr = _output_entry(f"out{i}", path or "<root>", v)
        out_entries.append(entry)
        expected[f"out{i}"] = arr

    wrt = [(f"arg{i}", v) for i, v in enumerate(call_inputs) if isinstance(v, torch.Tensor) and v.requires_grad]
    wrt += param_tensors
    float_outs = [v for _, v in leaves if isinstance(v, torch.Tensor) and v.is_floating_point()]
    if not wrt:
        gradients = {"computed": False, "reason": "no floating-point Tensor inputs or parameters"}
    elif not float_outs:
        gradients = {"computed": False, "reason": "no floating-point Tensor outputs"}
    else:
        diff_outs = [v for v in float_outs if v.requires_grad]
        grads = [None] * len(wrt)
        grad_error = None
        if diff_outs:
            loss = sum(v.sum() for v in diff_outs)
            try:
                grads = torch.autograd.grad(loss, [t for _, t in wrt], allow_unused=True)
            except RuntimeError as e:
                grad_error = first_line(e)
        unused = []
        for (key, t), gr in zip(wrt, grads):
            if gr is None:
                unused.append(f"grad.{key}")
                gr = torch.zeros_like(t)
            expected[f"grad.{key}"] = _tensor_np(gr)
        if grad_error is not None:
            for key, _ in wrt:
                del expected[f"grad.{key}"]
            gradients = {"computed": False, "reason": f"torch autograd fails: {grad_error}"}
        else:
            gradients = {
            "computed": True,
            "keys": [f"grad.{k}" for k, _ in wrt],
            "unused_zero_filled": unused,
            "loss": LOSS,
            "wrt": WRT,
        }

    if has_self:
        text_check = "n/a (module self input)"
    else:
        text_check = _torch_text_check(text, inputs, leaves, tol)

    # write
    d = root / case.name
    d.mkdir(parents=True)
    write_text(d / "graph.ir", text)
    save_npz(d / "inputs.npz", in_arrays)
    if params_arrays is not None:
        save_npz(d / "params.npz", params_arrays)
    if const_arrays is not None:
        save_npz(d / "constants.npz", const_arrays)
    save_npz(d / "expected.npz", expected)

    entry = {
        "kind": case.kind,
        "origin": origin,
        "has_self": has_self,
        "frozen": frozen,
        "ops": sorted(kinds),
        "op_counts": kinds,
        "inputs": in_entries,
        "outputs": out_entries,
        "params": params_entries,
        "none_attributes": none_attrs,
        "constants": [k for k, _ in consts] if consts else None,
        "gradients": gradients,
        "tolerance": tol,
    }
    note_parts = []
    if case.notes:
        note_parts.append(case.notes)
    if consts:
        note_parts.append("tensor constants (including those printed as <Tensor>) are in constants.npz keyed by value name")
    if note_parts:
        entry["notes"] = "; ".join(note_parts)
    entry["torch_text_check"] = text_check
    return entry


def generate(out: Path) -> dict:
    root = out / "run"
    root.mkdir(parents=True, exist_ok=True)
    manifest, skipped = {}, []
    for case in _cases():
        try:
            manifest[case.name] = build_case(case, root)
        except Exception as e:  # noqa: BLE001 - torch failures are recorded and skipped
            skipped.append({"name": case.name, "reason": f"{type(e).__name__}: {first_line(e)}"})
            d = root / case.name
            if d.exists():
                for p in d.iterdir():
                    p.unlink()
                d.rmdir()
    reset_jit_state()
    write_json(root / "manifest.json", manifest)
    return {"run_cases": len(manifest), "run_skipped": skipped}
