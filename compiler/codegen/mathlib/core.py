"""The emission context of the math library: typed constants, intrinsics that map to single
instructions, exact double-word arithmetic and power-of-two scaling, for scalars and vectors."""

from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
from llvmlite import ir

from .coefficients import COEFFICIENTS


def _exact_constants():
    """Constants to 60 digits as exact fractions, for splitting into head and tail parts."""
    with localcontext() as ctx:
        ctx.prec = 60
        pi = Decimal("3.14159265358979323846264338327950288419716939937510582097494459")
        ln2, ln10, sqrt2 = Decimal(2).ln(), Decimal(10).ln(), Decimal(2).sqrt()
        values = {"pi": pi, "ln2": ln2, "ln10": ln10, "sqrt2": sqrt2,
                  "sqrtpi": pi.sqrt(), "sqrt2_over_pi": (2 / pi).sqrt()}
    return {name: Fraction(v) for name, v in values.items()}


EXACT = _exact_constants()


def head_bits(value: Fraction, bits: int) -> float:
    """value rounded to a float with at most `bits` significant bits (a Cody-Waite head whose
    products with small integers are exact)."""
    m, e = np.frexp(float(value))
    scale = 2.0**bits
    return float(np.ldexp(np.round(m * scale), int(e) - bits))


class Ctx:
    """An IRBuilder bound to one float type (f32/f64, scalar or fixed vector) with helpers."""

    def __init__(self, builder: ir.IRBuilder, ty: ir.Type):
        self.b = builder
        self.ty = ty
        self.lanes = ty.count if isinstance(ty, ir.VectorType) else None
        scalar = ty.element if self.lanes else ty
        assert isinstance(scalar, (ir.FloatType, ir.DoubleType)), f"not a float type: {ty}"
        self.is64 = isinstance(scalar, ir.DoubleType)
        self.np = np.float64 if self.is64 else np.float32
        self.mant = 52 if self.is64 else 23
        self.bias = 1023 if self.is64 else 127
        self.ity = self._shaped(ir.IntType(64 if self.is64 else 32))
        self.coeffs = {k: tuple(_decode(v) for v in vs) if k != "erfcx" else vs
                       for k, vs in COEFFICIENTS["float64" if self.is64 else "float32"].items()}

    def _shaped(self, scalar):
        return ir.VectorType(scalar, self.lanes) if self.lanes else scalar

    def wide(self):
        """The float64 context with the same lane count (float32 kernels computed in float64)."""
        return Ctx(self.b, self._shaped(ir.DoubleType()))

    def convert(self, value, to: "Ctx"):
        """value converted (exactly when widening) to the type of another context."""
        if to.ty == self.ty:
            return value
        return self.b.fpext(value, to.ty) if to.is64 else self.b.fptrunc(value, to.ty)

    # constants -------------------------------------------------------------------------------
    def c(self, value):
        """A float constant, rounded to this type first so LLVM accepts it exactly."""
        v = float(self.np(value))
        scalar = self.ty.element if self.lanes else self.ty
        return ir.Constant(self.ty, [v] * self.lanes) if self.lanes else ir.Constant(scalar, v)

    def ci(self, value):
        """An integer constant of the same width as the float type."""
        scalar = self.ity.element if self.lanes else self.ity
        return ir.Constant(self.ity, [value] * self.lanes) if self.lanes else ir.Constant(scalar, value)

    def split_const(self, value: Fraction, bits=None):
        """An exact constant as a head (rounded, or with at most `bits` significant bits) and
        the rounded tail: head + tail carries about twice the working precision."""
        hi = float(self.np(float(value))) if bits is None else head_bits(value, bits)
        lo = float(self.np(float(value - Fraction(hi))))
        return self.c(hi), self.c(lo)

    # arithmetic ------------------------------------------------------------------------------
    def add(self, a, b): return self.b.fadd(a, b)
    def sub(self, a, b): return self.b.fsub(a, b)
    def mul(self, a, b): return self.b.fmul(a, b)
    def div(self, a, b): return self.b.fdiv(a, b)
    def neg(self, a): return self.b.fneg(a)

    def intrinsic(self, name, *args):
        """Call llvm.<name> overloaded on this type (only intrinsics that are instructions)."""
        suffix = (f"v{self.lanes}" if self.lanes else "") + ("f64" if self.is64 else "f32")
        full = f"llvm.{name}.{suffix}"
        module = self.b.module
        fn = module.globals.get(full)
        if fn is None:
            fn = ir.Function(module, ir.FunctionType(self.ty, [self.ty] * len(args)), full)
        return self.b.call(fn, list(args))

    def fma(self, a, b, c):
        """a*b + c, fused where the target has FMA (llvm.fmuladd never becomes a libm call)."""
        return self.intrinsic("fmuladd", a, b, c)

    def fabs(self, a): return self.intrinsic("fabs", a)
    def rint(self, a): return self.intrinsic("rint", a)
    def trunc(self, a): return self.intrinsic("trunc", a)
    def floor(self, a): return self.intrinsic("floor", a)
    def sqrt(self, a): return self.intrinsic("sqrt", a)
    def copysign(self, mag, sign): return self.intrinsic("copysign", mag, sign)

    def poly(self, x, coeffs):
        """Horner evaluation of sum(coeffs[k] * x**k)."""
        acc = self.c(coeffs[-1])
        for c in reversed(coeffs[:-1]):
            acc = self.fma(acc, x, self.c(c))
        return acc

    # comparisons and selection ---------------------------------------------------------------
    def lt(self, a, b): return self.b.fcmp_ordered("<", a, b)
    def le(self, a, b): return self.b.fcmp_ordered("<=", a, b)
    def gt(self, a, b): return self.b.fcmp_ordered(">", a, b)
    def ge(self, a, b): return self.b.fcmp_ordered(">=", a, b)
    def eq(self, a, b): return self.b.fcmp_ordered("==", a, b)
    def ne(self, a, b): return self.b.fcmp_unordered("!=", a, b)
    def isnan(self, a): return self.b.fcmp_unordered("uno", a, a)
    def isinf(self, a): return self.eq(self.fabs(a), self.c(np.inf))
    def isfinite(self, a): return self.lt(self.fabs(a), self.c(np.inf))
    def select(self, cond, a, b): return self.b.select(cond, a, b)
    def and_(self, a, b): return self.b.and_(a, b)
    def or_(self, a, b): return self.b.or_(a, b)
    def not_(self, a): return self.b.not_(a)

    def clamp(self, x, lo, hi):
        """x limited to [lo, hi]; NaN passes through (minnum/maxnum would drop it)."""
        x = self.select(self.gt(x, self.c(hi)), self.c(hi), x)
        return self.select(self.lt(x, self.c(lo)), self.c(lo), x)

    def keep_zero(self, x, result):
        """result, but x itself where x is a zero of either sign (f(+-0) = +-0)."""
        return self.select(self.eq(x, self.c(0.0)), x, result)

    # bits ------------------------------------------------------------------------------------
    def bits(self, x): return self.b.bitcast(x, self.ity)
    def from_bits(self, i): return self.b.bitcast(i, self.ty)

    def to_int(self, n):
        """A float holding a small integer (or NaN, read as 0) converted to an integer."""
        n = self.select(self.isnan(n), self.c(0.0), n)
        return self.b.fptosi(n, self.ity)

    def pow2i(self, k):
        """2**k for an integer vector k in the normal exponent range, built from its bits."""
        return self.from_bits(self.b.shl(self.b.add(k, self.ci(self.bias)), self.ci(self.mant)))

    def scale(self, p, k):
        """p * 2**k for integers k within twice the exponent range, in two exact steps so that
        results that overflow or fall into the subnormals round only once."""
        half = self.b.ashr(k, self.ci(1))
        return self.mul(self.mul(p, self.pow2i(half)), self.pow2i(self.b.sub(k, half)))

    def frexp(self, x):
        """(m, k) with x = m * 2**k and m in [sqrt(1/2), sqrt(2)) for finite positive x,
        subnormals included (they are first scaled into the normal range)."""
        tiny = self.lt(x, self.c(np.finfo(self.np).tiny))
        shift = self.mant + 2
        x = self.select(tiny, self.mul(x, self.c(2.0 ** shift)), x)
        bits = self.bits(x)
        # Subtracting the bits of sqrt(1/2) puts the exponent step at sqrt(2) (as in musl's log).
        offset = int(np.array(np.sqrt(0.5), dtype=self.np).view(np.int64 if self.is64 else np.int32))
        t = self.b.sub(bits, self.ci(offset))
        k = self.b.ashr(t, self.ci(self.mant))
        mbits = self.b.sub(bits, self.b.shl(k, self.ci(self.mant)))
        k = self.b.sub(k, self.select(tiny, self.ci(shift), self.ci(0)))
        return self.from_bits(mbits), self.b.sitofp(k, self.ty)

    # exact double-word arithmetic ------------------------------------------------------------
    def split(self, a):
        """Veltkamp split of a into a head with half the bits and the exact rest (for |a| below
        the overflow threshold over 2^(mant/2 + 1); larger a give NaN)."""
        factor = self.c(2.0 ** ((self.mant + 2) // 2) + 1)
        t = self.mul(a, factor)
        hi = self.sub(t, self.sub(t, a))
        return hi, self.sub(a, hi)

    def two_prod(self, a, b):
        """(p, e) with p = fl(a*b) and p + e = a*b exactly (Dekker; no FMA needed)."""
        p = self.mul(a, b)
        ah, al = self.split(a)
        bh, bl = self.split(b)
        e = self.add(self.sub(self.mul(ah, bh), p), self.mul(ah, bl))
        e = self.add(self.add(e, self.mul(al, bh)), self.mul(al, bl))
        return p, e

    def two_sum(self, a, b):
        """(s, e) with s = fl(a+b) and s + e = a+b exactly (Knuth)."""
        s = self.add(a, b)
        bb = self.sub(s, a)
        e = self.add(self.sub(a, self.sub(s, bb)), self.sub(b, bb))
        return s, e

    def dd_mul(self, a_hi, a_lo, b_hi, b_lo):
        """(a_hi + a_lo)(b_hi + b_lo) as a double-word (a_lo * b_lo dropped)."""
        p, e = self.two_prod(a_hi, b_hi)
        return p, self.fma(a_hi, b_lo, self.fma(a_lo, b_hi, e))

    def fast_two_sum(self, a, b):
        """(s, e) with s + e = a+b exactly, given |a| >= |b|."""
        s = self.add(a, b)
        return s, self.sub(b, self.sub(s, a))


def _decode(value):
    """A coefficient as stored in coefficients.py (hex string) as a float."""
    return float.fromhex(value) if isinstance(value, str) else value
