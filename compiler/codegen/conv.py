"""2-D convolution for generated code, as im2col + GEMM (`blas.emit_gemm`): the forward pass
and the three pieces of `aten::convolution_backward` (grad_input as GEMM + col2im, grad_weight as
im2col + GEMM, grad_bias as a reduction), for float32 and float64.

Every tensor is contiguous NCHW (weights OIHW) and the geometry is known when the code is
generated (`Conv2dShape`); the emitters take element pointers. im2col needs a caller-provided
scratch buffer of `conv2d_scratch_elems(shape)` elements (0 for 1x1 convolutions with stride 1
and no padding, which multiply the input directly; then the scratch pointer may be None).

Convolutions with one input channel a group (depthwise) run a direct kernel for the forward pass
and grad_input instead: each output row is a sum of shifted input rows, which vectorizes, while
im2col + GEMM makes m=1 products (measured here, float32, 1 thread: 32 channels of 56x56, 3x3,
89 µs direct vs 212 µs im2col + GEMM; 128 channels of 14x14 104 vs 106 µs)."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator, Optional, Sequence

from llvmlite import ir

from irjit.ops.nn_conv import expand_param

from . import blas
from .blas import Matrix
from .ir_loops import copy_elements, element, entry_alloca, for_range, i64, smax, smin


@dataclass(frozen=True)
class Conv2dShape:
    """A batched grouped 2-D convolution: input (batch, in_channels, height, width), weight
    (out_channels, in_channels / groups, kernel_h, kernel_w)."""
    batch: int
    in_channels: int
    height: int
    width: int
    out_channels: int
    kernel_h: int
    kernel_w: int
    stride: tuple[int, int] = (1, 1)
    padding: tuple[int, int] = (0, 0)
    dilation: tuple[int, int] = (1, 1)
    groups: int = 1

    @classmethod
    def of(cls, input_shape: Sequence[int], weight_shape: Sequence[int], stride=1, padding=0,
           dilation=1, groups: int = 1) -> "Conv2dShape":
        """The shape of `aten::conv2d(input, weight, bias, stride, padding, dilation, groups)` on
        a batched input; int-or-list arguments as the op takes them."""
        if len(input_shape) != 4 or len(weight_shape) != 4:
            raise ValueError(f"conv2d needs a 4-D input and weight, got {list(input_shape)} and "
                             f"{list(weight_shape)}")
        if input_shape[1] != weight_shape[1] * groups:
            raise ValueError(f"Given groups={groups}, weight of size {list(weight_shape)}, expected "
                             f"input{list(input_shape)} to have {weight_shape[1] * groups} channels")
        pair = lambda v, name: tuple(expand_param(v, 2, name))
        return cls(*input_shape, weight_shape[0], *weight_shape[2:], stride=pair(stride, "stride"),
                   padding=pair(padding, "padding"), dilation=pair(dilation, "dilation"),
                   groups=int(groups))

    def __post_init__(self):
        if self.groups < 1 or self.in_channels % self.groups or self.out_channels % self.groups:
            raise ValueError(f"groups={self.groups} must divide in_channels={self.in_channels} and "
                             f"out_channels={self.out_channels}")
        if min(self.stride) < 1 or min(self.dilation) < 1 or min(self.padding) < 0:
            raise ValueError(f"stride {self.stride} and dilation {self.dilation} must be positive, "
                             f"padding {self.padding} non-negative")
        if self.out_h < 1 or self.out_w < 1:
            raise ValueError(f"kernel {self.kernel_h}x{self.kernel_w} (dilation {self.dilation}) is "
                             f"larger than the padded input {self.height}x{self.width} "
                             f"(padding {self.padding})")

    @property
    def out_h(self) -> int:
        return _out_size(self.height, self.kernel_h, self.stride[0], self.padding[0], self.dilation[0])

    @property
    def out_w(self) -> int:
        return _out_size(self.width, self.kernel_w, self.stride[1], self.padding[1], self.dilation[1])

    @property
    def group_in(self) -> int:
        return self.in_channels // self.groups

    @property
    def group_out(self) -> int:
        return self.out_channels // self.groups

    @property
    def patch(self) -> int:
        """Rows of the im2col matrix: one per (input channel of a group, ky, kx)."""
        return self.group_in * self.kernel_h * self.kernel_w

    @property
    def pixels(self) -> int:
        return self.out_h * self.out_w

    @property
    def is_pointwise(self) -> bool:
        """1x1, stride 1, no padding: the input itself is the im2col matrix."""
        return (self.kernel_h, self.kernel_w, self.stride, self.padding) == (1, 1, (1, 1), (0, 0))


def _out_size(size: int, kernel: int, stride: int, padding: int, dilation: int) -> int:
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def conv2d_scratch_elems(shape: Conv2dShape) -> int:
    """Elements of the scratch buffer every emitter here needs: one image-group's im2col matrix."""
    return 0 if shape.is_pointwise else shape.patch * shape.pixels


