"""The DOT pictures: clusters for scopes (traced module hierarchies, the 2017 format's
scopes), subgraphs (autodiff, native units) and If/Loop blocks, arrows labelled with types,
collapsed scopes — checked on the structure Graphviz reads from the DOT text."""

from __future__ import annotations

import html

import pytest

import irjit
from irjit.graph_dot import render, to_dot
from irjit.graph_picture import max_scope_depth, picture, scope_label

from .support import (LEGACY, ROOT, SEED, DotStructure, nested_traced_model, require,
                      traced_fixture)


def structure(graph, **options) -> DotStructure:
    return DotStructure(to_dot(graph, **options))


def seed(name: str):
    return irjit.parse_ir((SEED / f"{name}.ir").read_text())


def test_scripted_seed_has_no_clusters_and_folds_constants():
    s = structure(seed("script_conv_relu"))
    assert s.clusters == {}
    assert s.titles() == ["%x.1", "conv.bias", "conv.weight", "conv2d", "relu", "return"]
    assert s.has_edge("%x.1", "conv2d") and s.has_edge("conv.weight", "conv2d")
    assert s.has_edge("conv2d", "relu") and s.has_edge("relu", "return")
    conv = next(n for n in s.nodes.values() if "conv2d" in n["label"])
    # the constant arguments, named after aten::conv2d's schema, are written in its box
    assert "stride=[1, 1]" in conv["label"] and "groups=1" in conv["label"]
    assert len(s.edges) == 5


def test_traced_seed_clusters_the_conv_module_and_labels_arrows_with_shapes():
    s = structure(seed("trace_conv_relu"))
    assert s.cluster_labels() == ["conv (Conv2d)"]
    assert s.members("conv (Conv2d)") == ["_convolution", "bias", "weight"]
    assert s.has_edge("%x", "_convolution", "Float(1, 3, 8, 8)")
    assert s.has_edge("_convolution", "relu", "Float(1, 32, 6, 6)")
    assert s.has_edge("relu", "return", "Float(1, 32, 6, 6)")


def test_autodiff_subgraph_is_a_cluster_fed_by_the_outer_values():
    g = seed("trace_conv_relu")
    irjit.passes.run(g, "autodiff{node-threshold=1,inline-threshold=1}")
    s = structure(g)
    assert s.members("prim::DifferentiableGraph_0") == ["relu"]
    assert s.has_edge("_convolution", "relu", "Float(1, 32, 6, 6)")
    assert s.has_edge("relu", "return")


def test_pytorch_traced_nested_scopes():
    """PyTorch's own traced Sequential: `__module.seq/__module.seq.0` nests seq.0 in seq."""
    s = structure(irjit.parse_ir(traced_fixture("Net")))
    assert s.children("seq (Sequential)") == ["seq.0 (Linear)", "seq.1 (ReLU)"]
    assert s.members("seq.0 (Linear)") == ["bias", "linear", "weight"]
    assert s.members("out (Linear)") == ["bias", "linear", "weight"]
    assert s.has_edge("linear", "relu", "Float(2, 5)")
    assert s.has_edge("relu", "linear", "Float(2, 5)")


def test_irjit_traced_model_with_three_levels_of_scopes():
    traced = nested_traced_model()
    g = traced.inlined_graph  # (.graph calls each submodule's method: prim::CallMethod)
    assert max_scope_depth(g) == 3
    s = structure(g)
    assert s.children("layer1 (Sequential)") == ["layer1.0 (Block)", "layer1.1 (Block)"]
    assert s.children("layer1.0 (Block)") == ["layer1.0.act (Tanh)", "layer1.0.fc1 (Linear)",
                                              "layer1.0.fc2 (Linear)"]
    assert s.members("layer1.0.fc1 (Linear)") == ["bias", "linear", "weight"]
    assert s.members("layer1.0 (Block)") == ["add", "bias", "bias", "linear", "linear", "tanh",
                                             "weight", "weight"]
    assert s.has_edge("linear", "tanh", "Float(4, 16)")
    assert s.has_edge("%x", "add", "Float(4, 8)")  # the residual reaches into layer1.0
    assert len(s.clusters) == 1 + 2 * 4 + 1  # layer1, two blocks of 1+3, head


@pytest.mark.parametrize("depth,boxes", [
    (0, ["%x", "head (Linear)", "layer1 (Sequential)", "return", "sigmoid"]),
    (1, ["%x", "bias", "layer1.0 (Block)", "layer1.1 (Block)", "linear", "return", "sigmoid",
         "weight"]),
])
def test_scopes_collapse_to_a_depth(depth, boxes):
    s = structure(nested_traced_model().inlined_graph, depth=depth)
    assert s.titles() == boxes
    if depth == 0:
        assert s.clusters == {}
        assert s.has_edge("%x", "layer1 (Sequential)", "Float(4, 8)")
        assert s.has_edge("layer1 (Sequential)", "head (Linear)", "Float(4, 8)")
    else:
        assert s.cluster_labels() == ["head (Linear)", "layer1 (Sequential)"]
        assert s.has_edge("layer1.0 (Block)", "layer1.1 (Block)", "Float(4, 8)")
        assert s.has_edge("%x", "layer1.0 (Block)")
        collapsed = next(n for n in s.nodes.values() if "layer1.0 (Block)" in n["label"])
        assert "4 nodes" in collapsed["label"]  # linear, tanh, linear, add


