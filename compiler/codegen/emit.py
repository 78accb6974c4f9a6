"""Kernel -> LLVM IR: canonical counted loops (innermost axis last, so contiguous accesses
vectorize), one computation per distinct expression per loop level, reductions into
accumulators, optional bounds checks on every load and store (status 15 when one fails)."""

from __future__ import annotations

import dataclasses
import math
from typing import Callable, Optional

import numpy as np
from llvmlite import ir

from . import scalar_ops, simd
from .ir_loops import unroll_fully, vectorize_masked
from .kernel import (Access, Buffer, CheckedIndex, Const, Expr, Gather, Kernel, Load, Op, Position,
                     Reduce, dynamic_indices, expr_children, walk)

I64 = ir.IntType(64)
I32 = ir.IntType(32)
PTR = ir.PointerType()

STATUS_OUT_OF_BOUNDS = 15  # see entry.GUARD_KINDS
# Innermost loops of at most this many iterations are unrolled (the only loops the pipeline
# unrolls, see library.optimize): a stack along the last dim is one-iteration loops per piece
# (80 -> 52 us for 4 x (256, 512) float32 pieces here, numpy 155 us).
UNROLL_MAX_TRIP = 4


class _Scope:
    """Values computed at one loop level; inner levels see the outer ones."""

    def __init__(self, parent: Optional["_Scope"]):
        self.parent = parent
        self.values: dict = {}

    def get(self, e):
        s = self
        while s is not None:
            v = s.values.get(e)
            if v is not None:
                return v
            s = s.parent
        return None


