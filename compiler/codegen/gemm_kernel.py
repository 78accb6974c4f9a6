"""GEMM without a BLAS, in LLVM IR, for any strides and element type (float32, float64, int64):
a loop kernel for tiny run-time-sized products (cheaper than a BLAS call), int64 (no BLAS) and
machines without a BLAS, so it is blocked for cache (PANEL_K x PANEL_N panels of B) and its inner
loop vectorizes; and straight-line code for tiny products whose sizes are known."""

from __future__ import annotations

from llvmlite import ir

from .ir_loops import I64, element, entry_alloca, for_range, smin

PANEL_K = 128
PANEL_N = 256
# Narrower products keep each C element's sum in a register (dot form): the panel form's inner
# loop would be too short to vectorize and chains every update through memory.
NARROW_N = 4


def signature(ety: ir.Type) -> ir.FunctionType:
    """(m, n, k, alpha, A, a_rs, a_cs, B, b_rs, b_cs, beta, C, c_rs, c_cs) -> void."""
    p = ety.as_pointer()
    return ir.FunctionType(ir.VoidType(), [I64, I64, I64, ety, p, I64, I64, p, I64, I64, ety, p, I64, I64])


class Arithmetic:
    """Multiply, add and zero of one element type, so one emitter serves floats and ints."""

    def __init__(self, builder: ir.IRBuilder, ety: ir.Type):
        self.builder, self.ety = builder, ety
        self.is_float = not isinstance(ety, ir.IntType)
        self.zero = ir.Constant(ety, 0.0 if self.is_float else 0)

    def mul(self, a, b):
        return self.builder.fmul(a, b, flags=("contract",)) if self.is_float else self.builder.mul(a, b)

    def add(self, a, b, reassociate: bool = False):
        """a + b; `reassociate` lets a sum over a loop be split into vector lanes (as BLAS does)."""
        if not self.is_float:
            return self.builder.add(a, b)
        return self.builder.fadd(a, b, flags=("contract", "reassoc") if reassociate else ("contract",))

    def is_zero(self, a):
        if self.is_float:
            return self.builder.fcmp_ordered("==", a, self.zero)
        return self.builder.icmp_signed("==", a, self.zero)


def kernel_function(module: ir.Module, ety: ir.Type, name: str) -> ir.Function:
    """The module's loop kernel for `ety`, defined on first use (internal linkage)."""
    existing = module.globals.get(name)
    if existing is not None:
        return existing
    fn = ir.Function(module, signature(ety), name)
    fn.linkage = "internal"
    fn.attributes.add("noinline")  # one copy a module; constant tiny sizes use emit_unrolled
    for ptr in (fn.args[4], fn.args[7], fn.args[11]):  # A, B, C
        ptr.add_attribute("noalias")
    builder = ir.IRBuilder(fn.append_basic_block("entry"))
    arith = Arithmetic(builder, ety)
    at = lambda ptr, i, j, rs, cs: element(builder, ptr, builder.add(builder.mul(i, rs), builder.mul(j, cs)))

    beta_is_zero = arith.is_zero(fn.args[10])
    narrow = builder.icmp_signed("<", fn.args[1], ir.Constant(I64, NARROW_N))
    with builder.if_else(narrow) as (dot_form, panel_form):
        with dot_form:
            _emit_dot_form(builder, arith, fn.args, beta_is_zero, at)
        with panel_form:
            _emit_panel_form(builder, arith, fn.args, beta_is_zero, at)
    builder.ret_void()
    return fn


def _emit_dot_form(builder, arith, args, beta_is_zero, at) -> None:
    """C[i, j] = alpha * (A[i, :] . B[:, j]) + beta * C[i, j], the sum kept in a register."""
    m, n, k, alpha, a, a_rs, a_cs, b, b_rs, b_cs, beta, c, c_rs, c_cs = args
    total = entry_alloca(builder, arith.ety)
    with for_range(builder, 0, m, name="i") as i:
        with for_range(builder, 0, n, name="j") as j:
            builder.store(arith.zero, total)
            with for_range(builder, 0, k, name="p") as p:
                product = arith.mul(builder.load(at(a, i, p, a_rs, a_cs)), builder.load(at(b, p, j, b_rs, b_cs)))
                builder.store(arith.add(builder.load(total), product, reassociate=True), total)
            cp = at(c, i, j, c_rs, c_cs)
            result = arith.mul(alpha, builder.load(total))
            scaled = arith.add(result, arith.mul(beta, builder.load(cp)))
            builder.store(builder.select(beta_is_zero, result, scaled), cp)


def _emit_panel_form(builder, arith, args, beta_is_zero, at) -> None:
    """C = beta * C, then C[i, panel] += alpha * A[i, p] * B[p, panel] over cache panels of B."""
    m, n, k, alpha, a, a_rs, a_cs, b, b_rs, b_cs, beta, c, c_rs, c_cs = args
    with for_range(builder, 0, m, name="i") as i:
        with for_range(builder, 0, n, name="j") as j:
            cp = at(c, i, j, c_rs, c_cs)
            scaled = arith.mul(beta, builder.load(cp))
            builder.store(builder.select(beta_is_zero, arith.zero, scaled), cp)

    with for_range(builder, 0, n, PANEL_N, name="j0") as j0:
        j1 = smin(builder, builder.add(j0, ir.Constant(I64, PANEL_N)), n)
        with for_range(builder, 0, k, PANEL_K, name="p0") as p0:
            p1 = smin(builder, builder.add(p0, ir.Constant(I64, PANEL_K)), k)
            with for_range(builder, 0, m, name="i") as i:
                with for_range(builder, p0, p1, name="p") as p:
                    scaled_a = arith.mul(alpha, builder.load(at(a, i, p, a_rs, a_cs)))
                    with for_range(builder, j0, j1, name="j") as j:
                        cp = at(c, i, j, c_rs, c_cs)
                        product = arith.mul(scaled_a, builder.load(at(b, p, j, b_rs, b_cs)))
                        builder.store(arith.add(builder.load(cp), product), cp)


def emit_unrolled(builder: ir.IRBuilder, ety: ir.Type, m: int, n: int, k: int, alpha, a, b, c,
                  beta) -> None:
    """C = alpha * A @ B + beta * C as straight-line code; a, b, c are (pointer, row stride,
    column stride) with i64 strides; a beta of Python 0 writes C without reading it."""
    arith = Arithmetic(builder, ety)
    at = lambda op, i, j: element(builder, op[0], builder.add(builder.mul(ir.Constant(I64, i), op[1]),
                                                              builder.mul(ir.Constant(I64, j), op[2])))
    alpha_v = alpha if isinstance(alpha, ir.Value) else ir.Constant(ety, alpha)
    reads_c = isinstance(beta, ir.Value) or beta != 0
    if reads_c:
        beta_v = beta if isinstance(beta, ir.Value) else ir.Constant(ety, beta)
        beta_is_zero = arith.is_zero(beta_v)
    for i in range(m):
        for j in range(n):
            total = arith.zero
            for p in range(k):
                total = arith.add(total, arith.mul(builder.load(at(a, i, p)), builder.load(at(b, p, j))))
            result = arith.mul(alpha_v, total)
            slot = at(c, i, j)
            if reads_c:
                scaled = arith.add(result, arith.mul(beta_v, builder.load(slot)))
                result = builder.select(beta_is_zero, result, scaled)
            builder.store(result, slot)
