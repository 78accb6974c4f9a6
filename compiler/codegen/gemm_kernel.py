"""The loop GEMM kernel in LLVM IR: any strides, any element type (float32, float64, int64).
It serves tiny products (cheaper than a BLAS call), int64 (no BLAS) and machines without a BLAS,
so it is blocked for cache (`blas.PANEL_*`-sized panels of B) and its inner loop vectorizes."""

from __future__ import annotations

from llvmlite import ir

from .ir_loops import I64, element, for_range, smin

PANEL_K = 128
PANEL_N = 256


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

    def add(self, a, b):
        return self.builder.fadd(a, b, flags=("contract",)) if self.is_float else self.builder.add(a, b)

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
    m, n, k, alpha, a, a_rs, a_cs, b, b_rs, b_cs, beta, c, c_rs, c_cs = fn.args
    for ptr in (a, b, c):
        ptr.add_attribute("noalias")
    builder = ir.IRBuilder(fn.append_basic_block("entry"))
    arith = Arithmetic(builder, ety)
    at = lambda ptr, i, j, rs, cs: element(builder, ptr, builder.add(builder.mul(i, rs), builder.mul(j, cs)))

    beta_is_zero = arith.is_zero(beta)
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
    builder.ret_void()
    return fn