class KernelEmitter:
    """Emits one kernel as `i32 name(ptr p0, ptr p1, ...)` (data pointers, in buffer order)."""

    def __init__(self, module: ir.Module, kernel: Kernel, bounds_checks: bool):
        self.module = module
        self.kernel = kernel
        self.checks = bounds_checks
        fnty = ir.FunctionType(I32, [PTR] * len(kernel.buffers))
        self.fn = ir.Function(module, fnty, name=kernel.name)
        self.fn.linkage = "internal"
        self.fn.attributes.add("nounwind")
        for arg in self.fn.args:
            arg.add_attribute("noalias")
        entry = self.fn.append_basic_block("entry")
        self.alloca_builder = ir.IRBuilder(entry)
        body = self.fn.append_basic_block("body")
        self.alloca_builder.branch(body)
        self.alloca_builder.position_at_start(entry)
        self.builder = ir.IRBuilder(body)
        self.fail_block: Optional[ir.Block] = None
        self.indices: list[Optional[ir.Value]] = [None] * kernel.rank
        self.scope = _Scope(None)
        self.cuts: dict[int, set[int]] = {}  # per axis, where cat pieces start (see cat_cuts)
        self.loop_count = 0  # loops emitted so far
        # `stashed_values` -> their stack rows: to be filled by a reduction's loop, filled
        self.stash: dict[Expr, ir.Value] = {}
        self.stashed: dict[Expr, ir.Value] = {}

    def emit(self) -> ir.Function:
        k = self.kernel
        self.dynamic = {index: self.checked_index(index) for index in dynamic_indices(k)}
        self.cuts = cat_cuts(k)
        outer_stores = [s for s in k.stores if not s.inner]
        inner_stores = [s for s in k.stores if s.inner]
        if row_reduction(k):
            last = len(k.outer) - 1
            self.loops(list(range(last)), lambda: self.row_reductions(last))
            self.builder.ret(ir.Constant(I32, 0))
            return self.fn

        self.stash = {e: self.alloca_builder.alloca(ir.ArrayType(scalar_ops.register_type(e.dtype),
                                                                  math.prod(k.inner)))
                      for e in stashed_values(k)}

        def inner_body():
            for e, row in self.stashed.items():  # computed by a reduction's loop (see `reduce`)
                self.scope.values[e] = self.builder.load(self.stash_slot(row))
            for s in inner_stores:
                self.store(s.access, self.value(s.value))

        def outer_body():
            for s in outer_stores:
                self.store(s.access, self.value(s.value))
            if inner_stores:
                for s in inner_stores:
                    self.prepare_reduces(s.value)
                self.loops(list(range(len(k.outer), k.rank)), inner_body)

        self.loops(list(range(len(k.outer))), outer_body)
        self.builder.ret(ir.Constant(I32, 0))
        return self.fn

    # ---- loops
    def loops(self, axes: list[int], body: Callable) -> None:
        if not axes:
            self.scope = _Scope(self.scope)
            body()
            self.scope = self.scope.parent
            return
        axis, rest = axes[0], axes[1:]
        size = (self.kernel.outer + self.kernel.inner)[axis]
        cuts = [0] + sorted(c for c in self.cuts.get(axis, ()) if 0 < c < size) + [size]
        for lo, hi in zip(cuts, cuts[1:]):  # one loop per cat piece: its reads stay affine
            self.loop(axis, size, lo, hi, rest, body)

    def loop(self, axis: int, size: int, lo: int, hi: int, rest: list[int], body: Callable) -> None:
        """The loop over `axis` from `lo` to `hi` (within its `loop_range`)."""
        b = self.builder
        start, stop = self.loop_range(axis, size)
        if (lo, hi) != (0, size):
            first, end = ir.Constant(I64, lo), ir.Constant(I64, hi)
            start = b.select(b.icmp_signed(">", start, first), start, first)
            stop = b.select(b.icmp_signed("<", stop, end), stop, end)
        pre = b.block
        header = self.fn.append_basic_block(f"loop{axis}")
        inside = self.fn.append_basic_block(f"loop{axis}.body")
        after = self.fn.append_basic_block(f"loop{axis}.end")
        b.branch(header)
        b.position_at_end(header)
        i = b.phi(I64, name=f"i{axis}")
        i.add_incoming(start, pre)
        b.cbranch(b.icmp_signed("<", i, stop), inside, after)
        b.position_at_end(inside)
        self.indices[axis] = i
        self.loop_count += 1
        before = self.loop_count
        self.loops(rest, body)
        nxt = b.add(i, ir.Constant(I64, 1), flags=["nuw", "nsw"])
        i.add_incoming(nxt, b.block)
        back = b.branch(header)
        self.mark_loop(back, hi - lo, innermost=self.loop_count == before)
        b.position_at_end(after)
        self.indices[axis] = None

    def mark_loop(self, back: ir.Instruction, trip: int, innermost: bool) -> None:
        """Hints for the loop whose back edge is `back` (at most `trip` iterations)."""
        if trip <= UNROLL_MAX_TRIP and innermost:
            unroll_fully(back)  # an innermost loop of a few iterations (a cat piece, a short axis)

    def loop_range(self, axis: int, size: int) -> tuple[ir.Value, ir.Value]:
        """The [start, stop) of `axis`: all of it (threads.py runs one part per thread)."""
        return ir.Constant(I64, 0), ir.Constant(I64, size)

    # ---- memory
    def address(self, access: Access) -> ir.Value:
        b = self.builder
        buf: Buffer = self.kernel.buffers[access.buffer]
        index = ir.Constant(I64, access.offset)
        for axis, stride in enumerate(access.strides):
            if stride:
                iv = self.indices[axis]
                assert iv is not None, "an access uses an axis outside its loop"
                index = b.add(index, b.mul(iv, ir.Constant(I64, stride), flags=["nsw"]), flags=["nsw"])
        for term, stride in access.dynamic:
            index = b.add(index, b.mul(self.dynamic[term], ir.Constant(I64, stride)))
        for term in access.clamped:
            index = b.add(index, b.mul(clamped_index(b, self.indices[term.axis], term),
                                       ir.Constant(I64, term.stride), flags=["nsw"]), flags=["nsw"])
        if self.checks:
            self.check_bounds(index, buf.extent)
        etype = scalar_ops.memory_type(buf.dtype)
        return b.gep(self.fn.args[access.buffer], [index], inbounds=True, source_etype=etype)

    def checked_index(self, index) -> ir.Value:
        """The run-time index, wrapped when negative; out of range returns the status."""
        b = self.builder
        raw = b.load(self.fn.args[index.buffer], typ=I64)
        size = ir.Constant(I64, index.size)
        wrapped = b.select(b.icmp_signed("<", raw, ir.Constant(I64, 0)), b.add(raw, size), raw)
        self.check_bounds(wrapped, index.size)
        return wrapped

    def checked_value(self, e: CheckedIndex) -> ir.Value:
        """A computed index, wrapped when negative and allowed; out of range returns the status."""
        b = self.builder
        raw = self.value(e.value)
        size = ir.Constant(I64, e.size)
        index = b.select(b.icmp_signed("<", raw, ir.Constant(I64, 0)), b.add(raw, size), raw) \
            if e.wrap else raw
        self.check_bounds(index, e.size)
        return index

    def gather(self, e: Gather) -> ir.Value:
        b = self.builder
        buf = self.kernel.buffers[e.buffer]
        index = self.value(e.offset)
        if self.checks:
            self.check_bounds(index, buf.extent)
        etype = scalar_ops.memory_type(buf.dtype)
        ptr = b.gep(self.fn.args[e.buffer], [index], inbounds=True, source_etype=etype)
        v = scalar_ops.from_memory(b, b.load(ptr, align=buf.dtype.itemsize, typ=etype), buf.dtype)
        return v if buf.dtype == e.dtype else scalar_ops.cast(b, v, buf.dtype, e.dtype)

    def check_bounds(self, index: ir.Value, extent: int) -> None:
        b = self.builder
        if self.fail_block is None:
            self.fail_block = self.fn.append_basic_block("out_of_bounds")
            with b.goto_block(self.fail_block):
                b.ret(ir.Constant(I32, STATUS_OUT_OF_BOUNDS))
        ok = b.icmp_unsigned("<", index, ir.Constant(I64, extent))
        cont = self.fn.append_basic_block("in_bounds")
        b.cbranch(ok, cont, self.fail_block)
        b.position_at_end(cont)

    def store(self, access: Access, value: ir.Value) -> None:
        buf = self.kernel.buffers[access.buffer]
        ptr = self.address(access)
        self.builder.store(scalar_ops.to_memory(self.builder, value, buf.dtype), ptr,
                           align=buf.dtype.itemsize)

    # ---- expressions
    def value(self, e: Expr) -> ir.Value:
        v = self.scope.get(e)
        if v is not None:
            return v
        b = self.builder
        if isinstance(e, Const):
            v = scalar_ops.constant(e.value, e.dtype)
        elif isinstance(e, Load):
            buf = self.kernel.buffers[e.access.buffer]
            raw = b.load(self.address(e.access), align=buf.dtype.itemsize,
                         typ=scalar_ops.memory_type(buf.dtype))
            v = scalar_ops.from_memory(b, raw, buf.dtype)
            if buf.dtype != e.dtype:
                v = scalar_ops.cast(b, v, buf.dtype, e.dtype)
        elif isinstance(e, Op):
            v = scalar_ops.emit_op(b, e.name, [self.value(a) for a in e.args],
                                   [a.dtype for a in e.args], e.dtype)
        elif isinstance(e, Reduce):
            v = self.reduce(e)
        elif isinstance(e, Position):
            v = self.indices[e.axis]
            assert v is not None, "a position used outside its loop"
        elif isinstance(e, CheckedIndex):
            v = self.checked_value(e)
        elif isinstance(e, Gather):
            v = self.gather(e)
        else:
            raise AssertionError(f"unknown expression {e!r}")
        self.scope.values[e] = v
        return v

    def prepare_reduces(self, e: Expr, seen: Optional[set] = None) -> None:
        """Evaluate the reductions inside `e` at the current (outer) level, nested ones first."""
        seen = set() if seen is None else seen
        if id(e) in seen:
            return
        seen.add(id(e))
        if isinstance(e, Reduce):
            self.value(e)
            return
        for c in expr_children(e):
            self.prepare_reduces(c, seen)

    def row_reductions(self, last: int) -> None:
        """The kernel's reductions with its last outer axis innermost (see `row_reduction`):
        per reduction a stack row of accumulators along that axis, summed over the inner axes
        one reduction after another (a later one may read an earlier one's row), then the
        stores along the row."""
        k = self.kernel
        b = self.builder
        size = k.outer[last]
        rows: dict[Reduce, ir.Value] = {}
        inner = list(range(len(k.outer), k.rank))

        def done_reductions():
            j = self.indices[last]
            for done, row in rows.items():
                self.scope.values[done] = b.load(b.gep(row, [ir.Constant(I64, 0), j]))

        for e in reductions_in_order(k):
            lty = scalar_ops.register_type(e.dtype)
            row = self.alloca_builder.alloca(ir.ArrayType(lty, size))

            def init(row=row, e=e):
                b.store(scalar_ops.reduce_identity(e.combine, e.dtype),
                        b.gep(row, [ir.Constant(I64, 0), self.indices[last]]))

            def step(row=row, e=e, lty=lty):
                done_reductions()
                slot = b.gep(row, [ir.Constant(I64, 0), self.indices[last]])
                b.store(scalar_ops.combine(b, e.combine, b.load(slot, typ=lty), self.value(e.value), e.dtype), slot)

            self.loops([last], init)
            self.loops(inner + [last], step)
            rows[e] = row

        def stores():
            done_reductions()
            for st in k.stores:
                self.store(st.access, self.value(st.value))
        self.loops([last], stores)

    def reduce(self, e: Reduce) -> ir.Value:
        self.prepare_reduces(e.value)
        lty = scalar_ops.register_type(e.dtype)
        acc = self.alloca_builder.alloca(lty)
        self.builder.store(scalar_ops.reduce_identity(e.combine, e.dtype), acc)
        k = self.kernel

        computed = set(walk([e.value]))
        stash = [(v, self.stash.pop(v)) for v in list(self.stash) if v in computed]

        def body():
            cur = self.builder.load(acc, typ=lty)
            x = self.value(e.value)
            self.builder.store(scalar_ops.combine(self.builder, e.combine, cur, x, e.dtype), acc)
            for v, row in stash:
                self.builder.store(self.value(v), self.stash_slot(row))

        self.loops(list(range(len(k.outer), k.rank)), body)
        self.stashed.update(stash)
        return self.builder.load(acc, typ=lty)

    def stash_slot(self, row: ir.Value) -> ir.Value:
        """The element of a stack row at the current point of the kernel's inner axes."""
        b, k = self.builder, self.kernel
        index = ir.Constant(I64, 0)
        for axis, size in enumerate(k.inner, start=len(k.outer)):
            index = b.add(b.mul(index, ir.Constant(I64, size), flags=["nsw"]), self.indices[axis],
                          flags=["nsw"])
        return b.gep(row, [ir.Constant(I64, 0), index], inbounds=True)


