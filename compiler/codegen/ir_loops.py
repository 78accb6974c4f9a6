"""Counted loops and integer helpers for hand-written LLVM IR (GEMM, im2col), built with an
llvmlite `IRBuilder`."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, Union

from llvmlite import ir

I64 = ir.IntType(64)


def i64(v: Union[int, ir.Value]) -> ir.Value:
    """An i64 value: Python ints become constants, IR values pass through."""
    return ir.Constant(I64, v) if isinstance(v, int) else v


class _LoopID(ir.values.MDValue):
    """A loop's metadata node (`!N = !{!N, hints...}`): it refers to itself, so it is compared
    and hashed by identity."""

    def __init__(self, module: ir.Module, hints: list):
        super().__init__(module, [], name=str(len(module.metadata)))
        self.operands = (self, *hints)

    __hash__ = object.__hash__

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return self is not other


def unroll_fully(branch: ir.Instruction) -> None:
    """Mark the loop whose back edge is `branch` `llvm.loop.unroll.full`: the pipeline unrolls
    no other loop (see `library.optimize`); for loops of a few iterations whose copies fold."""
    module = branch.function.module
    hint = module.add_metadata([ir.MetaDataString(module, "llvm.loop.unroll.full")])
    branch.set_metadata("llvm.loop", _LoopID(module, [hint]))


def vectorize_masked(branch: ir.Instruction, width: int) -> None:
    """Mark the loop whose back edge is `branch` to be vectorized `width` lanes wide with its
    last, partial vector masked (tail folding), one iteration of the vector loop at a time: one
    copy of the body instead of a main vector loop, a vectorized remainder and a scalar one, for
    loops of at most a few vectors' iterations."""
    module = branch.function.module
    hints = [module.add_metadata([ir.MetaDataString(module, name), value]) for name, value in (
        ("llvm.loop.vectorize.enable", ir.Constant(ir.IntType(1), 1)),
        ("llvm.loop.vectorize.width", ir.Constant(ir.IntType(32), width)),
        ("llvm.loop.interleave.count", ir.Constant(ir.IntType(32), 1)),
        ("llvm.loop.vectorize.predicate.enable", ir.Constant(ir.IntType(1), 1)))]
    branch.set_metadata("llvm.loop", _LoopID(module, hints))


@contextmanager
def for_range(builder: ir.IRBuilder, start, stop, step: int = 1, name: str = "i") -> Iterator[ir.Value]:
    """Emit `for (i = start; i < stop; i += step)`: the body is what the `with` block builds, and
    the builder continues after the loop when it exits."""
    start, stop = i64(start), i64(stop)
    before = builder.block
    head = builder.append_basic_block(f"{name}.head")
    body = builder.append_basic_block(f"{name}.body")
    done = builder.append_basic_block(f"{name}.done")
    builder.branch(head)
    builder.position_at_end(head)
    index = builder.phi(I64, name)
    index.add_incoming(start, before)
    builder.cbranch(builder.icmp_signed("<", index, stop), body, done)
    builder.position_at_end(body)
    yield index
    index.add_incoming(builder.add(index, i64(step)), builder.block)
    builder.branch(head)
    builder.position_at_end(done)


def smin(builder: ir.IRBuilder, a, b) -> ir.Value:
    a, b = i64(a), i64(b)
    return builder.select(builder.icmp_signed("<", a, b), a, b)


def smax(builder: ir.IRBuilder, a, b) -> ir.Value:
    a, b = i64(a), i64(b)
    return builder.select(builder.icmp_signed(">", a, b), a, b)


def element(builder: ir.IRBuilder, ptr: ir.Value, offset) -> ir.Value:
    """The address `ptr + offset` (offset in elements)."""
    return builder.gep(ptr, [i64(offset)])


def copy_elements(builder: ir.IRBuilder, dst: ir.Value, src: ir.Value, count) -> None:
    """Copy `count` elements from `src` to `dst` (typed pointers to floats, doubles or ints; the
    ranges do not overlap) with `llvm.memcpy`: a run of run-time length copied as LLVM copies
    memory, without a loop for the optimizer to vectorize."""
    ety = dst.type.pointee
    size = {ir.FloatType: 4, ir.DoubleType: 8}.get(type(ety)) or ety.width // 8
    memcpy = builder.module.declare_intrinsic("llvm.memcpy", [ir.PointerType(), ir.PointerType(), I64])
    builder.call(memcpy, [dst, src, builder.mul(i64(count), i64(size)), ir.Constant(ir.IntType(1), 0)])


def entry_alloca(builder: ir.IRBuilder, ty: ir.Type) -> ir.Value:
    """A stack slot in the function's entry block, so a loop does not allocate it again."""
    with builder.goto_block(builder.function.entry_basic_block):
        return builder.alloca(ty)
