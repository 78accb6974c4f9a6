"""The autodiff pipeline, including the forum's conv2d+relu scenario (scripted and traced)."""

import os

import pytest

from irjit import compiler
from irjit.compiler.autodiff.gradient import unpack_gradient
from irjit.compiler.passes.registry import get_pass
from irjit.compiler.structural_hash import structural_hash
from irjit.ops.registry import is_registered

from .test_create_autodiff_subgraphs import POINTWISE, _dgs

FIX = os.path.join(os.path.dirname(__file__), "..", "fixtures", "autodiff")


def test_pipeline_differentiates_and_keeps_gradient_off_the_printout():
    g = compiler.parse_ir(POINTWISE)
    get_pass("autodiff").run(g)
    (dg,) = _dgs(g)
    grad = unpack_gradient(dg)
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


def test_a_copied_graph_keeps_the_gradient_of_its_differentiable_graph():
    """The Gradient travels with the node: a copy's DifferentiableGraph has one of its own
    (copied graphs, equal fields), and changing the copy leaves the original alone."""
    g = compiler.parse_ir(POINTWISE)
    get_pass("autodiff").run(g)
    (dg,) = _dgs(g)
    grad = unpack_gradient(dg)
    copy = g.copy()
    (dg_copy,) = _dgs(copy)
    copied = unpack_gradient(dg_copy)
    assert copied is not None
    assert copied.fields() == grad.fields()
    assert structural_hash(copied.f) == structural_hash(grad.f)  # copies renumber values
    assert structural_hash(copied.df) == structural_hash(grad.df)
    assert copied.f is not grad.f and copied.df is not grad.df
    assert dg_copy.attr("Subgraph") is copied.f
    before = str(grad.df)
    copied.df.erase_output(0)
    assert str(grad.df) == before
    assert "ReverseSubgraph" not in str(copy)  # the packed fields are not printed


def test_copied_graph_runs_its_differentiable_graph_with_the_packed_gradient():
    import numpy as np
    from irjit.ops.tensor import Tensor
    from irjit.runtime.autograd import backward
    from irjit.runtime.executor.legacy import LegacyGraphExecutor
    from irjit.runtime.executor.plan import ExecutionPlan, gradient_for
    g = compiler.parse_ir(POINTWISE)
    get_pass("autodiff").run(g)
    copy = g.copy()
    (dg,) = _dgs(copy)
    assert gradient_for(dg).df is dg.attr("ReverseSubgraph")  # not differentiated again
    plan = ExecutionPlan(copy, lambda sub: LegacyGraphExecutor(sub, optimize=False))
    rng = np.random.default_rng(0)
    x, y = (Tensor(rng.standard_normal((4, 4)).astype(np.float32), True) for _ in range(2))
    (out,) = plan.run([x, y])
    expected = -((x.data * y.data + 1.0)) / y.data * x.data
    np.testing.assert_allclose(out.data, expected, rtol=1e-5)
    gx, gy = backward([out], [np.ones((4, 4), np.float32)], inputs=[x, y])
    np.testing.assert_allclose(gx, -(2 * x.data + 1 / y.data), rtol=1e-4)
    np.testing.assert_allclose(gy, x.data / y.data ** 2, rtol=1e-4)
