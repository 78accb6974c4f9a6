"""Inputs and parameters keep their dtypes: a convolution never promotes (PyTorch's messages),
and a complex value is never silently cast to a real one."""

from pathlib import Path

import numpy as np
import pytest

import irjit
from irjit.ops.errors import IRRuntimeError, IRTypeError
from irjit.runtime.autograd import run_op

CASE = Path(__file__).resolve().parents[1] / "fixtures" / "run" / "conv_relu_script"


def _conv():
    return irjit.load(CASE / "graph.ir", params=str(CASE / "params.npz"))


def _x():
    return np.load(CASE / "inputs.npz")["arg0"]


@pytest.mark.parametrize("dtype, message", [
    (np.int64, "expected scalar type Long but found Float"),
    (np.float64, "expected scalar type Double but found Float"),
    (np.complex64, r"Input type \(CPUComplexFloatType\) and weight type \(torch.FloatTensor\) "
                   "should be the same"),
])
def test_conv2d_rejects_an_input_whose_dtype_is_not_the_weights(dtype, message):
    with pytest.raises(IRRuntimeError, match=message):
        _conv()(_x().astype(dtype))


def test_conv2d_rejects_a_bias_of_another_dtype():
    params = dict(np.load(CASE / "params.npz"))
    params["conv.bias"] = params["conv.bias"].astype(np.float64)
    fn = irjit.load(CASE / "graph.ir", params=params)
    with pytest.raises(IRRuntimeError, match=r"Input type \(float\) and bias type \(double\)"):
        fn(_x())


def test_conv2d_on_matching_integer_dtypes_runs_as_pytorch_does():
    x = np.arange(2 * 3 * 4 * 4).reshape(2, 3, 4, 4)
    w = np.ones((5, 3, 3, 3), np.int64)
    out = run_op("aten::conv2d", irjit.Tensor(x), irjit.Tensor(w)).data
    assert out.dtype == np.int64 and out.shape == (2, 5, 2, 2)
    assert out[0, 0, 0, 0] == x[0, :, :3, :3].sum()


def test_complex_value_for_a_float_input_is_an_error_not_a_cast():
    g = irjit.parse_ir("""graph(%x : Tensor, %s : float):
  %y : Tensor = aten::mul(%x, %s)
  return (%y)
""")
    fn = irjit.load(g)
    with pytest.raises(IRTypeError, match=r"input %s: expected a float, got a value of dtype complex128"):
        fn(np.ones(2, np.float32), np.array(1 + 2j))
    np.testing.assert_array_equal(fn(np.ones(2, np.float32), np.array(3.0)), [3.0, 3.0])


def test_parameter_must_have_the_dtype_its_graph_type_names():
    g = irjit.parse_ir("""graph(%self : __torch__.M, %x : Tensor):
  %w : Float(3, strides=[1], requires_grad=0, device=cpu) = prim::GetAttr[name="w"](%self)
  %y : Tensor = aten::mul(%x, %w)
  return (%y)
""")
    ok = irjit.load(g.copy(), params={"w": np.ones(3, np.float32)})
    np.testing.assert_array_equal(ok(np.ones(3, np.float32)), np.ones(3))
    bad = irjit.load(g, params={"w": np.ones(3, np.complex64)})
    with pytest.raises(Exception, match=r"'w' has type Float\(3.*dtype complex64"):
        bad(np.ones(3, np.float32))


@pytest.mark.parametrize("kind, message", [
    ("aten::relu", "clamp is not supported for complex types"),
    ("aten::hardtanh", "clamp is not supported for complex types"),
    ("aten::gelu", "\"GeluKernelImpl\" not implemented for 'ComplexFloat'"),
    ("aten::leaky_relu", "\"leaky_relu_cpu\" not implemented for 'ComplexFloat'"),
    ("aten::elu", "\"elu_cpu\" not implemented for 'ComplexFloat'"),
])
def test_activations_without_a_complex_kernel_reject_complex_input(kind, message):
    x = irjit.Tensor(np.array([1 + 2j, -1 - 1j], np.complex64))
    with pytest.raises(RuntimeError, match=message):
        run_op(kind, x)


def test_sigmoid_of_complex_keeps_the_imaginary_part():
    z = np.array([1 + 2j, -1 - 1j], np.complex64)
    out = run_op("aten::sigmoid", irjit.Tensor(z)).data
    assert out.dtype == np.complex64
    np.testing.assert_allclose(out, 1 / (1 + np.exp(-z.astype(np.complex128))), rtol=1e-5)