def test_legacy_format_scopes():
    """The 2017 format's `Net$4569918736.Sequential$4569919312.Linear$4569919120` scopes."""
    g = irjit.parse_ir((LEGACY / "pr3016_module_scopes.ir").read_text())
    s = structure(g)
    assert s.children("Net") == ["Sequential"]
    assert s.children("Sequential") == ["Linear", "ReLU"]
    assert s.members("Linear") == ["%9", "Add", "Addmm", "Squeeze", "Transpose", "Unsqueeze"]
    assert s.members("ReLU") == ["Threshold"]
    assert s.has_edge("Add", "Threshold", "Float(2)")
    assert scope_label("Linear$4569919120") == "Linear"
    assert scope_label("__module.seq.0") == "seq.0"


CONTROL = """graph(%x : Float(2, 3), %n : int, %c : bool):
  %one : int = prim::Constant[value=1]()
  %r : Tensor = prim::If(%c)
    block0():
      %a : Tensor = aten::relu(%x)
      -> (%a)
    block1():
      %b : Tensor = aten::neg(%x)
      -> (%b)
  %t : bool = prim::Constant[value=1]()
  %y : Tensor = prim::Loop(%n, %t, %r)
    block0(%i : int, %acc : Tensor):
      %s : Tensor = aten::add(%acc, %x, %one)
      -> (%t, %s)
  return (%y)
"""


def test_if_and_loop_blocks_are_clusters_joined_by_flow_arrows():
    s = structure(irjit.parse_ir(CONTROL))
    assert s.children("prim::If %r") == ["block0 (then)", "block1 (else)"]
    assert s.members("block0 (then)") == ["->", "relu"]
    assert s.members("prim::Loop %y") == ["%i, %acc", "->", "add", "prim::Loop", "results"]
    assert s.has_edge("%x", "relu", "Float(2, 3)")  # an outer value read inside a block
    assert s.has_edge("%c", "prim::If") and s.has_edge("relu", "->")
    assert s.has_edge("->", "results")  # each block's results flow to the node's results
    assert s.has_edge("prim::Loop", "%i, %acc")  # the loop's inputs flow into the body
    assert s.has_edge("%i, %acc", "add") and s.has_edge("results", "return")
    assert s.has_edge("results", "prim::Loop")  # the If's result is the loop's initial value


def test_native_units_are_highlighted_clusters():
    g = irjit.parse_ir((ROOT / "tests/fixtures/bench/lstm_cell.ir").read_text())
    from irjit.compiler.passes.specialize_input_types import (parse_input_types,
                                                              specialize_input_types)
    specialize_input_types(g, parse_input_types(
        "Float(64, 256), Float(64, 256), Float(64, 256), Float(1024, 256), Float(1024, 256), "
        "Float(1024), Float(1024)"))
    irjit.passes.run(g, "propagate_input_shapes,native_partition")
    text = to_dot(g)
    s = DotStructure(text)
    assert s.members("prim::NativeGroup_0") == ["add", "add", "add", "matmul", "matmul", "t", "t"]
    assert s.has_edge("%x.1", "matmul", "Float(64, 256)")
    assert 'class="irc role-native"' in text and "#e6f4ea" in text  # the green native fill


def test_drawing_constants_instead_of_folding_them():
    s = structure(seed("script_conv_relu"), fold_constants=False)
    assert s.titles().count("prim::Constant") == 2 and "prim::ListConstruct" in s.titles()
    assert s.has_edge("prim::ListConstruct", "conv2d", "int[]")


def test_picture_model_keeps_sources_and_scopes_for_hover():
    pic = picture(seed("trace_conv_relu"))
    conv = next(n for n in pic.root.all_nodes() if n.kind == "aten::_convolution")
    assert conv.source.endswith("conv.py:560:0") and conv.scope == "__module.conv"
    assert "# /usr/local/lib/python3.11/site-packages/torch/nn/modules/conv.py:560:0" in conv.info
    assert "%15 : Float(1, 32, 6, 6, strides=[1152, 36, 6, 1]" in conv.info
    with pytest.raises(ValueError, match="depth must not be negative"):
        picture(seed("trace_conv_relu"), depth=-1)


def test_labels_and_tooltips_are_escaped():
    """Strings with quotes, backslashes, angle brackets and braces reach Graphviz intact."""
    g = irjit.parse_ir('graph(%x : Tensor):\n'
                       '  %s : str = prim::Constant[value="a\\\\b \\"q\\" <i>&{x}"]()\n'
                       '  %y : Tensor = aten::div(%x, %x, %s)\n  return (%y)\n')
    text = to_dot(g)
    s = DotStructure(text)  # dot parses it
    div = next(n for n in s.nodes.values() if "div" in n["label"])
    printed = 'rounding_mode="a\\\\b \\"q\\" <i>&{x}"'  # as the graph prints it
    assert printed in html.unescape(div["label"])
    require("dot")
    assert render(text, "svg").startswith(b"<?xml")


def test_to_html_takes_graphs_or_pairs_and_counts_units():
    require("dot")
    g = seed("trace_conv_relu")
    after = seed("trace_conv_relu")
    irjit.passes.run(after, "autodiff{node-threshold=1,inline-threshold=1}")
    page = irjit.to_html([("before", g), ("after autodiff", after)], title="seed <1>")
    assert page.count("<svg") == 2 and "<title>irjit: seed &lt;1&gt;</title>" in page
    assert "2 nodes · 1 DifferentiableGraph" in page
    assert 'id="pane-a"' in page and 'id="pane-b"' in page
    assert irjit.to_html([g]).count("<svg") == 1
