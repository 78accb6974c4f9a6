"""Error functions, GELU and square roots.

float32 erf is one rational, x P(x^2)/Q(x^2) (erf32: fast, within 6 ulp). Otherwise erf(x) =
x P(x^2) for |x| < 1; beyond, erfc(x) = exp(-x^2) erfcx(x) with erfcx(x) = erfc(x) e^(x^2) a
smooth, slowly varying function fitted piecewise (fit_mathlib.py). Where
relative accuracy of a tiny erfc matters (erfc, GELU of negative x) the exponent -x^2 and the
argument scaling are carried as double-words, because an absolute error d in the exponent is
a relative error d in the result.
"""

from fractions import Fraction

from . import exp_log
from .core import EXACT, Ctx


def erf_small(ctx: Ctx, x):
    """erf x for |x| <= 1."""
    return ctx.mul(x, ctx.poly(ctx.mul(x, x), ctx.coeffs["erf"]))


def erfcx(ctx: Ctx, a, lowest=0.5, highest=float("inf")):
    """erfc(a) e^(a^2) for a in [lowest, min(highest, end of the fitted range)], evaluating the
    piece that holds a: each coefficient is selected per lane, then one Horner runs."""
    pieces = ctx.coeffs["erfcx"]
    first = max(i for i, piece in enumerate(pieces) if piece[0] <= lowest)
    pieces = [piece for piece in pieces[first:] if piece[0] <= highest]
    degree = max(len(c) for _, _, c in pieces)
    table = [list(c) + [0.0] * (degree - len(c)) for _, _, c in pieces]
    centre, coeffs = ctx.c(pieces[0][1]), [ctx.c(v) for v in table[0]]
    for (lo, mid, _), row in zip(pieces[1:], table[1:]):
        inside = ctx.ge(a, ctx.c(lo))
        centre = ctx.select(inside, ctx.c(mid), centre)
        coeffs = [ctx.select(inside, ctx.c(v), c) for v, c in zip(row, coeffs)]
    # coeffs = [low part of c0, c0, c1, ...] in v = a - centre.
    v = ctx.sub(a, centre)
    acc = coeffs[-1]
    for c in reversed(coeffs[2:-1]):
        acc = ctx.fma(acc, v, c)
    return ctx.add(coeffs[1], ctx.fma(acc, v, coeffs[0]))


def _last_fitted(ctx: Ctx):
    """Where the fitted erfcx pieces end: erfc underflows to 0 before it."""
    return 28.0 if ctx.is64 else 11.0


def erfc_pos(ctx: Ctx, a, a_lo=None, extra_scale=0, times=None):
    """erfc(a + a_lo) * 2**extra_scale (* times) for a >= 1/2 with small relative error, down
    through the subnormals (a positive extra_scale lets a caller round into them only once)."""
    a_c = ctx.clamp(a, 0.5, _last_fitted(ctx))
    p, e = ctx.two_prod(a_c, a_c)
    if a_lo is not None:  # past the clamp a_lo is moot (and NaN where splitting a overflowed)
        a_lo = ctx.select(ctx.gt(a, a_c), ctx.c(0.0), a_lo)
        e = ctx.fma(ctx.add(a_c, a_c), a_lo, e)
    g = erfcx(ctx, a_c)
    if times is not None:
        g = ctx.mul(g, times)
    # Past the fitted range exp(-a^2) has underflowed: the clamp yields a zero of the right sign.
    return exp_log.exp_dd(ctx, ctx.neg(p), ctx.neg(e), extra_scale, times=g)


# float32 erf rounds to 1 past this (erfc(3.92) = 2.96e-8 < 2^-25); erf_p/erf_q are
# fitted on [0, ERF32_END] (tools/dev/fit_mathlib.py's ERF_RATIONAL_END).
ERF32_END = 3.92


def erf32(ctx: Ctx, x):
    """float32 erf x as |x| P(x^2)/Q(x^2), one rational on [0, 3.92] (degrees 8 and 6 in x^2,
    the form of Eigen's float erf), saturating to exactly 1 past it and carrying x's sign:
    fifteen multiply-adds and a division with no selection between pieces, so a loop over it
    vectorizes to straight code (vit's GELU loop: 35 AVX-512 instructions per 16 elements)."""
    a = ctx.fabs(x)
    a_c = ctx.select(ctx.gt(a, ctx.c(ERF32_END)), ctx.c(ERF32_END), a)  # NaN passes
    z = ctx.mul(a_c, a_c)
    r = ctx.mul(a_c, ctx.div(ctx.poly(z, ctx.coeffs["erf_p"]), ctx.poly(z, ctx.coeffs["erf_q"])))
    one = ctx.c(1.0)
    r = ctx.select(ctx.or_(ctx.gt(r, one), ctx.gt(a, ctx.c(ERF32_END))), one, r)
    return ctx.copysign(r, x)


def erf(ctx: Ctx, x):
    """erf x, odd, saturating to +-1 (float32: erf32)."""
    if not ctx.is64:
        return erf32(ctx, x)
    a = ctx.fabs(x)
    limit = 6.0
    a_c = ctx.clamp(a, 1.0, limit)
    g = erfcx(ctx, a_c, lowest=1.0, highest=limit)
    tail = exp_log.exp_dd(ctx, ctx.neg(ctx.mul(a_c, a_c)), times=g)
    large = ctx.select(ctx.gt(a, ctx.c(limit)), ctx.c(1.0), ctx.sub(ctx.c(1.0), tail))
    r = ctx.select(ctx.lt(a, ctx.c(1.0)), erf_small(ctx, a), large)
    return ctx.copysign(r, x)