# A row of accumulators per reduction lives on the stack: at most this many elements.
MAX_ROW_REDUCTION = 8192


def stashed_values(kernel: Kernel) -> list[Expr]:
    """Math-library calls (`math.*`) that a reduction's loop and the inner stores both compute
    at the same points, as softmax's exp(x - max) is summed and then divided by the sum: the
    reduction's loop keeps them in a stack row (at most MAX_ROW_REDUCTION elements) that the
    stores read instead of calling the function again (softmax over rows of 64 floats on one
    core: 80 -> 59 us for 65536 elements)."""
    k = kernel
    if not k.inner or math.prod(k.inner) > MAX_ROW_REDUCTION:
        return []
    inner_axes = set(range(len(k.outer), k.rank))
    in_reductions = set(walk(r.value for r in reductions_in_order(k)))

    def along_inner(e) -> bool:
        return any(isinstance(x, Load) and any(x.access.strides[a] for a in inner_axes)
                   or isinstance(x, Position) and x.axis in inner_axes
                   for x in walk([e], into_reductions=False))
    stored = walk((st.value for st in k.stores if st.inner), into_reductions=False)
    return [e for e in dict.fromkeys(stored) if isinstance(e, Op) and e.name.startswith("math.")
            and e.dtype.kind == "f" and e in in_reductions and along_inner(e)]


