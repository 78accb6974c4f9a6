"""pow(x, y) = exp(y log|x|) with C99's special cases.

float64 carries log|x| as a double-word accurate to about 2^-64 relative (the error of y log|x|
is the relative error of the result, and |y log|x|| reaches 745); float32 computes in float64,
where plain log and exp are accurate enough, and rounds once.
"""

from fractions import Fraction

import numpy as np

from . import exp_log
from .core import Ctx


def log_dd(w: Ctx, ax):
    """log(ax) as (hi, lo) for finite ax > 0: k ln2 + 2s + s R(s^2) with s = f/(2+f) and
    the leading 2/3 z term of R carried as double-words."""
    m, k = w.frexp(ax)
    f = w.sub(m, w.c(1.0))
    den, den_lo = w.fast_two_sum(w.c(2.0), f)
    s = w.div(f, den)
    p, e = w.two_prod(s, den)
    s_lo = w.div(w.sub(w.sub(w.sub(f, p), e), w.mul(s, den_lo)), den)
    z, z_err = w.two_prod(s, s)
    z_lo = w.fma(w.add(s, s), s_lo, z_err)
    c_hi, c_lo = w.split_const(Fraction(2, 3))
    r, r_lo = w.dd_mul(c_hi, c_lo, z, z_lo)
    rest = w.mul(w.mul(z, z), w.poly(z, w.coeffs["log"][1:]))
    big_r, big_r_err = w.fast_two_sum(r, rest)
    t, t_lo = w.dd_mul(s, s_lo, big_r, w.add(big_r_err, r_lo))
    u, u_err = w.fast_two_sum(w.add(s, s), t)
    ln2_hi, ln2_lo = exp_log.ln2_parts(w)
    head, head_err = w.two_sum(w.mul(k, ln2_hi), u)
    lo = w.add(w.add(head_err, u_err), w.fma(w.c(2.0), s_lo, w.fma(k, ln2_lo, t_lo)))
    return w.fast_two_sum(head, lo)


def _magnitude(ctx: Ctx, ax, y):
    """exp(y log ax) for finite ax > 0 (special inputs give junk that pow replaces)."""
    if not ctx.is64:
        w = ctx.wide()
        axw, yw = ctx.convert(ax, w), ctx.convert(y, w)
        m, k = w.frexp(axw)
        r = exp_log.exp_dd(w, w.mul(yw, exp_log.log_mk(w, m, k)))
        return w.convert(r, ctx)
    hi, lo = log_dd(ctx, ax)
    p, p_err = ctx.two_prod(y, hi)
    p_lo = ctx.fma(y, lo, p_err)
    # Splitting a y near the overflow threshold overflows; only |x| = 1 (p = 0) keeps that p_lo.
    p_lo = ctx.select(ctx.isnan(p_lo), ctx.c(0.0), p_lo)
    return exp_log.exp_dd(ctx, p, p_lo)


def pow(ctx: Ctx, x, y):
    """x**y as C99 pow: 1 when y is 0 or x is 1 (even with NaN), signed results for negative x
    and odd integer y, NaN for negative finite x with finite non-integer y, 0/inf limits."""
    b = ctx.b
    ax = ctx.fabs(x)
    zero, one, inf = ctx.c(0.0), ctx.c(1.0), ctx.c(np.inf)
    result = _magnitude(ctx, ax, y)
    special = ctx.or_(ctx.or_(ctx.eq(ax, zero), ctx.eq(ax, inf)), ctx.isinf(y))
    grows = b.icmp_unsigned("==", ctx.gt(ax, one), ctx.gt(y, zero))
    result = ctx.select(special, ctx.select(grows, inf, zero), result)
    is_int = ctx.eq(ctx.trunc(y), y)
    half = ctx.mul(y, ctx.c(0.5))
    odd = ctx.and_(is_int, ctx.ne(ctx.trunc(half), half))
    x_negative = b.icmp_signed("<", ctx.bits(x), ctx.ci(0))
    result = ctx.select(ctx.and_(x_negative, odd), ctx.neg(result), result)
    finite_negative = ctx.and_(ctx.lt(x, zero), ctx.isfinite(x))
    invalid = ctx.and_(ctx.and_(finite_negative, ctx.isfinite(y)), ctx.not_(is_int))
    invalid = ctx.or_(invalid, ctx.or_(ctx.isnan(x), ctx.isnan(y)))
    result = ctx.select(invalid, ctx.c(np.nan), result)
    exact_one = ctx.or_(ctx.eq(y, zero), ctx.eq(x, one))
    exact_one = ctx.or_(exact_one, ctx.and_(ctx.eq(x, ctx.c(-1.0)), ctx.isinf(y)))
    return ctx.select(exact_one, one, result)
