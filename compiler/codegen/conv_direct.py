"""Direct 2-D convolution with explicit SIMD vectors, for shapes where im2col + GEMM spends its
time on the im2col copy and on GEMMs with few output channels (conv.py picks the algorithm per
shape, by measurement).

The input is first copied into a zero-padded buffer (`padded_input`), so every read is in
bounds and no tap needs a condition. Then each register tile — `channels` output channels times
`vectors` vectors of an output row — starts from the bias, accumulates over the input channels
of its group and the kernel taps (a broadcast weight times a vector of input pixels: one fused
multiply-add per accumulator) and is stored once. Width strides 1 and 2 (2: two loads and an
even-lane shuffle); any height stride, dilation, padding and groups. The work is split into
items (image, group, output row) that `threads.py` can hand to several threads: each item
writes its own output rows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from llvmlite import ir

from . import simd
from .conv import Conv2dShape
from .ir_loops import element, entry_alloca, for_range, i64

MAX_VECTORS = 4  # vectors of one output row per register tile


@dataclass(frozen=True)
class DirectPlan:
    """How the direct kernel tiles one convolution: `lanes` elements a vector, `vectors`
    vectors of an output row per tile, output-channel blocks of `channels` (summing to
    group_out), and the padded input plane's height and width."""
    lanes: int
    vectors: int
    channels: tuple[int, ...]
    padded_h: int
    padded_w: int