def row_reduction(kernel: Kernel) -> bool:
    """Whether the kernel's reductions run with its last outer axis innermost: they read along
    that axis contiguously but along their own innermost axis with a stride (a sum over a
    matrix's rows, as a bias gradient is), which in the usual order would walk down columns,
    a cache line an element (a whole 4 KiB page apart for rows of 1024 floats)."""
    k = kernel
    if not k.inner or not k.outer or any(st.inner for st in k.stores) or \
            k.outer[-1] > MAX_ROW_REDUCTION or k.outer[-1] < 2:
        return False
    last, innermost = len(k.outer) - 1, k.rank - 1
    along_row = [e.access.strides for e in walk(r.value for r in reductions_in_order(k))
                 if isinstance(e, Load) and e.access.strides[last] == 1]
    return bool(along_row) and any(strides[innermost] not in (0, 1) for strides in along_row)


def reductions_in_order(kernel: Kernel) -> list[Reduce]:
    """The kernel's distinct reductions, each after those its value reads."""
    order: list[Reduce] = []
    seen: set = set()

    def visit(e) -> None:
        if id(e) in seen:
            return
        seen.add(id(e))
        for c in expr_children(e):
            visit(c)
        if isinstance(e, Reduce) and e not in order:
            order.append(e)

    for st in kernel.stores:
        visit(st.value)
    return order


