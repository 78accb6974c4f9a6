"""Which algorithm computes a convolution product, by shape and mode, and the scratch it needs:
im2col + GEMM (conv.py) or the direct kernel (conv_direct.py). The rule follows
`python -m irjit.tools.bench_conv`, which times both on the same shapes."""

from __future__ import annotations

from . import conv_direct, simd
from .conv import Conv2dShape, conv2d_scratch_elems


def direct_applies(shape: Conv2dShape, mode: str, dtype: str) -> bool:
    """Whether the direct kernel computes the product of `mode` for `shape`: forward with a
    width stride up to 2, grad_input with stride 1 (and padding within the taps' reach), not
    grad_weight, not depthwise (conv.py has a kernel of its own for those)."""
    s = shape
    if mode == "grad_weight" or s.group_in == 1 or s.batch == 0:
        return False
    if mode == "forward":
        return conv_direct.direct_plan(s, dtype) is not None
    return conv_direct.grad_input_applies(s)


# The direct kernel wins (tools/bench_conv.py, one core, float32) where a group has few
# channels and its output rows fill vectors: 1.7-4.5x faster on 3-32 channels at 8x8 to 224x224,
# 1.2x on 64 channels at 28x28, 1.1-1.2x forward up to 256 channels at 7x7-14x14; im2col + GEMM
# wins on 512 channels at 7x7 (2x: each output row re-reads every weight), on input gradients
# from 128 channels (0.8-1.0x direct, which also flips the weights), on rows shorter than half a
# vector (4x4: 0.55x), on 1x1 convolutions (no im2col copy to save) and on tiny ones, where
# padding and flipping cost more than they save.
MAX_CHANNEL_PRODUCT = {"forward": 65536, "grad_input": 8192}  # group_in * group_out
MIN_MACS = 100_000


def conv_algorithm(shape: Conv2dShape, mode: str, dtype: str) -> str:
    """"direct" or "im2col" for the product of `mode` ("forward", "grad_input", "grad_weight")."""
    s = shape
    if not direct_applies(s, mode, dtype) or s.is_pointwise:
        return "im2col"
    out_w = s.out_w if mode == "forward" else s.width
    macs = s.batch * s.out_channels * s.pixels * s.patch
    if s.group_in * s.group_out > MAX_CHANNEL_PRODUCT[mode] or macs < MIN_MACS or \
            2 * out_w < simd.lanes(dtype):
        return "im2col"
    return "direct"


def scratch_elems(shape: Conv2dShape, mode: str, dtype: str, algorithm: str) -> int:
    """Elements of the scratch buffer the product needs (0: none)."""
    if algorithm == "direct":
        return conv_direct.direct_scratch_elems(shape, mode, dtype)
    return conv2d_scratch_elems(shape)
