"""differentiate() against PyTorch 2.13's `_jit_differentiate` fixtures and the tape.

Comparable with PyTorch: f_real_outputs, df_input_vjps, df_output_vjps and the captured inputs
(which come from the formulas' use of forward inputs). Not comparable one for one: PyTorch's
captured outputs come from its symbolic_script formulas (which capture `self_size`/`other_size`
via TupleConstruct/TupleUnpack and several ctx copies), ours from the registry formulas; we
check that every captured output is a size (int[]?) or a forward tensor, and their count on the
fixtures whose ops are registered. A case whose ops are not in the
registry fails (a registry regression must not turn into skips).
"""

import json
import os

import numpy as np
import pytest

import irjit
from irjit.compiler.autodiff import differentiate
from irjit.runtime.run_gradient import run_backward, run_forward
from irjit.ops.registry import is_registered
from irjit.ops.tensor import Tensor

HERE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "autodiff")
CASES = ["008_shape_fn_rsub_neg_lowered", "017_hand_mul_add"]


def _load(case):
    g = irjit.parse_ir(open(os.path.join(HERE, case, "input.ir")).read())
    missing = sorted({n.kind for n in g.walk() if n.kind.startswith("aten::") and not is_registered(n.kind)})
    assert not missing, f"ops not registered: {', '.join(missing)}"
    return g, json.load(open(os.path.join(HERE, case, "gradient.json")))


def test_a_missing_op_fails_the_case(monkeypatch):
    monkeypatch.setattr(__import__(__name__, fromlist=["_"]), "is_registered", lambda kind: kind != "aten::mul")
    with pytest.raises(BaseException) as info:
        _load("017_hand_mul_add")
    assert info.type is AssertionError and "aten::mul" in str(info.value)


@pytest.mark.parametrize("case", CASES)
def test_structure_matches_pytorch(case):
    g, want = _load(case)
    grad = differentiate(g)
    grad.f.lint()
    grad.df.lint()
    got = grad.fields()
    for key in ("f_real_outputs", "df_input_vjps", "df_output_vjps", "df_input_captured_inputs"):
        assert got[key] == want[key], key
    assert len(got["df_input_captured_outputs"]) == len(want["df_input_captured_outputs"])
    # df inputs: vjps, then captured inputs, then captured outputs; one tuple returned
    assert len(grad.df.inputs) == len(got["df_input_vjps"]) + len(got["df_input_captured_inputs"]) + \
        len(got["df_input_captured_outputs"])
    assert grad.df.outputs[0].node.kind == "prim::TupleConstruct"
    assert "f = graph(" in str(grad) and "df_output_vjps = " in str(grad)


def test_008_forward_is_cse_d_and_requires_grad_updated():
    g, _ = _load("008_shape_fn_rsub_neg_lowered")
    grad = differentiate(g)
    assert [n.kind for n in grad.f.nodes()].count("aten::neg") == 1  # CSE, as PyTorch's f
    assert grad.f.inputs[0].type.requires_grad is False
    assert grad.f.outputs[0].type.requires_grad is True  # not used by a node: kept, as PyTorch


@pytest.mark.parametrize("case", CASES)
def test_gradients_match_tape(case):
    g, _ = _load(case)
    text = str(g)
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(v.type.sizes).astype(np.float32) for v in g.inputs]
    grad = differentiate(irjit.parse_ir(text))
    outs = run_forward(grad, [Tensor(x) for x in inputs])
    ogs = [rng.standard_normal(np.shape(outs[i].data)).astype(np.float32) for i in range(grad.f_real_outputs)]
    got = run_backward(grad, [Tensor(x) for x in inputs], outs, ogs)

    fn = irjit.load(irjit.parse_ir(text))
    ref = fn.run(*inputs)
    for o, r in zip(outs[:grad.f_real_outputs], ref):
        np.testing.assert_allclose(o.data, r.data, rtol=1e-5)
    want = fn.backward(ogs)
    for i, v in enumerate(g.inputs):
        key = f"arg{i}"
        if i in got:
            np.testing.assert_allclose(got[i], want[key], rtol=1e-5, atol=1e-6)


JIT_CASES = os.path.join(HERE, "jit_differentiate")
# the cases torch's _jit_differentiate handled and ours once refused: layer_norm / permute with
# sizes or dims built in the graph, and matmul without static shapes (profiled graphs are
# untyped, so their inputs' shapes are given here)
RUN_TIME_SHAPES = {
    "002_shape_fn_layernorm": None,
    "003_shape_fn_softmax_attention": None,
    "006_shape_fn_gelu_chain": None,
    "007_shape_fn_matops_lowered": None,
    "009_profiled_fn_mlp_dg0": [(2,), (2, 5), (5,), (4, 3), (5, 3)],
    "011_profiled_fn_softmax_attention_dg0": [(2, 5, 4), 2.0, (2, 4, 5), (2, 3, 4)],
    "014_profiled_fn_gelu_chain_dg0": [(3, 4), (2, 3)],
}


