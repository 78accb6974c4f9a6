"""ONNX export: fixture models (scripted, traced, frozen; tests/fixtures) pass onnx.checker
and compute what irjit's interpreter computes, under onnxruntime; node names and metadata
keep scopes and sources; what cannot be exported is a one-line error naming op and line."""

from __future__ import annotations

import numpy as np
import pytest

import irjit
from irjit.runtime.values import flatten_value, to_numpy

from .support import ROOT, require_module

RUN = ROOT / "tests" / "fixtures" / "generated" / "run"
ARCH = ROOT / "tests" / "fixtures" / "bench" / "arch"

# Exported and compared: convolutions, pooling, batch and layer norm, linear layers, LSTM and
# GRU cells, attention, embeddings, shape ops, activations; scripted, traced and frozen.
MODELS = [
    "activations_script", "arith_fn_script", "attention_frozen", "attention_script",
    "attention_trace", "batchnorm_only_script", "bn1d_dropout_script", "cat_stack_script",
    "conv1d_script", "conv_bn_pool_frozen", "conv_bn_pool_script", "conv_bn_pool_trace",
    "conv_relu_frozen", "conv_relu_script", "conv_transpose_script", "conv_variants_script",
    "dropout_eval_script", "embedding_script", "float64_script", "gru_cell_script",
    "layernorm_script", "lstm_cell_frozen", "lstm_cell_script", "lstm_cell_trace",
    "mat_ops_script", "mlp_script", "mycell_trace", "norms_script", "seq_mlp_trace",
    "small_cnn_frozen", "small_cnn_script", "softmax_attention_fn_script",
    "trace_consts_fn_trace", "tuples_fn_script", "type_conv_script", "where_clamp_script",
]


def _npz(folder, name):
    path = folder / f"{name}.npz"
    if not path.exists():
        return None
    with np.load(path) as f:
        return {k: f[k] for k in f.files}


def load_case(folder):
    graph = irjit.parse_ir((folder / "graph.ir").read_text(), str(folder / "graph.ir"))
    inputs = _npz(folder, "inputs") or {}
    args = [inputs[f"arg{i}"] for i in range(len(inputs))]
    return graph, _npz(folder, "params"), _npz(folder, "constants"), args


def interpreter_outputs(graph, params, constants, args) -> list[np.ndarray]:
    fn = irjit.load(graph, params=params, constants=constants)
    return [to_numpy(leaf) for _, leaf in flatten_value(tuple(fn.run(*args, requires_grad=False)))]


def onnxruntime_outputs(model, args) -> list[np.ndarray]:
    ort = require_module("onnxruntime")
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(model.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    return session.run(None, {i.name: a for i, a in zip(session.get_inputs(), args)})


@pytest.mark.parametrize("folder", [RUN / m for m in MODELS] + [ARCH / "resnet_blocks",
                                                                 ARCH / "vit_encoder"],
                         ids=lambda p: p.name)
def test_fixture_model_passes_the_checker_and_matches_the_interpreter(folder):
    onnx = require_module("onnx")
    from irjit.onnx_export import export_onnx
    graph, params, constants, args = load_case(folder)
    model = export_onnx(graph, params=params, constants=constants, inputs=args,
                        filename="graph.ir")
    onnx.checker.check_model(model, full_check=True)
    expected = interpreter_outputs(graph, params, constants, args)
    got = onnxruntime_outputs(model, args)
    assert [o.name for o in model.graph.output] == [f"out{i}" for i in range(len(expected))]
    assert len(got) == len(expected)
    for e, g in zip(expected, got):
        assert g.shape == e.shape and g.dtype == e.dtype
        np.testing.assert_allclose(g, e, rtol=2e-4, atol=2e-5)


def test_scopes_and_sources_are_kept_in_names_and_metadata():
    require_module("onnx")
    from irjit.onnx_export import export_onnx
    graph, params, constants, args = load_case(RUN / "conv_bn_pool_trace")
    model = export_onnx(graph, params=params, inputs=args, filename="graph.ir")
    conv = next(n for n in model.graph.node if n.op_type == "Conv")
    meta = {p.key: p.value for p in conv.metadata_props}
    assert conv.name.startswith(meta["scope"] + "/aten__convolution_")
    assert meta["scope"].startswith("__module.") and meta["irjit.kind"] == "aten::_convolution"
    assert meta["source"] == "/usr/local/lib/python3.11/site-packages/torch/nn/modules/conv.py:560:0"
    assert meta["irjit.line"].startswith("graph.ir:")
    assert "aten::_convolution(" in conv.doc_string
    # parameters are initializers named by their attribute paths
    names = {i.name for i in model.graph.initializer}
    assert any(name.endswith("weight") for name in names)


def test_only_the_branch_a_check_takes_is_exported():
    """A scripted module's `if x.dim() != 4: raise ...` is decided by the example's shape."""
    require_module("onnx")
    from irjit.onnx_export import export_onnx
    graph, params, constants, args = load_case(RUN / "conv_bn_pool_script")
    assert any(n.kind == "prim::RaiseException" for n in graph.walk())
    model = export_onnx(graph, params=params, inputs=args)
    assert {n.op_type for n in model.graph.node} <= {"Conv", "BatchNormalization", "Relu",
                                                     "MaxPool", "Identity"}


@pytest.mark.parametrize("case,message", [
    ("misc_tensor_ops_fn_script", r"^graph\.ir:11: aten::flip: no ONNX conversion for this op"),
    ("if_else_script", r"graph\.ir:\d+: aten::Bool: no ONNX conversion"),
    ("rnn_loop_script", r"graph\.ir:\d+: prim::Loop: a loop that computes on the inputs' data"),
    ("batchnorm_train_script", r"graph\.ir:\d+: aten::batch_norm: batch norm in training mode"),
    ("for_loop_script", r"input %n\.1 : int is not a tensor"),
])
def test_what_cannot_be_exported_is_a_one_line_error(case, message):
    require_module("onnx")
    from irjit.onnx_export import OnnxExportError, export_onnx
    graph, params, constants, args = load_case(RUN / case)
    with pytest.raises(OnnxExportError, match=message) as info:
        export_onnx(graph, params=params, constants=constants, inputs=args, filename="graph.ir")
    assert "\n" not in str(info.value)


def test_inputs_made_from_complete_types():
    """Without example inputs, complete input types give the shapes (traced graphs)."""
    require_module("onnx")
    from irjit.onnx_export import OnnxExportError, export_onnx
    graph, params, constants, args = load_case(RUN / "mycell_trace")
    model = export_onnx(graph, params=params)
    dims = [[d.dim_value for d in i.type.tensor_type.shape.dim] for i in model.graph.input]
    assert dims == [list(a.shape) for a in args]
    scripted, params, _, _ = load_case(RUN / "mycell_script")
    with pytest.raises(OnnxExportError, match=r"input %x\.1 has type Tensor, which gives no "
                                              r"dtype and shape"):
        export_onnx(scripted, params=params)
