"""Streaming (non-temporal) stores for element-wise kernels that move more bytes than the
last-level cache holds. A store that misses the cache first reads its line from memory (read
for ownership), so a kernel writing a float32 output it never reads moves 8 bytes per element
for it, not 4; an output of such a kernel is not in the cache when the kernel ends anyway. A
streamed output is written a whole cache line at a time with a non-temporal store, which
skips that read: the element-wise chain's backward (three inputs read, three gradients
written) moves 24 bytes per element instead of 36.

x86 stores whole lines non-temporally only from aligned vectors, and LLVM's loop vectorizer
refuses non-temporal scalar stores, so the innermost loop runs in blocks of one line's
elements: the block's values go to a stack row of two lines (this block's and the one
before), and each streamed output gets the line of it that the block completes, at the
output's own alignment (outputs need not be aligned alike), by one aligned non-temporal
vector store; the partial lines at the ends of the range are copied with ordinary stores,
and the rest of the range (fewer than a line's elements) runs as the ordinary loop. An
`sfence` after the blocks orders the streamed lines before anything the thread does next
(a pool thread's report that its chunk is done)."""

from __future__ import annotations

import os
from typing import Callable

from llvmlite import ir

from . import scalar_ops
from .kernel import Gather, Kernel, Load, expr_children

I64 = ir.IntType(64)
I32 = ir.IntType(32)
PTR = ir.PointerType()
LINE = 64  # bytes of a cache line


def last_level_cache_bytes(default: int = 32 << 20) -> int:
    """The size of the host's last-level cache (sysfs), or `default` when it cannot be read."""
    best = (0, default)
    folder = "/sys/devices/system/cpu/cpu0/cache"
    try:
        for name in os.listdir(folder):
            if not name.startswith("index"):
                continue
            with open(os.path.join(folder, name, "level")) as f:
                level = int(f.read())
            with open(os.path.join(folder, name, "size")) as f:
                text = f.read().strip()
            scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
            size = int(text.rstrip("KMG")) * scale
            if level > best[0]:
                best = (level, size)
    except (OSError, ValueError):
        return default
    return best[1]


# A kernel whose buffers span at least this many bytes streams its outputs (see module doc).
STREAM_BYTES = last_level_cache_bytes()


def kernel_bytes(kernel: Kernel) -> int:
    """Bytes of every buffer the kernel reads or writes (each counted once)."""
    return sum(b.extent * b.dtype.itemsize for b in kernel.buffers)


def _read_buffers(kernel: Kernel) -> set[int]:
    found: set[int] = set()
    seen: set[int] = set()
    stack = [s.value for s in kernel.stores]
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, Load):
            found.add(e.access.buffer)
            found.update(index.buffer for index, _ in e.access.dynamic)
        elif isinstance(e, Gather):
            found.add(e.buffer)
        stack.extend(expr_children(e))
    return found


def host_has_avx512() -> bool:
    """Whether the host CPU (which units are compiled for) has AVX-512F: its two-table
    permute builds a line across two blocks in one instruction (see StreamedLoop._line)."""
    global _AVX512
    if _AVX512 is None:
        import llvmlite.binding as llvm
        try:
            _AVX512 = bool(llvm.get_host_cpu_features().get("avx512f", False))
        except RuntimeError:
            _AVX512 = False
    return _AVX512


_AVX512 = None


def streamed_buffers(kernel: Kernel, triple: str) -> tuple[int, ...]:
    """The output buffers of `kernel` to write with streaming stores: those of an element-wise
    kernel (no reduced axes) spanning at least STREAM_BYTES, each stored once, contiguously
    along the innermost axis, and not read by the kernel, of one element size (4 or 8 bytes);
    none on other targets than x86 with AVX-512."""
    if not triple.startswith(("x86_64", "i686", "i386")) or not host_has_avx512() or kernel.inner or \
            not kernel.outer:
        return ()
    if kernel_bytes(kernel) < STREAM_BYTES:
        return ()
    last = len(kernel.outer) - 1
    if kernel.outer[last] < 2 * LINE // 4:
        return ()
    read = _read_buffers(kernel)
    counts: dict[int, int] = {}
    for s in kernel.stores:
        counts[s.access.buffer] = counts.get(s.access.buffer, 0) + 1
    found = []
    for s in kernel.stores:
        a = s.access
        dtype = kernel.buffers[a.buffer].dtype
        if counts[a.buffer] == 1 and a.buffer not in read and a.strides[last] == 1 and \
                not a.dynamic and not a.clamped and dtype.kind in "fiu" and dtype.itemsize in (4, 8):
            found.append(a.buffer)
    if found:
        size = kernel.buffers[found[0]].dtype.itemsize
        found = [p for p in found if kernel.buffers[p].dtype.itemsize == size]
    return tuple(found)