class EpilogueEmitter(KernelEmitter):
    """A group's loop nest as the epilogue of its last tiled product (gemm_epilogue.py), over
    one tile: `i32 name(ptr p0, ..., ptr tile, ptr bounds)` with bounds = (i0, i1, j0, j1),
    reading the product's output at (i, j) from tile[(i - i0) * width + (j - j0)]."""

    def __init__(self, module: ir.Module, kernel: Kernel, product_out: Buffer, width: int,
                 bounds_checks: bool):
        n = len(kernel.buffers)
        tile = Buffer(n, product_out.dtype, (width * width,), (1,), False)  # (as large as any tile)
        bounds = Buffer(n + 1, np.dtype(np.int64), (4,), (1,), False)
        super().__init__(module, dataclasses.replace(kernel, name=kernel.name + "_epilogue",
                                                      buffers=[*kernel.buffers, tile, bounds]),
                         bounds_checks)
        self.fn.attributes.add("noinline")  # (inlined, LLVM unrolls the short rows and vectorizes across them)
        self.product_out = product_out.position
        self.width = width

    def emit(self) -> ir.Function:
        b, bounds = self.builder, self.fn.args[-1]
        self.bounds = [b.load(b.gep(bounds, [ir.Constant(I64, k)], source_etype=I64), typ=I64)
                       for k in range(4)]
        return super().emit()

    def loop_range(self, axis: int, size: int) -> tuple[ir.Value, ir.Value]:
        return (self.bounds[0], self.bounds[1]) if axis == 0 else (self.bounds[2], self.bounds[3])

    def mark_loop(self, back: ir.Instruction, trip: int, innermost: bool) -> None:
        """A tile's row (at most `width` elements, fewer in the last tiles) is one masked
        vector loop: LLVM made a two-vector loop, which a 16-wide row never entered, a 4-wide
        remainder loop and a scalar one (lstm_cell's gate unit: ~10 ms less of optimizing and
        code generation)."""
        if innermost:
            vectorize_masked(back, simd.lanes(self.kernel.buffers[-2].dtype.name))

    def address(self, access: Access) -> ir.Value:
        if access.buffer != self.product_out:
            return super().address(access)
        b = self.builder
        i, j = self.indices[0], self.indices[1]
        index = b.add(b.mul(b.sub(i, self.bounds[0]), ir.Constant(I64, self.width)), b.sub(j, self.bounds[2]))
        etype = scalar_ops.memory_type(self.kernel.buffers[-2].dtype)
        return b.gep(self.fn.args[-2], [index], inbounds=True, source_etype=etype)


def emit_kernel(module: ir.Module, kernel: Kernel, bounds_checks: bool = False) -> ir.Function:
    return KernelEmitter(module, kernel, bounds_checks).emit()


def emit_convolution(module: ir.Module, name: str, buffers: list[Buffer], conv) -> ir.Function:
    """`i32 name(ptr...)`: the convolution product `conv` (kernel.Convolution) by its mode and
    algorithm, through conv.py's emitters (im2col + GEMM) or conv_direct.py's."""
    if conv.algorithm == "direct":
        from .conv_direct import emit_direct_function
        return emit_direct_function(module, name, buffers, conv)
    from .conv import emit_conv2d_forward, emit_conv2d_grad_input, emit_conv2d_grad_weight
    params = [scalar_ops.memory_type(buf.dtype).as_pointer() for buf in buffers]
    fn = ir.Function(module, ir.FunctionType(I32, params), name=name)
    fn.linkage = "internal"
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    arg = lambda i: None if i is None else fn.args[i]  # noqa: E731
    dtype, shape = conv.dtype.name, conv.shape
    if conv.mode == "forward":
        emit_conv2d_forward(b, dtype, shape, arg(conv.x), arg(conv.weight), arg(conv.bias),
                            arg(conv.out), arg(conv.scratch))
    elif conv.mode == "grad_input":
        emit_conv2d_grad_input(b, dtype, shape, arg(conv.grad), arg(conv.weight), arg(conv.out),
                               arg(conv.scratch))
    else:
        emit_conv2d_grad_weight(b, dtype, shape, arg(conv.x), arg(conv.grad), arg(conv.out),
                                arg(conv.scratch))
    b.ret(ir.Constant(I32, 0))
    return fn