def direct_plan(shape: Conv2dShape, dtype: str) -> Optional[DirectPlan]:
    """The tiling of `shape` for the direct kernel, or None when it does not apply (a width
    stride above 2)."""
    s = shape
    if s.stride[1] > 2:
        return None
    lanes = simd.lanes(dtype)
    while lanes > 4 and lanes // 2 >= s.out_w:  # short rows: narrower vectors waste fewer lanes
        lanes //= 2
    row = -(-s.out_w // lanes)
    vectors = min(row, MAX_VECTORS)
    budget = simd.vector_registers() * 3 // 4  # accumulators; the rest hold input vectors
    most = max(1, budget // vectors)
    blocks = -(-s.group_out // most)
    base, extra = divmod(s.group_out, blocks)
    channels = tuple([base + 1] * extra + [base] * (blocks - extra))
    padded_h = s.height + 2 * s.padding[0]
    padded_w = max(s.width + 2 * s.padding[1],
                   row * lanes * s.stride[1] + (s.kernel_w - 1) * s.dilation[1])
    return DirectPlan(lanes, vectors, channels, padded_h, padded_w)


def padded_input_elems(shape: Conv2dShape, plan: DirectPlan) -> int:
    """Elements of the zero-padded copy of the whole input."""
    return shape.batch * shape.in_channels * plan.padded_h * plan.padded_w


def direct_items(shape: Conv2dShape) -> int:
    """Work items of `emit_direct_items`: one per (image, group, output row)."""
    return shape.batch * shape.groups * shape.out_h


def direct_macs(shape: Conv2dShape) -> int:
    """Multiply-adds of the convolution (the threading estimate)."""
    s = shape
    return s.batch * s.out_channels * s.pixels * s.patch


def emit_padded_input(b: ir.IRBuilder, shape: Conv2dShape, plan: DirectPlan, x: ir.Value,
                      padded: ir.Value, planes=None) -> None:
    """padded[p, r, c] = x[p, r - pad_h, c - pad_w] inside the input, else 0, for the planes
    (image, channel) in `planes` ([start, stop), default all)."""
    s = shape
    ety = padded.type.pointee
    zero = ir.Constant(ety, 0.0)
    ph, pw = plan.padded_h, plan.padded_w
    py, px = s.padding
    start, stop = planes if planes is not None else (0, s.batch * s.in_channels)
    with for_range(b, start, stop, name="plane") as p:
        src_plane = element(b, x, b.mul(p, i64(s.height * s.width)))
        dst_plane = element(b, padded, b.mul(p, i64(ph * pw)))
        with for_range(b, 0, ph, name="r") as r:
            iy = b.sub(r, i64(py))
            inside = b.and_(b.icmp_signed(">=", iy, i64(0)), b.icmp_signed("<", iy, i64(s.height)))
            lo = b.select(inside, i64(px), i64(pw))
            hi = b.select(inside, i64(px + s.width), i64(pw))
            src = element(b, src_plane, b.mul(b.select(inside, iy, i64(0)), i64(s.width)))
            dst = element(b, dst_plane, b.mul(r, i64(pw)))
            with for_range(b, 0, lo, name="c") as c:
                b.store(zero, element(b, dst, c))
            with for_range(b, lo, hi, name="c") as c:
                b.store(b.load(element(b, src, b.sub(c, i64(px)))), element(b, dst, c))
            with for_range(b, hi, pw, name="c") as c:
                b.store(zero, element(b, dst, c))


def _row_segments(shape: Conv2dShape, plan: DirectPlan) -> list[tuple[int, int, int, int]]:
    """The tiles along an output row as (first tile, tile count, vectors a tile, valid lanes of
    its last vector): runs of whole tiles, then the shorter or partial ones."""
    lanes, vectors = plan.lanes, plan.vectors
    row = -(-shape.out_w // lanes)
    last_lanes = shape.out_w - (row - 1) * lanes
    full, rest = divmod(row, vectors)
    segments = []
    if rest:
        if full:
            segments.append((0, full, vectors, lanes))
        segments.append((full, 1, rest, last_lanes))
    elif last_lanes == lanes:
        segments.append((0, full, vectors, lanes))
    else:
        if full > 1:
            segments.append((0, full - 1, vectors, lanes))
        segments.append((full - 1, 1, vectors, last_lanes))
    return segments


def emit_direct_items(b: ir.IRBuilder, dtype: str, shape: Conv2dShape, plan: DirectPlan,
                      padded: ir.Value, weight: ir.Value, bias: Optional[ir.Value], out: ir.Value,
                      start, stop) -> None:
    """out rows of the work items [start, stop) (see `direct_items`), reading the padded input;
    `bias` (or None) starts every accumulator."""
    s = shape
    ety = simd.ELEMENT_TYPES[dtype]
    vty = ir.VectorType(ety, plan.lanes)
    with for_range(b, start, stop, name="item") as item:
        oy = b.srem(item, i64(s.out_h))
        ng = b.sdiv(item, i64(s.out_h))
        g = b.srem(ng, i64(s.groups))
        n = b.sdiv(ng, i64(s.groups))
        # the input rows this output row reads start at padded row oy * stride_h
        in_rows = element(b, padded, b.mul(
            b.add(b.mul(b.add(b.mul(n, i64(s.in_channels)), b.mul(g, i64(s.group_in))),
                        i64(plan.padded_h)), b.mul(oy, i64(s.stride[0]))), i64(plan.padded_w)))
        first_co = b.mul(g, i64(s.group_out))
        out_row = element(b, out, b.add(b.mul(b.add(b.mul(n, i64(s.out_channels)), first_co),
                                              i64(s.pixels)), b.mul(oy, i64(s.out_w))))
        block_start = 0
        for size in sorted(set(plan.channels), reverse=True):
            count = plan.channels.count(size)
            with for_range(b, 0, count, name="cb") as cb:
                co0 = b.add(i64(block_start), b.mul(cb, i64(size)))
                for first, tiles, vectors, last_lanes in _row_segments(s, plan):
                    with for_range(b, first, first + tiles, name="xt") as xt:
                        ox0 = b.mul(xt, i64(plan.vectors * plan.lanes))
                        _emit_tile(b, s, plan, vty, in_rows, weight, bias,
                                   b.add(first_co, co0), out_row, co0, ox0, size, vectors, last_lanes)
            block_start += count * size


def _emit_tile(b: ir.IRBuilder, s: Conv2dShape, plan: DirectPlan, vty: ir.VectorType,
               in_rows, weight, bias, channel, out_row, co0, ox0, channels: int, vectors: int,
               last_lanes: int) -> None:
    """One register tile: output channels [channel, channel + channels) (co0 within the group)
    by `vectors` vectors from output column ox0."""
    ety, lanes = vty.element, plan.lanes
    zero = simd.zeros(vty)
    acc = [[entry_alloca(b, vty) for _ in range(vectors)] for _ in range(channels)]
    for c in range(channels):
        start = zero if bias is None else simd.splat(
            b, b.load(element(b, bias, b.add(channel, i64(c)))), lanes)
        for v in range(vectors):
            b.store(start, acc[c][v])
    plane = plan.padded_h * plan.padded_w
    taps = s.kernel_h * s.kernel_w
    sx, dx, dy = s.stride[1], s.dilation[1], s.dilation[0]
    column = b.mul(ox0, i64(sx))
    w_tile = element(b, weight, b.mul(channel, i64(s.patch)))
    with for_range(b, 0, s.group_in, name="ci") as ci:
        channel_rows = element(b, in_rows, b.add(b.mul(ci, i64(plane)), column))
        w_ci = element(b, w_tile, b.mul(ci, i64(taps)))
        with for_range(b, 0, s.kernel_h, name="ky") as ky:
            row = element(b, channel_rows, b.mul(ky, i64(dy * plan.padded_w)))
            w_ky = element(b, w_ci, b.mul(ky, i64(s.kernel_w)))
            for kx in range(s.kernel_w):
                pixels = []
                for v in range(vectors):
                    at = element(b, row, i64(kx * dx + v * lanes * sx))
                    if sx == 1:
                        pixels.append(simd.load_vector(b, at, ety, lanes))
                    else:
                        pixels.append(simd.even_lanes(b, simd.load_vector(b, at, ety, lanes),
                                                      simd.load_vector(b, element(b, at, i64(lanes)),
                                                                       ety, lanes)))
                for c in range(channels):
                    w = simd.splat(b, b.load(element(b, w_ky, i64(c * s.patch + kx))), lanes)
                    for v in range(vectors):
                        total = b.fadd(b.load(acc[c][v]), b.fmul(w, pixels[v], flags=("contract",)),
                                       flags=("contract",))
                        b.store(total, acc[c][v])
    for c in range(channels):
        dst_row = element(b, out_row, b.mul(b.add(co0, i64(c)), i64(s.pixels)))
        for v in range(vectors):
            dst = element(b, dst_row, b.add(ox0, i64(v * lanes)))
            value = b.load(acc[c][v])
            if v < vectors - 1 or last_lanes == lanes:
                simd.store_vector(b, value, dst)
            else:
                for lane in range(last_lanes):
                    b.store(b.extract_element(value, ir.Constant(ir.IntType(32), lane)),
                            element(b, dst, i64(lane)))


def emit_direct_forward(b: ir.IRBuilder, dtype: str, shape: Conv2dShape, plan: DirectPlan,
                        x: ir.Value, weight: ir.Value, bias: Optional[ir.Value], out: ir.Value,
                        padded: ir.Value) -> None:
    """out = conv2d(x, weight, bias) on one thread: the padded copy, then every item."""
    emit_padded_input(b, shape, plan, x, padded)
    emit_direct_items(b, dtype, shape, plan, padded, weight, bias, out, 0, direct_items(shape))


def transposed_shape(shape: Conv2dShape) -> Conv2dShape:
    """The forward convolution that computes `shape`'s input gradient when its stride is 1:
    the output gradient, padded by dilation * (kernel - 1) - padding, convolved with the
    weights flipped in both taps and with in and out channels swapped (`emit_flipped_weights`)."""
    s = shape
    assert s.stride == (1, 1), "the transposed direct convolution needs stride 1"
    pad = tuple(d * (k - 1) - p for d, k, p in zip(s.dilation, (s.kernel_h, s.kernel_w), s.padding))
    return Conv2dShape(s.batch, s.out_channels, s.out_h, s.out_w, s.in_channels, s.kernel_h,
                       s.kernel_w, (1, 1), pad, s.dilation, s.groups)


def grad_input_applies(shape: Conv2dShape) -> bool:
    """Whether the input gradient runs as a direct convolution (`transposed_shape`)."""
    s = shape
    return s.stride == (1, 1) and all(
        0 <= p <= d * (k - 1) for p, d, k in zip(s.padding, s.dilation, (s.kernel_h, s.kernel_w)))


def emit_flipped_weights(b: ir.IRBuilder, shape: Conv2dShape, weight: ir.Value, out: ir.Value) -> None:
    """out[g * group_in + ci, co, ky, kx] = weight[g * group_out + co, ci, KH-1-ky, KW-1-kx]:
    the weights of `transposed_shape(shape)`."""
    s = shape
    taps = s.kernel_h * s.kernel_w
    with for_range(b, 0, s.out_channels, name="co") as co:
        g = b.sdiv(co, i64(s.group_out))
        co_g = b.srem(co, i64(s.group_out))
        with for_range(b, 0, s.group_in, name="ci") as ci:
            src = element(b, weight, b.mul(b.add(b.mul(co, i64(s.group_in)), ci), i64(taps)))
            row = b.add(b.mul(g, i64(s.group_in)), ci)
            dst = element(b, out, b.mul(b.add(b.mul(row, i64(s.group_out)), co_g), i64(taps)))
            with for_range(b, 0, taps, name="t") as t:
                b.store(b.load(element(b, src, b.sub(i64(taps - 1), t))), element(b, dst, t))


def direct_scratch_elems(shape: Conv2dShape, mode: str, dtype: str) -> int:
    """Scratch elements of the direct algorithm for `mode` ("forward" or "grad_input"): the
    padded input (and for grad_input the flipped weights before it)."""
    if mode == "forward":
        return padded_input_elems(shape, direct_plan(shape, dtype))
    t = transposed_shape(shape)
    return shape.out_channels * shape.patch + padded_input_elems(t, direct_plan(t, dtype))


# Multiply-adds from which the items run on every core: a loop on the thread pool costs ~5-30 µs
# here, the kernel does ~50 multiply-adds a ns on one core (tools/bench_conv.py).
THREAD_MACS = 4_000_000


def emit_direct_function(module: ir.Module, name: str, buffers, conv) -> ir.Function:
    """`i32 name(ptr...)` over the unit's buffers: the Convolution product `conv` (mode
    "forward" or "grad_input") by the direct algorithm, its items on every core when large."""
    from . import parallel, scalar_ops
    dtype = conv.dtype.name
    params = [scalar_ops.memory_type(buf.dtype).as_pointer() for buf in buffers]
    fn = ir.Function(module, ir.FunctionType(ir.IntType(32), params), name=name)
    fn.linkage = "internal"
    # optsize, as gemm_tiled's products: the kernel is vector code already (tools/bench_conv.py's
    # shapes 0.97-1.02x of O3's time on one core, bitwise equal), and LLVM no longer makes
    # vectorized and interleaved copies of the padding and weight copies (~12 ms less of
    # optimizing and code generation for mobilenet_dw's first convolution)
    fn.attributes.add("optsize")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    if conv.mode == "forward":
        shape, source = conv.shape, conv.x
    else:
        assert conv.mode == "grad_input", conv.mode
        shape, source = transposed_shape(conv.shape), conv.grad
    plan = direct_plan(shape, dtype)
    flipped = conv.shape.out_channels * conv.shape.patch if conv.mode == "grad_input" else 0

    def operands(builder, args):
        """(padded input, weights, bias or None, output) pointers from the buffer arguments."""
        scratch = args[conv.scratch]
        weight = scratch if flipped else args[conv.weight]
        bias = args[conv.bias] if conv.bias is not None else None
        return element(builder, scratch, i64(flipped)), weight, bias, args[conv.out]

    padded, weight, bias, out = operands(b, fn.args)
    if flipped:
        emit_flipped_weights(b, conv.shape, fn.args[conv.weight], weight)
    emit_padded_input(b, shape, plan, fn.args[source], padded)
    items = direct_items(shape)
    threads = parallel.thread_count()
    if threads < 2 or direct_macs(shape) < THREAD_MACS or items < 2:
        emit_direct_items(b, dtype, shape, plan, padded, weight, bias, out, 0, items)
        b.ret(ir.Constant(ir.IntType(32), 0))
        return fn
    # the items of [bounds[0], bounds[1]) over the same (typed) buffer arguments
    range_fn = ir.Function(module, ir.FunctionType(ir.IntType(32), params + [ir.IntType(64).as_pointer()]),
                           name=name + "_items")
    range_fn.linkage = "internal"
    range_fn.attributes.add("optsize")  # (inlined into the pool's chunk, it would lose it)
    range_fn.attributes.add("noinline")
    rb = ir.IRBuilder(range_fn.append_basic_block("entry"))
    *args, bounds = range_fn.args
    emit_direct_items(rb, dtype, shape, plan, *operands(rb, args), rb.load(bounds),
                      rb.load(element(rb, bounds, i64(1))))
    rb.ret(ir.Constant(ir.IntType(32), 0))
    chunk = max(1, -(-items // (threads * 8)))
    driver = parallel.emit_parallel_range(module, name + "_parallel", range_fn, len(params), items,
                                          chunk, threads)
    b.ret(b.call(driver, fn.args))
    return fn
