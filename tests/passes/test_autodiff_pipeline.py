"""The autodiff pipeline, including the forum's conv2d+relu scenario (scripted and traced)."""

import os

import pytest

from irjit import compiler
from irjit.compiler.autodiff.side_table import get_gradient
from irjit.compiler.passes.registry import get_pass
from irjit.ops.registry import is_registered

from .test_create_autodiff_subgraphs import POINTWISE, _dgs

FIX = os.path.join(os.path.dirname(__file__), "..", "fixtures", "autodiff")


def test_pipeline_differentiates_and_keeps_gradient_off_the_printout():
    g = compiler.parse_ir(POINTWISE)
    get_pass("autodiff").run(g)
    (dg,) = _dgs(g)
    grad = get_gradient(dg)
    assert grad is not None and dg.attr("Subgraph") is grad.f
    assert grad.df_output_vjps == [0, 1]
    assert "df_input_vjps" not in str(g)


@pytest.mark.parametrize("name", ["002_script_conv_relu_inlined", "006_trace_conv_relu_inlined"])
def test_seed_conv_relu(name):
    if not is_registered("aten::relu"):
        pytest.skip("aten::relu is not registered yet")
    text = open(os.path.join(FIX, name + ".ir")).read()
    g = compiler.parse_ir(text)
    get_pass("autodiff").run(g, input_types="Float(1, 3, 8, 8, requires_grad=1)")
    assert not _dgs(g)  # default thresholds: PyTorch 2.13 shows no DifferentiableGraph
    g = compiler.parse_ir(text)
    get_pass("autodiff").run(g, input_types="Float(1, 3, 8, 8, requires_grad=1)",
                             node_threshold=1, inline_threshold=1)
    (dg,) = _dgs(g)
    kinds = [n.kind for n in dg.attr("Subgraph").nodes()]
    assert kinds == ["aten::relu"]  # conv (conv2d or _convolution) is not autodiff-differentiable
