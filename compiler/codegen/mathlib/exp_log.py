"""Exponentials and logarithms: exp, exp2, expm1, log, log2, log10, log1p and the kernels that
pow, the hyperbolic functions and sigmoid build on.

exp reduces x = n ln2 + r with |r| <= ln2/2 (Cody-Waite, ln2 split into a head short enough
that n * head is exact and a tail) and evaluates e^r - 1 = r + r^2 P(r). log splits
x = m 2^k with m in [sqrt(1/2), sqrt(2)) and uses log(m) = 2s + s R(s^2), s = (m-1)/(m+1),
arranged as in fdlibm so that f = m - 1 stays exact. P and R come from fit_mathlib.py.
"""

from fractions import Fraction

import numpy as np

from .core import EXACT, Ctx

LOG2E = 1 / EXACT["ln2"]


def limits(ctx: Ctx):
    """(lo, hi): exp(x) is 0 below lo and inf above hi, with room for the two-step scale."""
    return (-746.0, 710.0) if ctx.is64 else (-104.0, 89.0)


def ln2_parts(ctx: Ctx):
    """ln2 as a head 11 bits shorter than the format (n * head exact for |n| < 2048) and a
    tail."""
    return ctx.split_const(EXACT["ln2"], bits=ctx.mant + 1 - 11)


def reduce_exp(ctx: Ctx, hi, lo=None):
    """(n, r) with hi + lo = n ln2 + r, |r| <= ln2/2 (plus rounding)."""
    n = ctx.rint(ctx.mul(hi, ctx.c(float(LOG2E))))
    c_hi, c_lo = ln2_parts(ctx)
    r = ctx.fma(n, ctx.neg(c_hi), hi)
    r = ctx.fma(n, ctx.neg(c_lo), r)
    return n, (r if lo is None else ctx.add(r, lo))


def exp_scaled_parts(ctx: Ctx, z, shift: int = 0):
    """(s, q) with e^z * 2**shift = s (1 + q), s a power of two and q = e^r - 1 (|r| <= ln2/2),
    for z whose 2**(round(z / ln2) + shift) is a normal number (the caller clamps z). n =
    round(z / ln2) and s come from one fused multiply-add with a "magic" bias, 1.5 * 2^mant
    plus the exponent bias and `shift`: the sum's low mantissa bits hold n + bias + shift,
    which shifted into the exponent field are s (as XNNPACK and Sleef do), without rounding,
    conversion or range checks. NaN propagates through q."""
    s, n = pow2_rounded(ctx, z, LOG2E, shift)
    c_hi, c_lo = ln2_parts(ctx)
    r = ctx.fma(n, ctx.neg(c_lo), ctx.fma(n, ctx.neg(c_hi), z))
    return s, expm1_poly(ctx, r)


def pow2_rounded(ctx: Ctx, z, factor, shift: int = 0):
    """(2**(n + shift), n) for n = round(z * factor), from one fused multiply-add with the
    magic bias of exp_scaled_parts; n + shift must be a normal exponent (the caller clamps z)."""
    magic = 1.5 * 2.0**ctx.mant + ctx.bias + shift
    t = ctx.fma(z, ctx.c(float(factor)), ctx.c(magic))
    s = ctx.from_bits(ctx.b.shl(ctx.bits(t), ctx.ci(ctx.mant)))
    return s, ctx.sub(t, ctx.c(magic))


def expm1_poly(ctx: Ctx, r):
    """e^r - 1 for |r| <= ln2/2, with full relative accuracy near 0."""
    return ctx.fma(ctx.mul(r, r), ctx.poly(r, ctx.coeffs["exp"]), r)


def exp_dd(ctx: Ctx, hi, lo=None, extra_scale=0, times=None):
    """exp(hi + lo) * 2**extra_scale (* times, a finite factor folded in before the
    final scaling to save a rounding) for a double-word argument, overflowing to inf and
    underflowing through the subnormals to 0; NaN propagates."""
    lo_lim, hi_lim = limits(ctx)
    clamped = ctx.clamp(hi, lo_lim - max(extra_scale, 0), hi_lim - min(extra_scale, 0))
    if lo is not None:
        lo = ctx.select(ctx.eq(clamped, hi), lo, ctx.c(0.0))
    n, r = reduce_exp(ctx, clamped, lo)
    q = expm1_poly(ctx, r)
    p = ctx.add(ctx.c(1.0), q) if times is None else ctx.fma(q, times, times)
    k = ctx.to_int(n)
    if extra_scale:
        k = ctx.b.add(k, ctx.ci(extra_scale))
    return ctx.scale(p, k)


def exp(ctx: Ctx, x):
    """e^x."""
    return exp_dd(ctx, x)