def emit_conv2d_forward(builder: ir.IRBuilder, dtype: str, shape: Conv2dShape, x: ir.Value,
                        weight: ir.Value, bias: Optional[ir.Value], out: ir.Value,
                        scratch: Optional[ir.Value]) -> None:
    """out = conv2d(x, weight, bias): per image and group, out[n, g] = W[g] @ im2col(x[n, g]);
    one input channel a group (depthwise) runs the direct kernel instead."""
    s, b = shape, builder
    if s.group_in == 1:
        _emit_depthwise_forward(b, s, x, weight, bias, out)
        return
    with _images_and_groups(b, s) as (n, g):
        cols = _input_matrix(b, s, x, n, g, scratch)
        w_g = element(b, weight, b.mul(g, i64(s.group_out * s.patch)))
        blas.emit_gemm(b, dtype, s.group_out, s.pixels, s.patch, Matrix(w_g, s.patch, 1), cols,
                       Matrix(_output_plane(b, s, out, n, g), s.pixels, 1))
    if bias is not None:
        with for_range(b, 0, s.batch, name="n") as n:
            with for_range(b, 0, s.out_channels, name="c") as c:
                value = b.load(element(b, bias, c))
                row = element(b, out, b.mul(b.add(b.mul(n, i64(s.out_channels)), c), i64(s.pixels)))
                with for_range(b, 0, s.pixels, name="p") as p:
                    slot = element(b, row, p)
                    b.store(b.fadd(b.load(slot), value), slot)


def emit_conv2d_grad_input(builder: ir.IRBuilder, dtype: str, shape: Conv2dShape,
                           grad_out: ir.Value, weight: ir.Value, grad_in: ir.Value,
                           scratch: Optional[ir.Value]) -> None:
    """grad_in = col2im(W[g]^T @ grad_out[n, g]) per image and group (padding positions drop);
    one input channel a group (depthwise) runs the direct kernel instead."""
    s, b = shape, builder
    if s.group_in == 1:
        _emit_depthwise_grad_input(b, s, grad_out, weight, grad_in)
        return
    if not s.is_pointwise:
        _emit_fill_zero(b, grad_in, s.batch * s.in_channels * s.height * s.width)
    with _images_and_groups(b, s) as (n, g):
        w_g = element(b, weight, b.mul(g, i64(s.group_out * s.patch)))
        g_ng = Matrix(_output_plane(b, s, grad_out, n, g), s.pixels, 1)
        target = _input_plane(b, s, grad_in, n, g) if s.is_pointwise else scratch
        blas.emit_gemm(b, dtype, s.patch, s.pixels, s.group_out, Matrix(w_g, 1, s.patch), g_ng,
                       Matrix(target, s.pixels, 1))
        if not s.is_pointwise:
            _emit_col2im(b, s, scratch, _input_plane(b, s, grad_in, n, g))