def emit_product(module: ir.Module, name: str, buffers: list[Buffer], product,
                 bounds_checks: bool = False) -> ir.Function:
    """`i32 name(ptr...)`: the matrix product, through `matmul.emit_matmul` (BLAS or its loop
    kernel), reading strided operands in place, or gemm_tiled.py's kernel (with the group's
    loop nest as its epilogue, bounds-checked with `bounds_checks`, when it has one)."""
    from .matmul import emit_matmul, matmul_layout
    # typed pointer parameters (printed as `ptr` like the others): blas.py indexes through them
    params = [scalar_ops.memory_type(buf.dtype).as_pointer() for buf in buffers]
    if product.algorithm == "tiled":
        from .gemm_tiled import batched_plan, emit_tiled_function
        a, m = product.a, product.b
        plan = batched_plan(matmul_layout(a.sizes, a.strides, m.sizes, m.strides), product.dtype.name)
        epilogue = None
        if product.epilogue is not None:
            epilogue = EpilogueEmitter(module, product.epilogue, product.epilogue_input, plan.plan.nr,
                                       bounds_checks).emit()
        return emit_tiled_function(module, name, params, plan, (a.buffer, a.offset),
                                   (m.buffer, m.offset), product.out, product.scratch, epilogue)
    fn = ir.Function(module, ir.FunctionType(I32, params), name=name)
    fn.linkage = "internal"
    b = ir.IRBuilder(fn.append_basic_block("entry"))

    fail = fn.append_basic_block("index_out_of_range")
    with b.goto_block(fail):
        b.ret(ir.Constant(I32, STATUS_OUT_OF_BOUNDS))

    def pointer(index: int, offset: int = 0, dynamic=()) -> ir.Value:
        p = fn.args[index]
        total = ir.Constant(I64, offset)
        for term, stride in dynamic:  # a run-time index, wrapped and checked before use
            raw = b.load(b.bitcast(fn.args[term.buffer], I64.as_pointer()), typ=I64)
            size = ir.Constant(I64, term.size)
            idx = b.select(b.icmp_signed("<", raw, ir.Constant(I64, 0)), b.add(raw, size), raw)
            ok = fn.append_basic_block("index_ok")
            b.cbranch(b.icmp_unsigned("<", idx, size), ok, fail)
            b.position_at_end(ok)
            total = b.add(total, b.mul(idx, ir.Constant(I64, stride)))
        return b.gep(p, [total], inbounds=True) if offset or dynamic else p

    a, m = product.a, product.b
    emit_matmul(b, product.dtype.name, pointer(a.buffer, a.offset, a.dynamic), a.sizes, a.strides,
                pointer(m.buffer, m.offset, m.dynamic), m.sizes, m.strides, pointer(product.out))
    b.ret(ir.Constant(I32, 0))
    return fn


def clamped_index(b: ir.IRBuilder, i: ir.Value, term) -> ir.Value:
    """`clamp(i - term.start, 0, term.size - 1)` (kernel.ClampedAxis)."""
    assert i is not None, "an access uses an axis outside its loop"
    k = b.sub(i, ir.Constant(I64, term.start))
    k = b.select(b.icmp_signed("<", k, ir.Constant(I64, 0)), ir.Constant(I64, 0), k)
    last = ir.Constant(I64, term.size - 1)
    return b.select(b.icmp_signed(">", k, last), last, k)


def cat_cuts(kernel: Kernel) -> dict[int, set[int]]:
    """Per axis, where cat pieces start and end (kernel.ClampedAxis terms): the loop over the
    axis is split there, so within each loop a piece's clamp folds away and its reads vectorize."""
    cuts: dict[int, set[int]] = {}
    seen: set = set()

    def visit(e) -> None:
        if e in seen:
            return
        seen.add(e)
        if isinstance(e, Load):
            for term in e.access.clamped:
                cuts.setdefault(term.axis, set()).update((term.start, term.start + term.size))
        for c in expr_children(e):
            visit(c)

    for st in kernel.stores:
        visit(st.value)
    return {axis: found for axis, found in cuts.items() if len(found) <= 16}