@pytest.mark.parametrize("case", sorted(RUN_TIME_SHAPES))
def test_graphs_needing_run_time_sizes_differentiate_correctly(case):
    """f and df give the tape's outputs and input gradients."""
    text = open(os.path.join(JIT_CASES, case, "input.ir")).read()
    g = irjit.parse_ir(text)
    rng = np.random.default_rng(1)
    shapes = RUN_TIME_SHAPES[case] or [v.type.sizes for v in g.inputs]
    inputs = [s if isinstance(s, float) else rng.standard_normal(s).astype(np.float32) for s in shapes]
    grad = differentiate(irjit.parse_ir(text))
    grad.f.lint()
    grad.df.lint()
    args = [Tensor(x) if isinstance(x, np.ndarray) else x for x in inputs]
    outs = run_forward(grad, args)
    ogs = [rng.standard_normal(np.shape(o.data)).astype(np.float32) if isinstance(o, Tensor) else None
           for o in outs[:grad.f_real_outputs]]
    got = run_backward(grad, args, outs, ogs)

    fn = irjit.load(g)
    ref = fn.run(*inputs)
    for o, r in zip(outs[:grad.f_real_outputs], ref):
        if isinstance(r, Tensor):
            np.testing.assert_allclose(o.data, r.data, rtol=1e-5, atol=1e-6)
        else:
            assert o == r  # sizes the graph returns (`_size_if_not_equal`)
    want = fn.backward(ogs)
    tensor_inputs = [i for i, x in enumerate(inputs) if isinstance(x, np.ndarray)]
    assert sorted(got) == tensor_inputs
    for i in tensor_inputs:
        np.testing.assert_allclose(got[i], want[f"arg{i}"], rtol=1e-4, atol=1e-5)


def test_comparison_gets_no_gradient_and_the_rest_differentiates():
    """`gt` gives a boolean tensor: like PyTorch, differentiate() passes it no gradient instead
    of refusing the graph (leaky-relu written with where)."""
    text = ("graph(%x : Tensor):\n  %0 : int = prim::Constant[value=0]()\n"
            "  %s : float = prim::Constant[value=0.1]()\n  %m : Tensor = aten::gt(%x, %0)\n"
            "  %y : Tensor = aten::mul(%x, %s)\n  %r : Tensor = aten::where(%m, %x, %y)\n"
            "  return (%r, %m)\n")
    x = np.array([-2.0, -0.5, 0.5, 3.0], np.float32)
    grad = differentiate(irjit.parse_ir(text))
    outs = run_forward(grad, [Tensor(x)])
    got = run_backward(grad, [Tensor(x)], outs, [np.ones(4, np.float32), None])
    np.testing.assert_allclose(got[0], [0.1, 0.1, 1.0, 1.0], rtol=1e-6)


def test_a_list_constant_printed_with_its_type_reaches_the_formula_as_its_value():
    """max_pool2d's stride `annotate(List[int], [])` (TorchScript's default) is `[]` to its
    derivative formula, which then pools with the kernel size as the stride."""
    text = """graph(%x : Float(1, 1, 4, 4, strides=[16, 16, 4, 1], requires_grad=1, device=cpu)):
  %k : int[] = prim::Constant[value=[2, 2]]()
  %s : int[] = prim::Constant[value=annotate(List[int], [])]()
  %p : int[] = prim::Constant[value=[0, 0]]()
  %d : int[] = prim::Constant[value=[1, 1]]()
  %c : bool = prim::Constant[value=0]()
  %y : Float(1, 1, 2, 2, strides=[4, 4, 2, 1], requires_grad=1, device=cpu) = aten::max_pool2d(%x, %k, %s, %p, %d, %c)
  return (%y)"""
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    grad = differentiate(irjit.parse_ir(text))
    outs = run_forward(grad, [Tensor(x)])
    got = run_backward(grad, [Tensor(x)], outs, [np.ones((1, 1, 2, 2), np.float32)])
    want = np.zeros((4, 4), np.float32)
    want[1::2, 1::2] = 1  # each window's maximum is its bottom-right element
    np.testing.assert_array_equal(got[0].reshape(4, 4), want)
