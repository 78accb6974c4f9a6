"""Circular functions: sin, cos, tan and the inverses atan, atan2, asin, acos.

sin/cos/tan reduce x = n pi/2 + y in float64 (float32 arguments are widened, as musl's sinf
does) with pi/2 cut into three 33-bit heads and a tail (fdlibm's medium-range scheme): every
n * head is exact for |n| <= 2^20, so the reduced y (kept as a double-word) is accurate to
far below an ulp for |x| <= 2^20 pi/2 ~ 1.6e6 in both dtypes. Beyond that the products
round, the absolute error of y grows like |x| 2^-53, and results stay finite and are clamped
to [-1, 1] (inf and NaN give NaN).
"""

from fractions import Fraction

import numpy as np

from .core import EXACT, Ctx, head_bits

PI = EXACT["pi"]
TAN_PI_8 = float(np.sqrt(2.0) - 1)  # atan reduction breakpoints tan(pi/8), tan(3pi/8)
TAN_3PI_8 = float(np.sqrt(2.0) + 1)


def _pio2_parts():
    """pi/2 as three 33-bit heads and a float64 tail."""
    rest, heads = PI / 2, []
    for _ in range(3):
        heads.append(head_bits(rest, 33))
        rest -= Fraction(heads[-1])
    return heads, float(rest)


PIO2_HEADS, PIO2_TAIL = _pio2_parts()


def reduce_pio2(w: Ctx, x):
    """(n, y0, y1) with x = n pi/2 + y0 + y1, for a float64 context w."""
    n = w.rint(w.mul(x, w.c(float(2 / PI))))
    neg_n = w.neg(n)
    a = w.fma(neg_n, w.c(PIO2_HEADS[0]), x)
    s1, e1 = w.two_sum(a, w.mul(neg_n, w.c(PIO2_HEADS[1])))
    s2, e2 = w.two_sum(s1, w.mul(neg_n, w.c(PIO2_HEADS[2])))
    lo = w.fma(neg_n, w.c(PIO2_TAIL), w.add(e1, e2))
    y0, y1 = w.fast_two_sum(s2, lo)
    return n, y0, y1


def sin_kernel(w: Ctx, y0, y1, coeffs):
    """sin(y0 + y1) for |y0| <= pi/4."""
    z = w.mul(y0, y0)
    v = w.mul(z, y0)
    tail = w.fma(v, w.poly(z, coeffs), w.mul(y1, w.fma(w.c(-0.5), z, w.c(1.0))))
    return w.add(y0, tail)


def cos_kernel(w: Ctx, y0, y1, coeffs):
    """cos(y0 + y1) for |y0| <= pi/4, as (1 - z/2) plus its rounding error plus the rest (fdlibm)."""
    z = w.mul(y0, y0)
    hz = w.mul(w.c(0.5), z)
    head = w.sub(w.c(1.0), hz)
    err = w.sub(w.sub(w.c(1.0), head), hz)
    rest = w.fma(w.mul(z, z), w.poly(z, coeffs), w.neg(w.mul(y0, y1)))
    return w.add(head, w.add(err, rest))


def _quadrant(w: Ctx, n):
    """n mod 4 as an integer (n a float holding an integer; NaN and huge n give a valid value)."""
    q = w.sub(n, w.mul(w.c(4.0), w.floor(w.mul(n, w.c(0.25)))))
    return w.to_int(q)


def _trig(ctx: Ctx, x, which):
    """sin, cos or tan of x, computed in float64."""
    w = ctx.wide()
    xw = ctx.convert(x, w)
    n, y0, y1 = reduce_pio2(w, xw)
    s = sin_kernel(w, y0, y1, ctx.coeffs["sin"])
    c = cos_kernel(w, y0, y1, ctx.coeffs["cos"])
    q = _quadrant(w, n)
    odd = w.b.icmp_signed("!=", w.b.and_(q, w.ci(1)), w.ci(0))
    if which == "tan":
        r = w.select(odd, w.div(w.neg(c), s), w.div(s, c))
    else:
        shift = 0 if which == "sin" else 1
        half = w.b.and_(w.b.add(q, w.ci(shift)), w.ci(2))
        r = w.select(odd, c, s) if which == "sin" else w.select(odd, s, c)
        r = w.select(w.b.icmp_signed("!=", half, w.ci(0)), w.neg(r), r)
        r = w.clamp(r, -1.0, 1.0)
    return w.convert(r, ctx)


def sin(ctx: Ctx, x):
    """sin x."""
    return ctx.keep_zero(x, _trig(ctx, x, "sin"))


def cos(ctx: Ctx, x):
    """cos x."""
    return _trig(ctx, x, "cos")


def tan(ctx: Ctx, x):
    """tan x = sin/cos of the reduced argument (-cos/sin in odd quadrants)."""
    return ctx.keep_zero(x, _trig(ctx, x, "tan"))


def _atan_poly(ctx: Ctx, u):
    """atan u for |u| <= tan(pi/8)."""
    z = ctx.mul(u, u)
    return ctx.fma(ctx.mul(u, z), ctx.poly(z, ctx.coeffs["atan"]), u)