def emit_conv2d_grad_weight(builder: ir.IRBuilder, dtype: str, shape: Conv2dShape, x: ir.Value,
                            grad_out: ir.Value, grad_weight: ir.Value,
                            scratch: Optional[ir.Value]) -> None:
    """grad_weight[g] = sum over images of grad_out[n, g] @ im2col(x[n, g])^T."""
    s, b = shape, builder
    if s.batch == 0:
        _emit_fill_zero(b, grad_weight, s.out_channels * s.patch)
        return
    ety = blas.ELEMENT_TYPES[dtype]
    with _images_and_groups(b, s) as (n, g):
        cols = _input_matrix(b, s, x, n, g, scratch)
        first = b.icmp_signed("==", n, i64(0))
        beta = b.select(first, ir.Constant(ety, 0.0), ir.Constant(ety, 1.0))
        gw_g = element(b, grad_weight, b.mul(g, i64(s.group_out * s.patch)))
        blas.emit_gemm(b, dtype, s.group_out, s.patch, s.pixels,
                       Matrix(_output_plane(b, s, grad_out, n, g), s.pixels, 1), cols.transposed(),
                       Matrix(gw_g, s.patch, 1), beta=beta)


def emit_conv2d_grad_bias(builder: ir.IRBuilder, dtype: str, shape: Conv2dShape,
                          grad_out: ir.Value, grad_bias: ir.Value) -> None:
    """grad_bias[c] = the sum of grad_out[:, c] over images and pixels."""
    s, b = shape, builder
    ety = blas.ELEMENT_TYPES[dtype]
    with for_range(b, 0, s.out_channels, name="c") as c:
        total = entry_alloca(b, ety)
        b.store(ir.Constant(ety, 0.0), total)
        with for_range(b, 0, s.batch, name="n") as n:
            row = element(b, grad_out, b.mul(b.add(b.mul(n, i64(s.out_channels)), c), i64(s.pixels)))
            with for_range(b, 0, s.pixels, name="p") as p:
                # reassociated, so the sum splits into vector lanes
                b.store(b.fadd(b.load(total), b.load(element(b, row, p)), flags=("reassoc",)), total)
        b.store(b.load(total), element(b, grad_bias, c))


@contextmanager
def _images_and_groups(b: ir.IRBuilder, s: Conv2dShape) -> Iterator[tuple[ir.Value, ir.Value]]:
    with for_range(b, 0, s.batch, name="n") as n:
        with for_range(b, 0, s.groups, name="g") as g:
            yield n, g


def _input_plane(b: ir.IRBuilder, s: Conv2dShape, x: ir.Value, n, g) -> ir.Value:
    """&x[n, g * group_in, 0, 0]."""
    channel = b.add(b.mul(n, i64(s.in_channels)), b.mul(g, i64(s.group_in)))
    return element(b, x, b.mul(channel, i64(s.height * s.width)))


def _output_plane(b: ir.IRBuilder, s: Conv2dShape, out: ir.Value, n, g) -> ir.Value:
    """&out[n, g * group_out, 0, 0]."""
    channel = b.add(b.mul(n, i64(s.out_channels)), b.mul(g, i64(s.group_out)))
    return element(b, out, b.mul(channel, i64(s.pixels)))


def _input_matrix(b: ir.IRBuilder, s: Conv2dShape, x: ir.Value, n, g, scratch) -> Matrix:
    """The (patch × pixels) im2col matrix of image n, group g: the input itself when pointwise."""
    plane = _input_plane(b, s, x, n, g)
    if s.is_pointwise:
        return Matrix(plane, s.pixels, 1)
    _emit_im2col(b, s, plane, scratch)
    return Matrix(scratch, s.pixels, 1)


@contextmanager
def _patch_rows(b: ir.IRBuilder, s: Conv2dShape):
    """Loops over the im2col rows: yields (row, channel, valid oy range, row offset in the input
    for oy=0, valid ox range, column offset for ox=0) with padding positions outside the ranges."""
    with for_range(b, 0, s.group_in, name="ci") as ci:
        with for_range(b, 0, s.kernel_h, name="ky") as ky:
            with for_range(b, 0, s.kernel_w, name="kx") as kx:
                row = b.add(b.mul(b.add(b.mul(ci, i64(s.kernel_h)), ky), i64(s.kernel_w)), kx)
                y_off = b.sub(b.mul(ky, i64(s.dilation[0])), i64(s.padding[0]))
                x_off = b.sub(b.mul(kx, i64(s.dilation[1])), i64(s.padding[1]))
                y_range = _valid_range(b, y_off, s.stride[0], s.height, s.out_h,
                                       s.dilation[0] * (s.kernel_h - 1) + s.padding[0])
                x_range = _valid_range(b, x_off, s.stride[1], s.width, s.out_w,
                                       s.dilation[1] * (s.kernel_w - 1) + s.padding[1])
                yield row, ci, y_range, y_off, x_range, x_off


