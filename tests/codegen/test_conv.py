"""conv2d emitted by `conv` (im2col + GEMM) against the op layer's numpy convolution and its
`aten::convolution_backward`: stride, padding, dilation, groups (depthwise too), bias, 1x1,
padding wider than the input, an empty batch, float32 and float64."""

from __future__ import annotations

import numpy as np
import pytest

from irjit.compiler.codegen import conv
from irjit.compiler.codegen.conv import Conv2dShape
from irjit.ops import registry
from tests.codegen.blas_jit import compile_function

CASES = {
    "basic": Conv2dShape(2, 3, 7, 6, 4, 3, 3),
    "stride_padding_groups": Conv2dShape(2, 4, 9, 8, 6, 3, 2, stride=(2, 1), padding=(1, 2), groups=2),
    "dilation": Conv2dShape(1, 2, 10, 9, 3, 3, 3, stride=(1, 2), padding=(2, 1), dilation=(2, 3)),
    "depthwise": Conv2dShape(2, 5, 8, 8, 5, 3, 3, padding=(1, 1), groups=5),
    "depthwise_multiplier": Conv2dShape(2, 3, 6, 7, 6, 3, 3, stride=(2, 2), padding=(1, 1), groups=3),
    "pointwise": Conv2dShape(2, 6, 5, 4, 4, 1, 1, groups=2),
    "pointwise_strided": Conv2dShape(2, 3, 5, 6, 4, 1, 1, stride=(2, 2)),
    "padding_wider_than_input": Conv2dShape(1, 1, 2, 2, 2, 3, 3, padding=(3, 3)),
    "kernel_covers_input": Conv2dShape(3, 2, 4, 5, 3, 4, 5),
    "taps_only_in_padding": Conv2dShape(2, 2, 1, 3, 3, 3, 3, padding=(1, 1)),
    "empty_batch": Conv2dShape(0, 3, 5, 5, 2, 3, 3),
}


def compile_conv(shape: Conv2dShape, dtype: str, with_bias: bool):
    """One JIT function running the forward pass and all three gradients."""
    def build(b, args):
        x, w, bias, out, grad_out, grad_in, grad_w, grad_b, scratch = args
        conv.emit_conv2d_forward(b, dtype, shape, x, w, bias if with_bias else None, out, scratch)
        conv.emit_conv2d_grad_input(b, dtype, shape, grad_out, w, grad_in, scratch)
        conv.emit_conv2d_grad_weight(b, dtype, shape, x, grad_out, grad_w, scratch)
        conv.emit_conv2d_grad_bias(b, dtype, shape, grad_out, grad_b)
    return compile_function(build, [{"float32": "f32*", "float64": "f64*"}[dtype]] * 9)


# float64 checks every case tightly; float32 (each compile costs ~0.4 s) the main code paths
RUNS = [(name, "float64") for name in CASES] + [
    (name, "float32") for name in ("basic", "stride_padding_groups", "depthwise_multiplier", "pointwise")]


@pytest.mark.parametrize("name,dtype", RUNS)
def test_conv2d_forward_and_backward_match_the_op_layer(name, dtype):
    s = CASES[name]
    with_bias = name != "dilation"
    rng = np.random.default_rng(0)
    x = rng.standard_normal((s.batch, s.in_channels, s.height, s.width)).astype(dtype)
    w = rng.standard_normal((s.out_channels, s.group_in, s.kernel_h, s.kernel_w)).astype(dtype)
    bias = rng.standard_normal(s.out_channels).astype(dtype)
    grad_out = rng.standard_normal((s.batch, s.out_channels, s.out_h, s.out_w)).astype(dtype)
    out = np.full(grad_out.shape, np.nan, dtype)
    grad_in = np.full(x.shape, np.nan, dtype)
    grad_w = np.full(w.shape, np.nan, dtype)
    grad_b = np.full(bias.shape, np.nan, dtype)
    scratch = np.full(max(1, conv.conv2d_scratch_elems(s)), np.nan, dtype)

    compile_conv(s, dtype, with_bias)(x, w, bias, out, grad_out, grad_in, grad_w, grad_b, scratch)

    args = (list(s.stride), list(s.padding), list(s.dilation))
    expected = registry.get("aten::conv2d").impl(x, w, bias if with_bias else None, *args, s.groups)
    e_in, e_w, e_b = registry.get("aten::convolution_backward").impl(
        grad_out, x, w, [s.out_channels], *args, False, [0, 0], s.groups, [True, True, True])
    tol = dict(rtol=2e-4, atol=2e-4) if dtype == "float32" else dict(rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(out, expected, **tol)
    np.testing.assert_allclose(grad_in, e_in, **tol)
    np.testing.assert_allclose(grad_w, e_w, **tol)
    np.testing.assert_allclose(grad_b, e_b, **tol)


def test_pointwise_convolutions_need_no_scratch():
    assert conv.conv2d_scratch_elems(CASES["pointwise"]) == 0
    s = CASES["basic"]
    assert conv.conv2d_scratch_elems(s) == 3 * 3 * 3 * 5 * 4


@pytest.mark.parametrize("kwargs,message", [
    (dict(groups=2), "must divide"),
    (dict(stride=(0, 1)), "must be positive"),
    (dict(kernel_h=9), "larger than the padded input"),
])
def test_invalid_geometry_is_rejected(kwargs, message):
    base = dict(batch=1, in_channels=3, height=5, width=5, out_channels=4, kernel_h=3, kernel_w=3)
    with pytest.raises(ValueError, match=message):
        Conv2dShape(**{**base, **kwargs})


def test_shape_of_op_arguments():
    s = Conv2dShape.of((2, 6, 9, 8), (4, 3, 3, 2), stride=2, padding=[1, 0], dilation=[1], groups=2)
    assert s == Conv2dShape(2, 6, 9, 8, 4, 3, 2, stride=(2, 2), padding=(1, 0), dilation=(1, 1), groups=2)
    assert (s.out_h, s.out_w) == (5, 4)
    with pytest.raises(ValueError, match="to have 6 channels"):
        Conv2dShape.of((2, 5, 9, 8), (4, 3, 3, 2), groups=2)
