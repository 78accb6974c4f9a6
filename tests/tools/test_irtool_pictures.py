"""`irtool dot`, `view` and `export-onnx` from the command line: the files they write, the
DOT fallback without Graphviz, and what they print."""

from __future__ import annotations

import numpy as np
import pytest

from irjit.tools.irtool import main

from ..pictures.support import ROOT, SEED, require, require_module

RUN = ROOT / "tests" / "fixtures" / "generated" / "run"


@pytest.mark.parametrize("suffix,magic", [(".svg", b"<?xml"), (".png", b"\x89PNG"),
                                          (".pdf", b"%PDF"), (".dot", b"digraph")])
def test_dot_writes_the_format_its_suffix_names(tmp_path, capsys, suffix, magic):
    if suffix != ".dot":
        require("dot")
    out = tmp_path / f"seed{suffix}"
    assert main(["dot", str(SEED / "trace_conv_relu.ir"), "-o", str(out)]) == 0
    assert out.read_bytes().startswith(magic)
    assert capsys.readouterr() == ("", "")
    assert oct(out.stat().st_mode & 0o777) != oct(0o600)  # an ordinary file, not mkstemp's


def test_dot_to_stdout_with_passes_and_depth(capsys):
    assert main(["dot", str(SEED / "trace_conv_relu.ir"), "--depth", "0", "--passes",
                 "autodiff{node-threshold=1,inline-threshold=1}", "--input-types",
                 "Float(1, 3, 8, 8, requires_grad=1)"]) == 0
    out = capsys.readouterr().out
    assert out.startswith('digraph "graph" {') and "prim::DifferentiableGraph_0" in out
    assert "<b>conv (Conv2d)</b>" in out  # the collapsed scope's box
    assert "after autodiff{node-threshold=1,inline-threshold=1}" in out


def test_dot_without_graphviz_writes_dot_and_says_so(tmp_path, capsys, monkeypatch):
    import irjit.graph_dot
    monkeypatch.setattr(irjit.graph_dot, "dot_program", lambda: None)
    out = tmp_path / "seed.png"
    assert main(["dot", str(SEED / "script_conv_relu.ir"), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert not out.exists()
    assert (tmp_path / "seed.dot").read_text().startswith('digraph "graph" {')
    assert err.startswith("irtool: warning: Graphviz's `dot` is not installed")
    assert "apt-get install graphviz" in err and f"dot -Tpng {tmp_path / 'seed.dot'}" in err
    code = main(["view", str(SEED / "script_conv_relu.ir"), "-o", str(tmp_path / "v.html")])
    err = capsys.readouterr().err
    assert code == 1 and err.startswith("irtool: error: view lays the graphs out with Graphviz")
    assert not (tmp_path / "v.html").exists()


def test_view_writes_one_self_contained_page(tmp_path, capsys):
    require("dot")
    page = tmp_path / "seed.html"
    assert main(["view", str(SEED / "trace_conv_relu.ir"), "--passes",
                 "autodiff{node-threshold=1,inline-threshold=1}", "--input-types",
                 "Float(1, 3, 8, 8, requires_grad=1)", "-o", str(page)]) == 0
    html = page.read_text()
    assert html.count("<svg") == 2 and "<h2>before</h2>" in html
    assert "prim::DifferentiableGraph_0" in html
    assert "default-src 'none'" in html  # the page may fetch nothing
    assert " src=" not in html and "<link" not in html
    single = tmp_path / "single.html"
    assert main(["view", str(SEED / "script_conv_relu.ir"), "-o", str(single)]) == 0
    assert single.read_text().count("<svg") == 1


def test_export_onnx_writes_a_checked_model(tmp_path, capsys):
    onnx = require_module("onnx")
    case = RUN / "conv_relu_script"
    out = tmp_path / "model.onnx"
    assert main(["export-onnx", str(case / "graph.ir"), "--params", str(case / "params.npz"),
                 "--inputs", str(case / "inputs.npz"), "-o", str(out)]) == 0
    model = onnx.load(str(out))
    onnx.checker.check_model(model, full_check=True)
    assert [n.op_type for n in model.graph.node] == ["Conv", "Relu", "Identity"]
    with np.load(case / "inputs.npz") as f:
        shape = list(f["arg0"].shape)
    assert [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim] == shape


def test_export_onnx_errors_name_the_op_and_line(tmp_path, capsys):
    require_module("onnx")
    case = RUN / "misc_tensor_ops_fn_script"
    out = tmp_path / "model.onnx"
    code = main(["export-onnx", str(case / "graph.ir"), "--inputs", str(case / "inputs.npz"),
                 "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 1 and not out.exists()
    assert err.startswith(f"irtool: error: {case / 'graph.ir'}:11: aten::flip: no ONNX "
                          "conversion for this op")
    assert err.endswith("(from /home/user/models.py:1375:8)\n") and err.count("\n") == 1


def test_a_layout_past_its_timeout_is_a_one_line_error(tmp_path, capsys):
    """Graphviz needs minutes for If blocks nested 60 deep (long arrows over many ranks):
    --timeout ends the layout (the dot process is killed) with advice, writing nothing."""
    require("dot")
    from .test_irtool_fuzz import nested_ifs
    deep = tmp_path / "deep.ir"
    deep.write_text(nested_ifs(60))
    out = tmp_path / "deep.svg"
    assert main(["dot", str(deep), "--timeout", "0.5", "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("irtool: error: Graphviz's dot did not finish laying out ")
    assert "in 0.5 s (collapse scopes with --depth N" in err and err.count("\n") == 1
    assert not out.exists() and not list(tmp_path.glob(".irtool-*"))
    assert main(["dot", str(deep), "-o", str(tmp_path / "deep.dot")]) == 0  # DOT needs no layout


def test_dot_draw_constants_flag(capsys):
    assert main(["dot", str(SEED / "script_conv_relu.ir"), "--draw-constants"]) == 0
    out = capsys.readouterr().out
    assert out.count("<b>prim::Constant</b>") == 2 and "<b>prim::GetAttr</b>" in out
    assert main(["dot", str(SEED / "script_conv_relu.ir")]) == 0
    assert "prim::Constant" not in capsys.readouterr().out