def exp2(ctx: Ctx, x):
    """2^x: the integer part goes to the exponent, the fraction through e^(f ln2)."""
    lim = 1080.0 if ctx.is64 else 155.0
    x_c = ctx.clamp(x, -lim, lim)
    n = ctx.rint(x_c)
    f = ctx.sub(x_c, n)
    c_hi, c_lo = ctx.split_const(EXACT["ln2"])
    r = ctx.fma(f, c_hi, ctx.mul(f, c_lo))
    p = ctx.add(ctx.c(1.0), expm1_poly(ctx, r))
    return ctx.scale(p, ctx.to_int(n))


def expm1(ctx: Ctx, x):
    """e^x - 1, exact near 0: 2^n (e^r - 1) + (2^n - 1) with one rounding while 2^n - 1 is exact."""
    lo_lim = -40.0 if ctx.is64 else -18.0
    x_c = ctx.clamp(x, lo_lim, limits(ctx)[1])
    n, r = reduce_exp(ctx, x_c)
    q = expm1_poly(ctx, r)
    k = ctx.to_int(n)
    small = ctx.le(n, ctx.c(ctx.mant + 1))
    t = ctx.pow2i(ctx.select(small, k, ctx.ci(0)))
    near = ctx.fma(t, q, ctx.sub(t, ctx.c(1.0)))
    far = ctx.scale(ctx.add(ctx.c(1.0), q), k)
    return ctx.keep_zero(x, ctx.select(small, near, far))


def log_parts(ctx: Ctx, m):
    """(f, correction) with log(m) = f - correction for m in [sqrt(1/2), sqrt(2)), where
    f = m - 1 is exact."""
    f = ctx.sub(m, ctx.c(1.0))
    s = ctx.div(f, ctx.add(ctx.c(2.0), f))
    z = ctx.mul(s, s)
    big_r = ctx.mul(z, ctx.poly(z, ctx.coeffs["log"]))
    hfsq = ctx.mul(ctx.c(0.5), ctx.mul(f, f))
    return f, ctx.sub(hfsq, ctx.mul(s, ctx.add(hfsq, big_r)))


def log_fixups(ctx: Ctx, x, result, pole=0.0):
    """C's special cases of a logarithm with its pole at `pole`: -inf there, NaN below, inf at
    inf."""
    result = ctx.select(ctx.eq(x, ctx.c(np.inf)), x, result)
    result = ctx.select(ctx.eq(x, ctx.c(pole)), ctx.c(-np.inf), result)
    bad = ctx.or_(ctx.lt(x, ctx.c(pole)), ctx.isnan(x))
    return ctx.select(bad, ctx.c(np.nan), result)


def log_mk(ctx: Ctx, m, k, c=None):
    """k ln2 + log(m) (+ c, a small correction), in fdlibm's order of summation."""
    c_hi, c_lo = ln2_parts(ctx)
    f, corr = log_parts(ctx, m)
    tail = ctx.fma(k, c_lo, c) if c is not None else ctx.mul(k, c_lo)
    return ctx.fma(k, c_hi, ctx.sub(f, ctx.sub(corr, tail)))


def log(ctx: Ctx, x):
    """Natural logarithm."""
    m, k = ctx.frexp(x)
    return log_fixups(ctx, x, log_mk(ctx, m, k))


def log1p(ctx: Ctx, x):
    """log(1 + x), exact near 0: log(u) for u = fl(1 + x) plus the rounding error of u over u."""
    u = ctx.add(ctx.c(1.0), x)
    m, k = ctx.frexp(u)
    c = ctx.select(ctx.gt(k, ctx.c(0.0)),
                   ctx.sub(ctx.c(1.0), ctx.sub(u, x)), ctx.sub(x, ctx.sub(u, ctx.c(1.0))))
    result = log_mk(ctx, m, k, ctx.div(c, u))
    return ctx.keep_zero(x, log_fixups(ctx, x, result, pole=-1.0))


def _log_scaled(ctx: Ctx, x, scale: Fraction, k_scale: Fraction):
    """k * k_scale + log(m) * scale (log2 and log10), each product carried to double precision."""
    m, k = ctx.frexp(x)
    f, corr = log_parts(ctx, m)
    lm = ctx.sub(f, corr)
    s_hi, s_lo = ctx.split_const(scale)
    k_hi, k_lo = ctx.split_const(k_scale, bits=ctx.mant + 1 - 11)
    tail = ctx.fma(lm, s_lo, ctx.fma(ctx.neg(corr), s_hi, ctx.mul(k, k_lo)))
    # f * s_hi carried exactly: it dominates when x is near 1.
    p, e = ctx.two_prod(f, s_hi)
    head = ctx.fma(k, k_hi, p)
    return log_fixups(ctx, x, ctx.add(head, ctx.add(e, tail)))


def log2(ctx: Ctx, x):
    """Base-2 logarithm."""
    return _log_scaled(ctx, x, LOG2E, Fraction(1))


def log10(ctx: Ctx, x):
    """Base-10 logarithm."""
    return _log_scaled(ctx, x, 1 / EXACT["ln10"], EXACT["ln2"] / EXACT["ln10"])
