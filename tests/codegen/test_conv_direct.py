"""The direct convolution kernel (conv_direct.py) against the op layer's numpy convolution: the
forward pass and the input gradient (a direct convolution of the padded output gradient with
flipped weights), width strides 1 and 2, height strides, dilation, groups, padding wider than
the input, rows that end in a partial vector, with and without bias, float32 and float64; every
array sits between NaN guards, so a read outside it poisons the result and a write outside it
shows in the guards; on several threads the results are bit-identical to one thread. And the
rule that picks the algorithm per shape."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

from irjit.compiler.codegen import conv_algorithm, conv_direct, parallel, simd
from irjit.compiler.codegen.conv import Conv2dShape
from irjit.compiler.codegen.emit import emit_convolution
from irjit.compiler.codegen.kernel import Buffer, Convolution
from irjit.compiler.codegen.library import CodeLibrary, new_module
from irjit.ops import registry

CASES = {
    "resnet_like": Conv2dShape(2, 16, 12, 12, 16, 3, 3, padding=(1, 1)),
    "partial_vector_rows": Conv2dShape(2, 3, 9, 21, 5, 3, 3, padding=(1, 1)),
    "width_stride_2": Conv2dShape(2, 4, 11, 37, 6, 3, 3, stride=(2, 2), padding=(1, 1)),
    "height_stride_3_dilation": Conv2dShape(1, 4, 14, 20, 3, 3, 2, stride=(3, 1), padding=(2, 1),
                                            dilation=(2, 3)),
    "groups": Conv2dShape(2, 6, 8, 19, 9, 3, 3, padding=(1, 1), groups=3),
    "padding_wider_than_input": Conv2dShape(1, 2, 2, 3, 4, 3, 3, padding=(3, 3)),
    "many_output_channels": Conv2dShape(1, 2, 5, 40, 50, 3, 1, padding=(1, 0)),
    "no_padding": Conv2dShape(2, 3, 7, 18, 4, 2, 3),
}
GUARD = 64  # NaN elements before and after every array


def guarded(array: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(a NaN-padded copy, the view of `array`'s elements inside it)."""
    flat = np.full(array.size + 2 * GUARD, np.nan, array.dtype)
    inner = flat[GUARD:GUARD + array.size].reshape(array.shape)
    inner[...] = array
    return flat, inner


def compile_product(shape: Conv2dShape, mode: str, dtype: str, with_bias: bool):
    """A callable running the direct product of `mode` on (source, weight, bias, out, scratch)."""
    np_dtype = np.dtype(dtype)
    product = Convolution(shape, 0 if mode == "forward" else None, 1, 2 if with_bias else None, 3, 4,
                          np_dtype, mode, grad=0 if mode == "grad_input" else None,
                          algorithm="direct")
    buffers = [Buffer(i, np_dtype, (), (), i >= 3) for i in range(5)]
    module = new_module(f"test_conv_direct_{mode}_{dtype}_{with_bias}_{abs(hash(shape))}_"
                        f"{parallel.thread_count()}")
    emit_convolution(module, "product", buffers, product)
    module.get_global("product").linkage = "external"
    library = CodeLibrary(module)
    library.finalize()
    fn = ctypes.CFUNCTYPE(ctypes.c_int32, *[ctypes.c_void_p] * 5)(library.address("product"))

    def call(*arrays):
        assert fn(*[a.ctypes.data for a in arrays]) == 0
    call.library = library
    return call


def run_direct(shape: Conv2dShape, mode: str, dtype: str, with_bias: bool, seed: int = 0):
    """(result, expected) of the direct product on random data, all arrays NaN-guarded."""
    s = shape
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((s.batch, s.in_channels, s.height, s.width)).astype(dtype)
    w = rng.standard_normal((s.out_channels, s.group_in, s.kernel_h, s.kernel_w)).astype(dtype)
    bias = rng.standard_normal(s.out_channels).astype(dtype)
    grad_out = rng.standard_normal((s.batch, s.out_channels, s.out_h, s.out_w)).astype(dtype)
    args = (list(s.stride), list(s.padding), list(s.dilation))
    if mode == "forward":
        source = x
        expected = registry.get("aten::conv2d").impl(x, w, bias if with_bias else None, *args, s.groups)
    else:
        source = grad_out
        expected, _, _ = registry.get("aten::convolution_backward").impl(
            grad_out, x, w, [s.out_channels], *args, False, [0, 0], s.groups, [True, False, False])
    out = np.zeros(expected.shape, dtype)
    scratch = np.zeros(conv_direct.direct_scratch_elems(s, mode, dtype), dtype)
    guards = [guarded(a) for a in (source, w, bias, out, scratch)]
    compile_product(s, mode, dtype, with_bias)(*[inner for _, inner in guards])
    for flat, _ in guards:
        assert np.isnan(flat[:GUARD]).all() and np.isnan(flat[-GUARD:]).all(), "a write outside an array"
    return guards[3][1].copy(), expected