def _valid_range(b: ir.IRBuilder, offset, stride: int, size: int, out_size: int, reach: int):
    """[lo, hi): the outputs o with 0 <= o * stride + offset < size (0 <= lo <= hi <= out_size);
    |offset| <= reach."""
    shift = reach + 1  # ceil(a / stride) for a >= -reach, computed on a + shift * stride >= 0
    ceil_div = lambda a: b.sub(b.sdiv(b.add(a, i64(shift * stride + stride - 1)), i64(stride)), i64(shift))
    lo = smin(b, smax(b, 0, ceil_div(b.neg(offset))), out_size)
    hi = smax(b, lo, smin(b, out_size, ceil_div(b.sub(i64(size), offset))))
    return lo, hi


def _emit_im2col(b: ir.IRBuilder, s: Conv2dShape, plane: ir.Value, cols: ir.Value) -> None:
    """cols[row, oy * out_w + ox] = the input pixel that kernel tap `row` sees at (oy, ox), or 0."""
    ety = cols.type.pointee
    zero = ir.Constant(ety, 0.0)
    with _patch_rows(b, s) as (row, ci, (y_lo, y_hi), y_off, (x_lo, x_hi), x_off):
        row_ptr = element(b, cols, b.mul(row, i64(s.pixels)))
        channel = element(b, plane, b.mul(ci, i64(s.height * s.width)))
        with for_range(b, 0, s.out_h, name="oy") as oy:
            out_row = element(b, row_ptr, b.mul(oy, i64(s.out_w)))
            inside = b.and_(b.icmp_signed(">=", oy, y_lo), b.icmp_signed("<", oy, y_hi))
            # rows outside the input are all padding: an empty valid column range
            lo = b.select(inside, x_lo, i64(s.out_w))
            hi = b.select(inside, x_hi, i64(s.out_w))
            iy = b.add(b.mul(oy, i64(s.stride[0])), y_off)
            src = element(b, channel, b.mul(b.select(inside, iy, i64(0)), i64(s.width)))
            with for_range(b, 0, lo, name="ox") as ox:
                b.store(zero, element(b, out_row, ox))
            if s.stride[1] == 1:  # a contiguous run (as fast as the unrolled loop, less to compile)
                copy_elements(b, element(b, out_row, lo), element(b, src, b.add(lo, x_off)), b.sub(hi, lo))
            else:
                with for_range(b, lo, hi, name="ox") as ox:
                    ix = b.add(b.mul(ox, i64(s.stride[1])), x_off)
                    b.store(b.load(element(b, src, ix)), element(b, out_row, ox))
            with for_range(b, hi, s.out_w, name="ox") as ox:
                b.store(zero, element(b, out_row, ox))


def _emit_col2im(b: ir.IRBuilder, s: Conv2dShape, cols: ir.Value, plane: ir.Value) -> None:
    """plane[ci, iy, ix] += cols[row, oy * out_w + ox] for every tap inside the input."""
    with _patch_rows(b, s) as (row, ci, (y_lo, y_hi), y_off, (x_lo, x_hi), x_off):
        row_ptr = element(b, cols, b.mul(row, i64(s.pixels)))
        channel = element(b, plane, b.mul(ci, i64(s.height * s.width)))
        with for_range(b, y_lo, y_hi, name="oy") as oy:
            iy = b.add(b.mul(oy, i64(s.stride[0])), y_off)
            dst = element(b, channel, b.mul(iy, i64(s.width)))
            src = element(b, row_ptr, b.mul(oy, i64(s.out_w)))
            with for_range(b, x_lo, x_hi, name="ox") as ox:
                slot = element(b, dst, b.add(b.mul(ox, i64(s.stride[1])), x_off))
                b.store(b.fadd(b.load(slot), b.load(element(b, src, ox))), slot)