class StreamedLoop:
    """Emits one innermost loop of a KernelEmitter whose `streams` are non-empty (see the
    module doc). While a block's body runs, the emitter's `store` puts a streamed output's
    value into its row (`row_of`)."""

    def __init__(self, emitter):
        self.em = emitter
        k = emitter.kernel
        self.buffers = emitter.streams
        self.itemsize = k.buffers[self.buffers[0]].dtype.itemsize
        self.lanes = LINE // self.itemsize
        self.access = {s.access.buffer: s.access for s in k.stores if s.access.buffer in self.buffers}
        self.etype = {p: scalar_ops.memory_type(k.buffers[p].dtype) for p in self.buffers}
        self.vector = {p: ir.VectorType(self.etype[p], self.lanes) for p in self.buffers}
        self.rows = {}  # per output: the block before (unused) and this block
        for p in self.buffers:
            row = emitter.alloca_builder.alloca(ir.ArrayType(self.etype[p], 2 * self.lanes), name=f"row{p}")
            row.align = LINE
            self.rows[p] = row
        self.block_start = None  # the block's first index while its body is emitted

    # ---- helpers
    def _const(self, v: int) -> ir.Constant:
        return ir.Constant(I64, v)

    def _element(self, p: int, index: ir.Value) -> ir.Value:
        """The address of output `p`'s element at innermost index `index` (the emitter's
        other indices as they are)."""
        em = self.em
        saved = em.indices[self.axis]
        em.indices[self.axis] = index
        try:
            return em.address(self.access[p])
        finally:
            em.indices[self.axis] = saved

    def _row_at(self, p: int, offset: ir.Value) -> ir.Value:
        return self.em.builder.gep(self.rows[p], [self._const(0), offset], inbounds=True)

    def _line_at(self, p: int, offset: ir.Value) -> ir.Value:
        """The line of `lanes` elements of output `p`'s row from `offset` on, as a vector."""
        return self.em.builder.bitcast(self._row_at(p, offset), self.vector[p].as_pointer())

    def row_slot(self, p: int) -> ir.Value:
        """Where output `p`'s value at the current index goes in its row."""
        b = self.em.builder
        return self._row_at(p, b.add(b.sub(self.em.indices[self.axis], self.block_start),
                                     self._const(self.lanes)))

    def _store_lanes(self, p: int, value: ir.Value, address: ir.Value, lo: ir.Value, hi: ir.Value) -> None:
        """Store lanes lo <= k < hi of `value` (a block of output `p`) at `address` (its lane 0's
        element) with an ordinary masked store: the partial lines at the ends of a range."""
        b = self.em.builder
        lanes = ir.Constant(ir.VectorType(I64, self.lanes), list(range(self.lanes)))
        splat = lambda v: b.shuffle_vector(  # noqa: E731
            b.insert_element(ir.Constant(ir.VectorType(I64, self.lanes), ir.Undefined), v, ir.Constant(I32, 0)),
            ir.Constant(ir.VectorType(I64, self.lanes), ir.Undefined),
            ir.Constant(ir.VectorType(I32, self.lanes), [0] * self.lanes))
        mask = b.and_(b.icmp_signed(">=", lanes, splat(lo)), b.icmp_signed("<", lanes, splat(hi)))
        vty = self.vector[p]
        suffix = f"v{self.lanes}{'f' if self.etype[p] in (ir.FloatType(), ir.DoubleType()) else 'i'}{8 * self.itemsize}"
        name = f"llvm.masked.store.{suffix}.p0"
        store = self.em.module.globals.get(name) or ir.Function(
            self.em.module, ir.FunctionType(ir.VoidType(), [vty, PTR, I32, mask.type]), name=name)
        b.call(store, [value, address, ir.Constant(I32, self.itemsize), mask])

    def _loop(self, start: ir.Value, stop: ir.Value, name: str, body: Callable, carried=()) -> list:
        """`for i in [start, stop)`: `body(i, *values)` with the `carried` values (initial
        ones given) returns their values for the next iteration; returns their values after
        the loop."""
        b, fn = self.em.builder, self.em.fn
        pre = b.block
        header = fn.append_basic_block(name)
        inside = fn.append_basic_block(name + ".body")
        after = fn.append_basic_block(name + ".end")
        b.branch(header)
        b.position_at_end(header)
        i = b.phi(I64, name=name)
        i.add_incoming(start, pre)
        values = []
        for initial in carried:
            values.append(b.phi(initial.type))
            values[-1].add_incoming(initial, pre)
        b.cbranch(b.icmp_signed("<", i, stop), inside, after)
        b.position_at_end(inside)
        following = body(i, *values) or ()
        i.add_incoming(b.add(i, self._const(1), flags=["nuw", "nsw"]), b.block)
        for phi, v in zip(values, following):
            phi.add_incoming(v, b.block)
        b.branch(header)
        b.position_at_end(after)
        return values

    def _line(self, before: ir.Value, current: ir.Value, offset: ir.Value) -> ir.Value:
        """Elements [offset, offset + lanes) of the blocks `before` and `current` side by side,
        for `offset` in 1..lanes: one two-table permute (AVX-512's vpermt2ps/pd) at a run-time
        index, in registers (read from the row, a line across two stores would wait for both
        to retire, and a switch over constant shuffles kept every mask in a register)."""
        b = self.em.builder
        wide = ir.FloatType() if self.itemsize == 4 else ir.DoubleType()
        index_type = ir.IntType(8 * self.itemsize)
        vty = ir.VectorType(wide, self.lanes)
        ity = ir.VectorType(index_type, self.lanes)
        name = f"llvm.x86.avx512.vpermi2var.{'ps' if self.itemsize == 4 else 'pd'}.512"
        permute = self.em.module.globals.get(name) or ir.Function(
            self.em.module, ir.FunctionType(vty, [vty, ity, vty]), name=name)
        start = b.trunc(offset, index_type) if self.itemsize == 4 else offset
        splat = b.shuffle_vector(b.insert_element(ir.Constant(ity, ir.Undefined), start, ir.Constant(I32, 0)),
                                 ir.Constant(ity, ir.Undefined), ir.Constant(ir.VectorType(I32, self.lanes), [0] * self.lanes))
        index = b.add(splat, ir.Constant(ity, list(range(self.lanes))))
        as_wide = [v if v.type == vty else b.bitcast(v, vty) for v in (before, current)]
        line = b.call(permute, [as_wide[0], index, as_wide[1]])
        return line if current.type == vty else b.bitcast(line, current.type)

    # ---- the loop
    def emit(self, axis: int, start: ir.Value, stop: ir.Value, body: Callable[[], None],
             rest: Callable[[ir.Value], None]) -> None:
        """Blocks of `lanes` indices from `start` while a whole one fits before `stop`, each
        running `body` with the streamed stores into the rows; then `rest(i)` emits the
        ordinary loop from the first index no block covered."""
        em, b = self.em, self.em.builder
        self.axis = axis
        lanes = self._const(self.lanes)
        shift = self._const(self.lanes.bit_length() - 1)
        n = b.sub(stop, start)
        blocks = b.select(b.icmp_signed(">", n, self._const(0)), b.lshr(n, shift), self._const(0))
        end = b.add(start, b.shl(blocks, shift), flags=["nsw"])
        streamed = em.fn.append_basic_block("stream")
        after = em.fn.append_basic_block("stream.end")
        b.cbranch(b.icmp_signed(">", blocks, self._const(0)), streamed, after)
        b.position_at_end(streamed)

        # per output: its misalignment `m` at `start` in elements, the elements before its first
        # whole line `d`, and where in the row the line a block completes starts (`r`)
        first = {p: self._element(p, start) for p in self.buffers}
        mask = self._const(self.lanes - 1)
        size_shift = self._const(self.itemsize.bit_length() - 1)
        mis = {p: b.and_(b.lshr(b.ptrtoint(first[p], I64), size_shift), mask) for p in self.buffers}
        head = {p: b.and_(b.sub(lanes, mis[p]), mask) for p in self.buffers}
        line = {p: b.select(b.icmp_signed("==", head[p], self._const(0)), lanes, head[p]) for p in self.buffers}
        nontemporal = em.module.add_metadata([ir.Constant(ir.IntType(32), 1)])

        def block(j: ir.Value, *before: ir.Value) -> list[ir.Value]:
            i0 = b.add(start, b.shl(j, shift), flags=["nsw"])

            def element(i: ir.Value) -> None:
                em.indices[axis] = i
                em.scope = type(em.scope)(em.scope)
                body()
                em.scope = em.scope.parent
            self.block_start = i0
            self._loop(i0, b.add(i0, lanes, flags=["nsw"]), f"block{axis}", element)
            self.block_start = None
            em.indices[axis] = None
            current = [b.load(self._line_at(p, lanes), align=LINE) for p in self.buffers]
            for p, prev, cur in zip(self.buffers, before, current):
                partial = b.and_(b.icmp_signed("==", j, self._const(0)),
                                 b.icmp_signed("!=", head[p], self._const(0)))
                with b.if_else(partial) as (then, otherwise):
                    with then:  # the first block: the elements before the first whole line
                        self._store_lanes(p, cur, first[p], self._const(0), head[p])
                    with otherwise:
                        out = self._element(p, b.sub(b.add(i0, line[p]), lanes))
                        b.store(self._line(prev, cur, line[p]), out, align=LINE).set_metadata(
                            "nontemporal", nontemporal)
            return current

        last = self._loop(self._const(0), blocks, f"blocks{axis}", block,
                          carried=[ir.Constant(self.vector[p], ir.Undefined) for p in self.buffers])
        for p, cur in zip(self.buffers, last):  # the last block's elements after its last whole line
            self._store_lanes(p, cur, self._element(p, b.sub(end, lanes)), b.sub(lanes, mis[p]), lanes)
        sfence = em.module.globals.get("llvm.x86.sse.sfence") or \
            ir.Function(em.module, ir.FunctionType(ir.VoidType(), []), name="llvm.x86.sse.sfence")
        b.call(sfence, [])
        b.branch(after)
        b.position_at_end(after)
        rest(end)
