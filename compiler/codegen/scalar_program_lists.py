"""Lists of numbers that a scalar program builds and grows: `append` writes into stack memory
of a capacity fixed at compile time (a bound proven from constant loop trip counts, else a
default), and an append past it refuses the call, so the interpreter re-runs the program.
Slices and concatenations make new lists; every read sees the list's length at that point."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from llvmlite import ir

from irjit.ops.lowering_common import NotLowerable

from .scalar_program_emit import I8, I64, LLVM_TYPES, ListArg, Num, NumberEmitter

DEFAULT_CAPACITY = 1024  # elements of a list whose appends no constant trip count bounds


def element_type(kind: str) -> ir.Type:
    """How a list stores an element of `kind` (bools as bytes, as list arguments pass them)."""
    return I8 if kind == "bool" else LLVM_TYPES[kind]


@dataclass(frozen=True)
class ListVar:
    """A list built by the program: room for `capacity` elements at `data`, its current
    length in memory at `length_ptr` (appends change it in place, as they do a Python list)."""

    data: ir.Value
    length_ptr: ir.Value
    capacity: int
    kind: str


@dataclass(frozen=True)
class ListView:
    """A list read where it stands: its elements, its length there, and its capacity (the
    most elements it can hold: the size of an output buffer that receives it)."""

    data: ir.Value
    length: ir.Value
    capacity: int
    kind: str

    def as_arg(self) -> ListArg:
        return ListArg(self.data, self.length, self.kind)


class ProgramEmitter(NumberEmitter):
    """The number emitter with lists the program builds, appends to, slices and joins; their
    memory is allocated in `allocas`, the function's first block (once per call)."""

    def __init__(self, builder: ir.IRBuilder, refuse: ir.Block, guards, allocas: ir.Block):
        super().__init__(builder, refuse, guards)
        self._allocas = ir.IRBuilder(allocas)

    def new_list(self, items: list, capacity: int, kind: str) -> ListVar:
        """A list holding `items` with room for `capacity` (its memory is allocated once per
        call, and filled here)."""
        if len(items) > capacity:
            raise NotLowerable("a list larger than its capacity")
        data = self._allocas.alloca(element_type(kind), size=ir.Constant(I64, max(capacity, 1)))
        length_ptr = self._allocas.alloca(I64)
        for k, x in enumerate(items):
            self._store(data, ir.Constant(I64, k), self._as_element(x, kind), kind)
        self.b.store(ir.Constant(I64, len(items)), length_ptr)
        return ListVar(data, length_ptr, capacity, kind)

    def _as_element(self, x, kind: str) -> Num:
        x = self.num(x)
        if kind == "float":
            return self.to_float(x)
        if kind == "int":
            return self.as_int(x)
        if x.kind != "bool":
            raise NotLowerable(f"a {x.kind} in a list of bools")
        return x

    def _store(self, data: ir.Value, i: ir.Value, x: Num, kind: str) -> None:
        value = self.b.zext(x.value, I8) if kind == "bool" else x.value
        self.b.store(value, self.b.gep(data, [i], source_etype=element_type(kind)))

    def _element(self, data: ir.Value, i: ir.Value, kind: str) -> Num:
        value = self.b.load(self.b.gep(data, [i], source_etype=element_type(kind)), typ=element_type(kind))
        return Num(self.b.icmp_unsigned("!=", value, ir.Constant(I8, 0)) if kind == "bool" else value, kind)

    def view(self, xs) -> ListView:
        """`xs` (built here, a constant or program list, or an argument) read at this point."""
        if isinstance(xs, ListView):
            return xs
        if isinstance(xs, ListVar):
            return ListView(xs.data, self.b.load(xs.length_ptr, typ=I64), xs.capacity, xs.kind)
        if isinstance(xs, (list, tuple)):
            items = [self.num(x) for x in xs]
            kinds = {x.kind for x in items}
            if len(kinds) != 1:
                raise NotLowerable("a list of numbers of no one kind")
            return self.view(self.new_list(items, len(items), kinds.pop()))
        raise NotLowerable("a list argument where a list with a known capacity is needed")

    @staticmethod
    def _readable(xs):
        return xs if isinstance(xs, (list, tuple, ListArg)) else None

    def _read(self, xs):
        """What the number emitter's list reads take: program lists and arguments as they are,
        lists built here as their elements and current length."""
        readable = self._readable(xs)
        return readable if readable is not None else self.view(xs).as_arg()

    def length(self, xs) -> Num:
        return super().length(self._read(xs))

    def getitem(self, xs, idx) -> Num:
        return super().getitem(self._read(xs), idx)

    def contains(self, xs, item) -> Num:
        return super().contains(self._read(xs), item)

    def all(self, xs) -> Num:
        return super().all(self._read(xs))

    def any(self, xs) -> Num:
        return super().any(self._read(xs))

    def append(self, xs, x) -> ListVar:
        """`xs.append(x)` on a list built here; past its capacity the call is refused."""
        if not isinstance(xs, ListVar):
            raise NotLowerable("append to a list the program did not build")
        n = self.b.load(xs.length_ptr, typ=I64)
        self.refuse_if(self.b.icmp_signed(">=", n, ir.Constant(I64, xs.capacity)))
        self._store(xs.data, n, self._as_element(x, xs.kind), xs.kind)
        self.b.store(self.b.add(n, ir.Constant(I64, 1)), xs.length_ptr)
        return xs

    def _for(self, count: ir.Value, body: Callable[[ir.Value], None]) -> None:
        """`body(i)` for i in [0, count)."""
        b = self.b
        before = b.block
        head, loop, done = (b.append_basic_block(n) for n in ("for_head", "for_body", "for_done"))
        b.branch(head)
        b.position_at_end(head)
        i = b.phi(I64)
        i.add_incoming(ir.Constant(I64, 0), before)
        b.cbranch(b.icmp_signed("<", i, count), loop, done)
        b.position_at_end(loop)
        body(i)
        i.add_incoming(b.add(i, ir.Constant(I64, 1)), b.block)
        b.branch(head)
        b.position_at_end(done)

    def _copy(self, src: ListView, dst: ListVar, at: ir.Value) -> None:
        """src's elements into dst from position `at` (dst has room by its capacity)."""
        self._for(src.length, lambda i: self._store(
            dst.data, self.b.add(at, i), self._element(src.data, i, src.kind), dst.kind))

    def _bound(self, x, n: ir.Value, default: ir.Value) -> ir.Value:
        """A slice bound as Python clamps it into [0, n] (negative ones count from the end)."""
        if x is None:
            return default
        b, zero = self.b, ir.Constant(I64, 0)
        i = self.as_int(x).value
        i = b.select(b.icmp_signed("<", i, zero), b.add(i, n), i)
        i = b.select(b.icmp_signed("<", i, zero), zero, i)
        return b.select(b.icmp_signed(">", i, n), n, i)

    def _source(self, xs) -> ListView:
        """`xs` read to make a new list from: a list argument too, whose capacity is the
        default (a longer one refuses the call)."""
        if isinstance(xs, ListArg):
            self.refuse_if(self.b.icmp_signed(">", xs.length, ir.Constant(I64, DEFAULT_CAPACITY)))
            return ListView(xs.data, xs.length, DEFAULT_CAPACITY, xs.kind)
        return self.view(xs)

    def slice_list(self, xs, start=None, end=None, step=1) -> ListVar:
        """`xs[start:end:step]`, a new list, for a constant positive step."""
        if isinstance(step, Num) and step.kind == "int" and isinstance(step.value, ir.Constant):
            step = step.value.constant
        if not isinstance(step, int) or isinstance(step, bool) or step <= 0:
            raise NotLowerable("a list slice without a constant positive step")
        src = self._source(xs)
        b, n = self.b, src.length
        lo, hi = self._bound(start, n, ir.Constant(I64, 0)), self._bound(end, n, n)
        span = b.select(b.icmp_signed(">", hi, lo), b.sub(hi, lo), ir.Constant(I64, 0))
        count = b.sdiv(b.add(span, ir.Constant(I64, step - 1)), ir.Constant(I64, step))
        out = self.new_list([], -(-src.capacity // step), src.kind)
        self._for(count, lambda i: self._store(out.data, i, self._element(
            src.data, b.add(lo, b.mul(i, ir.Constant(I64, step))), src.kind), src.kind))
        b.store(count, out.length_ptr)
        return out

    def concat(self, xs, ys) -> ListVar:
        """`xs + ys`, a new list."""
        a, c = self._source(xs), self._source(ys)
        if a.kind != c.kind:
            raise NotLowerable("joining lists of different kinds")
        out = self.new_list([], a.capacity + c.capacity, a.kind)
        self._copy(a, out, ir.Constant(I64, 0))
        self._copy(c, out, a.length)
        self.b.store(self.b.add(a.length, c.length), out.length_ptr)
        return out

    def sorted_list(self, xs) -> ListVar:
        """`sorted(xs)`, a new list, by a stable insertion sort on `<` (Python's order); a
        float list holding nan is refused (its order is the sort algorithm's)."""
        src = self._source(xs)
        b, kind, one = self.b, src.kind, ir.Constant(I64, 1)
        out = self.new_list([], src.capacity, kind)
        if kind == "float":
            self._for(src.length, lambda i: self.refuse_if(self._nan(self._element(src.data, i, kind).value)))
        self._copy(src, out, ir.Constant(I64, 0))
        b.store(src.length, out.length_ptr)
        j_ptr = self._allocas.alloca(I64)

        def insert(i):
            x = self._element(out.data, i, kind)
            b.store(i, j_ptr)
            head, shift, done = (b.append_basic_block(n) for n in ("sort_head", "sort_shift", "sort_done"))
            b.branch(head)
            b.position_at_end(head)
            j = b.load(j_ptr, typ=I64)
            positive = b.icmp_signed(">", j, ir.Constant(I64, 0))
            prev_at = b.select(positive, b.sub(j, one), ir.Constant(I64, 0))
            prev = self._element(out.data, prev_at, kind)
            b.cbranch(b.and_(positive, self.lt(x, prev).value), shift, done)
            b.position_at_end(shift)
            self._store(out.data, j, prev, kind)
            b.store(b.sub(j, one), j_ptr)
            b.branch(head)
            b.position_at_end(done)
            self._store(out.data, b.load(j_ptr, typ=I64), x, kind)

        self._for(src.length, insert)
        return out

    def write_out(self, xs, out: ir.Value) -> tuple[str, int]:
        """Copy list `xs` into the caller's buffer whose address is at out[0] (room for the
        list's capacity) and store its length in out[1]; its (kind, capacity)."""
        src = self.view(xs)
        slot = ir.LiteralStructType([ir.PointerType(), I64])
        data = self.b.load(self.b.gep(out, [ir.Constant(ir.IntType(32), 0), ir.Constant(ir.IntType(32), 0)],
                                      source_etype=slot), typ=ir.PointerType())
        dst = ListVar(data, None, src.capacity, src.kind)
        self._copy(src, dst, ir.Constant(I64, 0))
        self.b.store(src.length, self.b.gep(out, [ir.Constant(ir.IntType(32), 0), ir.Constant(ir.IntType(32), 1)],
                                            source_etype=slot))
        return src.kind, src.capacity


def merged_view(views: list[ListView], blocks: list[ir.Block], b: ir.IRBuilder) -> ListView:
    """One view of the lists that branches yield (phis at the merge point `b`)."""
    if len({v.kind for v in views}) != 1:
        raise NotLowerable("branches yield lists of different kinds")
    data, length = b.phi(ir.PointerType()), b.phi(I64)
    for v, block in zip(views, blocks):
        data.add_incoming(v.data, block)
        length.add_incoming(v.length, block)
    return ListView(data, length, max(v.capacity for v in views), views[0].kind)


def capacity_bound(trips: list[Optional[int]], initial: int) -> int:
    """The capacity of a list holding `initial` items with one append per iteration of each
    loop nest given by its constant trip counts (None: not constant; then the default)."""
    if any(t is None for t in trips):
        return max(DEFAULT_CAPACITY, initial)
    return initial + sum(max(t, 0) for t in trips)