def _emit_depthwise_forward(b: ir.IRBuilder, s: Conv2dShape, x, weight, bias, out) -> None:
    """out[n, co] = bias[co] + the sum over taps of weight[co, tap] times the input channel
    co / group_out shifted by the tap: no im2col, and the inner loop vectorizes for stride 1."""
    zero = ir.Constant(out.type.pointee, 0.0)
    with _depthwise_planes(b, s) as (co, in_plane, out_plane):
        channel, dst = element(b, x, in_plane), element(b, out, out_plane)
        start = zero if bias is None else b.load(element(b, bias, co))
        with for_range(b, 0, s.pixels, name="p") as p:
            b.store(start, element(b, dst, p))
        with _patch_rows(b, s) as (tap, _, (y_lo, y_hi), y_off, (x_lo, x_hi), x_off):
            w = b.load(element(b, weight, b.add(b.mul(co, i64(s.patch)), tap)))
            with for_range(b, y_lo, y_hi, name="oy") as oy:
                src = element(b, channel, b.mul(b.add(b.mul(oy, i64(s.stride[0])), y_off), i64(s.width)))
                dst_row = element(b, dst, b.mul(oy, i64(s.out_w)))
                with for_range(b, x_lo, x_hi, name="ox") as ox:
                    value = b.load(element(b, src, b.add(b.mul(ox, i64(s.stride[1])), x_off)))
                    slot = element(b, dst_row, ox)
                    b.store(b.fadd(b.load(slot), b.fmul(w, value, flags=("contract",)),
                                   flags=("contract",)), slot)


def _emit_depthwise_grad_input(b: ir.IRBuilder, s: Conv2dShape, grad_out, weight, grad_in) -> None:
    """grad_in[n, ci] += weight[co, tap] * grad_out[n, co] scattered back through each tap."""
    _emit_fill_zero(b, grad_in, s.batch * s.in_channels * s.height * s.width)
    with _depthwise_planes(b, s) as (co, in_plane, out_plane):
        channel, src = element(b, grad_in, in_plane), element(b, grad_out, out_plane)
        with _patch_rows(b, s) as (tap, _, (y_lo, y_hi), y_off, (x_lo, x_hi), x_off):
            w = b.load(element(b, weight, b.add(b.mul(co, i64(s.patch)), tap)))
            with for_range(b, y_lo, y_hi, name="oy") as oy:
                dst = element(b, channel, b.mul(b.add(b.mul(oy, i64(s.stride[0])), y_off), i64(s.width)))
                src_row = element(b, src, b.mul(oy, i64(s.out_w)))
                with for_range(b, x_lo, x_hi, name="ox") as ox:
                    slot = element(b, dst, b.add(b.mul(ox, i64(s.stride[1])), x_off))
                    product = b.fmul(w, b.load(element(b, src_row, ox)), flags=("contract",))
                    b.store(b.fadd(b.load(slot), product, flags=("contract",)), slot)


@contextmanager
def _depthwise_planes(b: ir.IRBuilder, s: Conv2dShape) -> Iterator[tuple[ir.Value, ir.Value, ir.Value]]:
    """Loops over (image n, output channel co) of a depthwise convolution: yields co and the
    element offsets of input plane [n, co / group_out] and output plane [n, co]."""
    with for_range(b, 0, s.batch, name="n") as n:
        with for_range(b, 0, s.out_channels, name="co") as co:
            ci = b.add(b.mul(n, i64(s.in_channels)), b.sdiv(co, i64(s.group_out)))
            plane = b.mul(b.add(b.mul(n, i64(s.out_channels)), co), i64(s.pixels))
            yield co, b.mul(ci, i64(s.height * s.width)), plane


def _emit_fill_zero(b: ir.IRBuilder, ptr: ir.Value, count: int) -> None:
    zero = ir.Constant(ptr.type.pointee, 0.0)
    with for_range(b, 0, count, name="z") as i:
        b.store(zero, element(b, ptr, i))