def erfc_dd(ctx: Ctx, x, x_lo=None):
    """erfc(x + x_lo): 1 - erf below 1/2 in magnitude, erfc_pos above 1/2, 2 - erfc_pos(-x)
    below -1/2."""
    a = ctx.fabs(x)
    a_lo = None if x_lo is None else ctx.select(ctx.lt(x, ctx.c(0.0)), ctx.neg(x_lo), x_lo)
    tail = erfc_pos(ctx, a, a_lo)
    far = ctx.select(ctx.lt(x, ctx.c(0.0)), ctx.sub(ctx.c(2.0), tail), tail)
    near = ctx.sub(ctx.c(1.0), erf_small(ctx, x))
    return ctx.select(ctx.lt(a, ctx.c(0.5)), near, far)


def erfc(ctx: Ctx, x):
    """erfc x = 1 - erf x without cancellation."""
    return erfc_dd(ctx, x)


def gelu_erf(ctx: Ctx, x):
    """x/2 erfc(-x/sqrt2) (= x/2 (1 + erf(x/sqrt2)), torch's default gelu), with -x/sqrt2 as a
    double-word so the tiny results for negative x keep their relative accuracy. gelu(-inf) is
    NaN, as in torch (-inf * 0)."""
    c_hi, c_lo = ctx.split_const(-1 / EXACT["sqrt2"])
    z, z_err = ctx.two_prod(x, c_hi)
    z_lo = ctx.fma(x, c_lo, z_err)
    a = ctx.fabs(z)
    a_lo = ctx.select(ctx.lt(z, ctx.c(0.0)), ctx.neg(z_lo), z_lo)
    half_x = ctx.mul(ctx.c(0.5), x)
    # One erfc_pos serves both tails. For z >= 1/2 the result may be subnormal: it is computed
    # times x/2 and scaled by 2^s, then rounded once on the way down; for z <= -1/2 the factor
    # 2^-s undoes the scaling.
    s = ctx.mant + 2
    positive = ctx.ge(z, ctx.c(0.5))
    tail = erfc_pos(ctx, a, a_lo, s, times=ctx.select(positive, half_x, ctx.c(2.0**-s)))
    tiny = ctx.mul(tail, ctx.c(2.0**-s))
    # Past the fitted range the result is x * 0 (-0, or NaN at -inf as in torch).
    tiny = ctx.select(ctx.gt(z, ctx.c(_last_fitted(ctx))), ctx.mul(x, ctx.c(0.0)), tiny)
    far = ctx.select(positive, tiny, ctx.mul(half_x, ctx.sub(ctx.c(2.0), tail)))
    near = ctx.mul(half_x, ctx.sub(ctx.c(1.0), erf_small(ctx, z)))
    return ctx.select(ctx.lt(a, ctx.c(0.5)), near, far)


def gelu_tanh(ctx: Ctx, x):
    """x/2 (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3) (torch's approximate='tanh'), as
    x sigmoid(2u) with 2u = 2 sqrt(2/pi) x (1 + 0.044715 x^2) carried as a double-word;
    NaN at -inf, as in torch (-inf * 0)."""
    k_hi, k_lo = ctx.split_const(Fraction("0.044715"))
    c_hi, c_lo = ctx.split_const(2 * EXACT["sqrt2_over_pi"])
    sq, sq_lo = ctx.two_prod(x, x)
    kx2, kx2_lo = ctx.dd_mul(k_hi, k_lo, sq, sq_lo)
    w, w_err = ctx.two_sum(ctx.c(1.0), kx2)
    m, m_lo = ctx.dd_mul(c_hi, c_lo, x, ctx.c(0.0))
    t, t_lo = ctx.dd_mul(m, m_lo, w, ctx.add(w_err, kx2_lo))
    # x/(1 + e^-t), or x e^t/(1 + e^t) for t < 0 with e^t computed scaled by 2^s so that a
    # subnormal result is rounded once.
    negative = ctx.lt(t, ctx.c(0.0))
    neg_abs_t, lo = ctx.neg(ctx.fabs(t)), ctx.select(negative, t_lo, ctx.neg(t_lo))
    s = ctx.mant + 2
    e_scaled = exp_log.exp_dd(ctx, neg_abs_t, lo, extra_scale=s)
    denom = ctx.add(ctx.c(1.0), ctx.mul(e_scaled, ctx.c(2.0**-s)))
    tiny = ctx.mul(ctx.div(ctx.mul(x, e_scaled), denom), ctx.c(2.0**-s))
    return ctx.select(negative, tiny, ctx.div(x, denom))


def sqrt(ctx: Ctx, x):
    """sqrt x (one instruction, correctly rounded)."""
    return ctx.sqrt(x)


def rsqrt(ctx: Ctx, x):
    """1 / sqrt x (two correctly rounded steps, under one ulp)."""
    return ctx.div(ctx.c(1.0), ctx.sqrt(x))