RUNS = [(name, mode, dtype) for name in CASES for mode in ("forward", "grad_input")
        for dtype in ("float64", "float32")
        if mode == "forward" or conv_direct.grad_input_applies(CASES[name])]


@pytest.mark.parametrize("name,mode,dtype", RUNS)
def test_direct_kernel_matches_the_op_layer(name, mode, dtype, monkeypatch):
    monkeypatch.setattr(parallel, "thread_count", lambda: 1)
    with_bias = mode == "forward" and name != "groups"
    got, expected = run_direct(CASES[name], mode, dtype, with_bias)
    tol = dict(rtol=2e-4, atol=2e-4) if dtype == "float32" else dict(rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(got, expected, **tol)


@pytest.mark.parametrize("mode", ["forward", "grad_input"])
@pytest.mark.parametrize("cores", [2, 3])
def test_threads_give_the_single_thread_result(mode, cores, monkeypatch):
    shape = CASES["resnet_like"]
    monkeypatch.setattr(parallel, "thread_count", lambda: 1)
    single, _ = run_direct(shape, mode, "float32", mode == "forward")
    monkeypatch.setattr(parallel, "thread_count", lambda: cores)
    monkeypatch.setattr(conv_direct, "THREAD_MACS", 0)
    multi, _ = run_direct(shape, mode, "float32", mode == "forward")
    assert single.tobytes() == multi.tobytes()


def test_the_input_gradient_needs_stride_1_and_padding_within_reach():
    assert conv_direct.grad_input_applies(CASES["resnet_like"])
    assert not conv_direct.grad_input_applies(CASES["width_stride_2"])
    assert not conv_direct.grad_input_applies(CASES["padding_wider_than_input"])
    assert conv_direct.direct_plan(Conv2dShape(1, 2, 9, 9, 2, 3, 3, stride=(1, 3)), "float32") is None


def test_rule_picks_direct_for_few_channels_and_im2col_elsewhere():
    pick = conv_algorithm.conv_algorithm
    resnet = Conv2dShape(8, 16, 32, 32, 16, 3, 3, padding=(1, 1))
    assert pick(resnet, "forward", "float32") == pick(resnet, "grad_input", "float32") == "direct"
    assert pick(resnet, "grad_weight", "float32") == "im2col"
    wide = Conv2dShape(1, 512, 7, 7, 512, 3, 3, padding=(1, 1))
    assert pick(wide, "forward", "float32") == "im2col"
    assert pick(Conv2dShape(8, 16, 8, 8, 32, 1, 1), "forward", "float32") == "im2col"  # 1x1
    assert pick(Conv2dShape(8, 16, 8, 8, 16, 3, 3, groups=16), "forward", "float32") == "im2col"
    assert pick(Conv2dShape(1, 3, 8, 8, 32, 3, 3), "forward", "float32") == "im2col"  # tiny
    assert pick(Conv2dShape(32, 64, 4, 4, 64, 3, 3, padding=(1, 1)), "forward", "float32") == "im2col"


def test_plan_tiles_cover_the_channels_within_the_register_budget():
    plan = conv_direct.direct_plan(Conv2dShape(8, 16, 32, 32, 16, 3, 3, padding=(1, 1)), "float32")
    assert sum(plan.channels) == 16 and max(plan.channels) - min(plan.channels) <= 1
    assert max(plan.channels) * plan.vectors <= simd.vector_registers() * 3 // 4
    assert plan.padded_h == 34 and plan.padded_w >= 34


@pytest.mark.parametrize("name", ["partial_vector_rows", "width_stride_2", "no_padding"])
@pytest.mark.parametrize("mode", ["forward", "grad_input"])
def test_no_read_or_write_past_an_array(name, mode, monkeypatch):
    """Every array ends at an unreadable page: a read or write past any faults."""
    from .guard_pages import array_before_guard, runs_without_a_fault
    shape = CASES[name]
    if mode == "grad_input" and not conv_direct.grad_input_applies(shape):
        pytest.skip("the input gradient of this shape is not direct")
    monkeypatch.setattr(parallel, "thread_count", lambda: 1)
    s = shape
    rng = np.random.default_rng(7)
    src_shape = (s.batch, s.in_channels, s.height, s.width) if mode == "forward" else \
        (s.batch, s.out_channels, s.out_h, s.out_w)
    out_shape = (s.batch, s.out_channels, s.out_h, s.out_w) if mode == "forward" else \
        (s.batch, s.in_channels, s.height, s.width)
    arrays = [array_before_guard(rng.standard_normal(src_shape).astype(np.float32)),
              array_before_guard(rng.standard_normal((s.out_channels, s.group_in, s.kernel_h,
                                                      s.kernel_w)).astype(np.float32)),
              array_before_guard(rng.standard_normal(s.out_channels).astype(np.float32)),
              array_before_guard(np.zeros(out_shape, np.float32)),
              array_before_guard(np.zeros(conv_direct.direct_scratch_elems(s, mode, "float32"), np.float32))]
    call = compile_product(s, mode, "float32", mode == "forward")
    assert runs_without_a_fault(lambda: call(*arrays))
