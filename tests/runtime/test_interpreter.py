"""The interpreter on module graphs: built-in forwards behind prim::CallMethod, attributes from
params, errors that name the node, and autograd through in-place ops on views."""

from pathlib import Path

import numpy as np
import pytest

import irjit
from irjit.ops.errors import IRRuntimeError, IRTypeError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _params(rng):
    return {"conv.weight": rng.standard_normal((32, 3, 3, 3)).astype(np.float32),
            "conv.bias": rng.standard_normal(32).astype(np.float32)}


def test_call_method_runs_the_builtin_forward_like_the_inlined_graph():
    rng = np.random.default_rng(0)
    params = _params(rng)
    x = rng.standard_normal((1, 3, 8, 8)).astype(np.float32)
    graph = irjit.load(FIXTURES / "roundtrip" / "001_script_conv_relu_graph.ir", params=params)
    inlined = irjit.load(FIXTURES / "roundtrip" / "002_script_conv_relu_inlined.ir", params=params)
    np.testing.assert_allclose(graph(x), inlined(x), rtol=1e-6)
    g1, g2 = graph.backward(), inlined.backward()
    for k in ("arg0", "conv.weight", "conv.bias"):
        np.testing.assert_allclose(g1[k], g2[k], rtol=1e-5, atol=1e-6)


def test_call_method_on_a_user_class_asks_for_the_inlined_graph():
    text = """graph(%self : __torch__.models.Outer, %x : Tensor):
  %m : __torch__.models.Custom = prim::GetAttr[name="m"](%self)
  %y : Tensor = prim::CallMethod[name="forward"](%m, %x)
  return (%y)
"""
    fn = irjit.load(irjit.parse_ir(text))
    with pytest.raises(IRRuntimeError, match="no graph for method 'forward' of __torch__.models.Custom.*inlined"):
        fn(np.ones(3, np.float32))


def test_method_graphs_can_be_supplied():
    outer = """graph(%self : __torch__.models.Outer, %x : Tensor):
  %m : __torch__.models.Custom = prim::GetAttr[name="m"](%self)
  %y : Tensor = prim::CallMethod[name="forward"](%m, %x)
  return (%y)
"""
    method = """graph(%self : __torch__.models.Custom, %x : Tensor):
  %y : Tensor = aten::neg(%x)
  return (%y)
"""
    fn = irjit.load(irjit.parse_ir(outer), functions={"__torch__.models.Custom.forward": method})
    np.testing.assert_array_equal(fn(np.arange(3.0)), -np.arange(3.0))


def test_wrong_number_and_type_of_inputs():
    fn = irjit.load(FIXTURES / "run" / "fn_int_list" / "graph.ir")
    with pytest.raises(IRTypeError, match="takes 2 inputs"):
        fn(np.array([1, 2]))
    with pytest.raises(IRTypeError, match="input %k.1 expects int"):
        fn.run([1, 2], 1.5)


def test_shape_mismatch_names_the_node_and_line():
    text = "graph(%a : Tensor, %b : Tensor):\n  %c : Tensor = aten::mm(%a, %b)\n  return (%c)\n"
    fn = irjit.load(irjit.parse_ir(text, "mm.ir"))
    fn.filename = fn.interpreter.filename = "mm.ir"
    with pytest.raises(IRRuntimeError, match=r"mm.ir:2: aten::mm: .*cannot be multiplied"):
        fn(np.ones((2, 3), np.float32), np.ones((4, 5), np.float32))


def test_inplace_on_a_view_routes_gradients_through_the_base():
    text = """graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %zero : int = prim::Constant[value=0]()
  %two : float = prim::Constant[value=2.]()
  %f : bool = prim::Constant[value=0]()
  %y : Tensor = aten::clone(%x, %none)
  %row : Tensor = aten::select(%y, %zero, %zero)
  %r2 : Tensor = aten::mul_(%row, %two)
  %z : Tensor = aten::mul(%y, %y)
  return (%z)
"""
    fn = irjit.load(irjit.parse_ir(text))
    x = np.arange(6, dtype=np.float64).reshape(2, 3) + 1
    out = fn(x)
    y = x.copy()
    y[0] *= 2
    np.testing.assert_allclose(out, y * y)
    g = fn.backward()["arg0"]
    want = 2 * y
    want[0] *= 2  # d/dx of (2x)^2 = 8x = 2 * (2y) ... through the doubled row
    np.testing.assert_allclose(g, want)