def atan_ratio(ctx: Ctx, num, den):
    """atan(num/den) in [0, pi/2] for num, den >= 0: reduced to |u| <= tan(pi/8) by
    atan t = pi/4 + atan((t-1)/(t+1)) and atan t = pi/2 - atan(1/t), each u from one division."""
    t = ctx.div(num, den)
    mid = ctx.div(ctx.sub(num, den), ctx.add(num, den))
    far = ctx.neg(ctx.div(den, num))
    low = ctx.le(t, ctx.c(TAN_PI_8))
    middle = ctx.le(t, ctx.c(TAN_3PI_8))
    u = ctx.select(low, t, ctx.select(middle, mid, far))
    q4_hi, q4_lo = ctx.split_const(PI / 4)
    q2_hi, q2_lo = ctx.split_const(PI / 2)
    zero = ctx.c(0.0)
    base_hi = ctx.select(low, zero, ctx.select(middle, q4_hi, q2_hi))
    base_lo = ctx.select(low, zero, ctx.select(middle, q4_lo, q2_lo))
    return ctx.add(base_hi, ctx.add(_atan_poly(ctx, u), base_lo))


def atan(ctx: Ctx, x):
    """atan x."""
    return ctx.copysign(atan_ratio(ctx, ctx.fabs(x), ctx.c(1.0)), x)


def atan2(ctx: Ctx, y, x):
    """atan2(y, x) as C99: the angle of |y|/|x|, reflected for x < 0 (including -0), signed
    like y; both infinite gives odd multiples of pi/4, both zero gives 0 or pi."""
    ax, ay = ctx.fabs(x), ctx.fabs(y)
    big = ctx.gt(ctx.select(ctx.gt(ax, ay), ax, ay), ctx.c(float(np.finfo(ctx.np).max) / 8))
    shrink = ctx.select(big, ctx.c(0.125), ctx.c(1.0))  # keeps |x| + |y| finite
    a = atan_ratio(ctx, ctx.mul(ay, shrink), ctx.mul(ax, shrink))
    both_inf = ctx.and_(ctx.isinf(ax), ctx.isinf(ay))
    a = ctx.select(both_inf, ctx.c(float(PI / 4)), a)
    a = ctx.select(ctx.and_(ctx.eq(ax, ctx.c(0.0)), ctx.eq(ay, ctx.c(0.0))), ctx.c(0.0), a)
    pi_hi, pi_lo = ctx.split_const(PI)
    reflected = ctx.add(ctx.sub(pi_hi, a), pi_lo)
    x_negative = ctx.b.icmp_signed("<", ctx.bits(x), ctx.ci(0))
    a = ctx.select(x_negative, reflected, a)
    return ctx.copysign(a, y)


def _asin_parts(ctx: Ctx, a):
    """For a in [1/2, 1]: (s, rest) with asin(s + rest) = pi/4 - asin(a)/2, s = sqrt((1-a)/2)
    and rest = the rounding error of s plus s z P(z) (fdlibm's decomposition)."""
    z = ctx.mul(ctx.c(0.5), ctx.sub(ctx.c(1.0), a))
    s = ctx.sqrt(z)
    p, e = ctx.two_prod(s, s)
    corr = ctx.div(ctx.sub(ctx.sub(z, p), e), ctx.add(s, s))
    corr = ctx.select(ctx.eq(s, ctx.c(0.0)), ctx.c(0.0), corr)
    rest = ctx.fma(ctx.mul(s, z), ctx.poly(z, ctx.coeffs["asin"]), corr)
    return s, rest


def _asin_small(ctx: Ctx, x):
    """asin x - x for |x| <= 1/2."""
    z = ctx.mul(x, x)
    return ctx.mul(ctx.mul(x, z), ctx.poly(z, ctx.coeffs["asin"]))


def asin(ctx: Ctx, x):
    """asin x: a polynomial up to 1/2, pi/2 - 2 asin(sqrt((1-|x|)/2)) beyond; NaN outside [-1, 1]."""
    a = ctx.fabs(x)
    small = ctx.add(a, _asin_small(ctx, a))
    s, rest = _asin_parts(ctx, a)
    h_hi, h_lo = ctx.split_const(PI / 2)
    two = ctx.c(2.0)
    large = ctx.add(ctx.sub(h_hi, ctx.mul(two, s)), ctx.sub(h_lo, ctx.mul(two, rest)))
    r = ctx.select(ctx.le(a, ctx.c(0.5)), small, large)
    return ctx.keep_zero(x, ctx.copysign(r, x))


def acos(ctx: Ctx, x):
    """acos x: pi/2 - asin x up to 1/2 in magnitude, 2 asin(sqrt((1-|x|)/2)) (or pi minus it)
    beyond; NaN outside [-1, 1]."""
    a = ctx.fabs(x)
    h_hi, h_lo = ctx.split_const(PI / 2)
    small = ctx.sub(h_hi, ctx.add(x, ctx.sub(_asin_small(ctx, x), h_lo)))
    s, rest = _asin_parts(ctx, a)
    two = ctx.c(2.0)
    twice = ctx.mul(two, ctx.add(s, rest))
    pi_hi, pi_lo = ctx.split_const(PI)
    neg = ctx.add(ctx.sub(pi_hi, ctx.mul(two, s)), ctx.sub(pi_lo, ctx.mul(two, rest)))
    r = ctx.select(ctx.lt(x, ctx.c(0.0)), neg, twice)
    return ctx.select(ctx.le(a, ctx.c(0.5)), small, r)