def test_optional_attribute_left_out_of_params_is_none():
    rng = np.random.default_rng(1)
    params = {"conv.weight": rng.standard_normal((32, 3, 3, 3)).astype(np.float32)}
    fn = irjit.load(FIXTURES / "roundtrip" / "002_script_conv_relu_inlined.ir", params=params)
    out = fn(rng.standard_normal((1, 3, 8, 8)).astype(np.float32))
    assert out.shape == (1, 32, 6, 6)


def test_pytorch_optimized_graphs_run_in_the_plain_interpreter_for_any_inputs():
    """A printed graph_for output (guards + DifferentiableGraph + fallback call) runs without
    its fallback function: outside an executor the guarded code runs, computing the same."""
    fn = irjit.load(FIXTURES / "roundtrip" / "285_prof_fn_pointwise_grad_run2.ir")
    x = np.random.default_rng(0).standard_normal((4, 4)).astype(np.float32)
    y = np.random.default_rng(1).standard_normal((4, 4)).astype(np.float32)
    out = fn.run(x, y, requires_grad=False)[0].data  # fails RequiresGradCheck's requires_grad=1
    z = np.tanh(x * y + 1)
    np.testing.assert_allclose(out, 1 / (1 + np.exp(-z)) * x, rtol=1e-5)


PROFILED_LOOP = """graph(%x : Tensor, %n : int):
  %t : bool = prim::Constant[value=1]()
  %one : int = prim::Constant[value=1]()
  %px : Tensor = prim::profile[profiled_type=Float(3, strides=[1], requires_grad=0, device=cpu), seen_none=0](%x)
  %y : Tensor = prim::Loop(%n, %t, %x)
    block0(%i : int, %acc : Tensor):
      %pa : Tensor = prim::profile[profiled_type=Float(3, strides=[1], requires_grad=0, device=cpu), seen_none=0](%acc)
      %ppa : Tensor = prim::profile[profiled_type=Float(3, strides=[1], requires_grad=0, device=cpu), seen_none=0](%pa)
      %s : Tensor = aten::add(%ppa, %px, %one)
      %ps : Tensor = prim::profile[profiled_type=Float(3, strides=[1], requires_grad=0, device=cpu), seen_none=0](%s)
      -> (%t, %ps)
  return (%y)
"""


def test_pass_through_profile_nodes_are_left_out_of_the_steps():
    """Outside profiling, a profile node whose output only its own block reads is no step (its
    readers take its input); one read by a nested block or returned by its block stays; a
    bailout continuation (run_block_from) runs every node."""
    from irjit.runtime.interpreter import Interpreter
    from irjit.runtime.profiling import ProfilingInterpreter
    from irjit.ops.tensor import Tensor
    graph = irjit.parse_ir(PROFILED_LOOP)
    interp = Interpreter(graph)
    x = Tensor(np.array([1.0, 2.0, 3.0], np.float32))
    (y,) = interp.run([x, 3])
    np.testing.assert_array_equal(y.data, 4 * x.data)
    body = next(n for n in graph.nodes() if n.kind == "prim::Loop").blocks[0]
    kinds = lambda steps: [s.node.kind for s in steps]  # noqa: E731
    assert kinds(interp._programs[id(body)]) == ["aten::add", "prim::profile"]  # %pa, %ppa left out
    assert kinds(interp._programs[id(graph.block)]).count("prim::profile") == 1  # %px: read in the loop
    recorded = ProfilingInterpreter(irjit.parse_ir(PROFILED_LOOP))
    (y2,) = recorded.run([x, 3])
    np.testing.assert_array_equal(y2.data, y.data)
    assert kinds(recorded._compile(body)).count("prim::profile") == 3  # profiling records them all
    # continuing after %pa with only %pa known: %ppa must run
    add = next(n for n in body.nodes() if n.kind == "aten::add")
    pa = add.inputs[0].node.inputs[0].node
    env = {pa.outputs[0]: x, add.inputs[1]: x, add.inputs[2]: 1, body.inputs[0]: 0}
    env.update({v: True for v in body.outputs[:1]})
    out = interp.run_block_from(body, pa, env)
    np.testing.assert_array_equal(out[1].data, 2 * x.data)
