"""Hyperbolic functions and sigmoid, built on the exp/log kernels so that they vectorize."""

import numpy as np

from . import exp_log
from .core import EXACT, Ctx

# float32 tanh rounds to +-1 from |x| = 9.01 (1 - tanh|x| < 2^-25): |x| is clamped here.
TANH32_LIMIT = 10.0


def tanh(ctx: Ctx, x):
    """tanh x (float32: tanh32). float64: -expm1(-2|x|) / (2 + expm1(-2|x|)) with the sign of x
    (so tanh(-0) = -0), one exponential and one division for every x. expm1 keeps full
    relative accuracy near 0 as 2^n (e^r - 1) + (2^n - 1), exact for the n that occur; -2|x|
    is clamped where tanh has rounded to 1."""
    if not ctx.is64:
        return tanh32(ctx, x)
    floor = ctx.c(-40.0)  # 1 - tanh(|x|) is below half an ulp of 1
    z = ctx.mul(ctx.c(-2.0), ctx.fabs(x))
    z = ctx.select(ctx.lt(z, floor), floor, z)
    s, q = exp_log.exp_scaled_parts(ctx, z)
    e = ctx.fma(s, q, ctx.sub(s, ctx.c(1.0)))
    return ctx.copysign(ctx.div(ctx.neg(e), ctx.add(ctx.c(2.0), e)), x)


def tanh32(ctx: Ctx, x):
    """float32 tanh x = (1 - E) / (1 + E), E = e^(-2|x|) = 2^n e^r, with x's sign: 2^n from
    the magic-bias multiply-add (exp_log.pow2_rounded), r = -2h, h = |x| + n ln2/2 in one step
    (|n| <= 29: the rounding of ln2 costs at most 2^n n 2e-9 of E, far below an ulp of the
    result), e^r - 1 = r + r^2 P(r) with P of degree 4 (fit_mathlib.py), and 1 - E = (1 - 2^n)
    - 2^n (e^r - 1) to one rounding, so tanh keeps full relative accuracy near 0 (n = 0
    there; tanh x = x for |x| < 2^-26, subnormals included). The factor -2 of r is carried
    by powers of two that round nowhere: (e^r - 1) / -2 = h + h^2 U(h) with U(h) = -2 P(-2h),
    and 2^(n+1) comes from the bias. Sixteen vector instructions and a division (the float64
    form, emitted for float32, took twenty)."""
    a = ctx.fabs(x)
    a = ctx.select(ctx.gt(a, ctx.c(TANH32_LIMIT)), ctx.c(TANH32_LIMIT), a)  # NaN passes
    s2, n = exp_log.pow2_rounded(ctx, a, -2 * exp_log.LOG2E, 1)  # 2^(n+1), n = round(-2|x|/ln2)
    h = ctx.fma(n, ctx.c(float(EXACT["ln2"] / 2)), a)
    u = [c * (-2.0) ** (k + 1) for k, c in enumerate(ctx.coeffs["tanh"])]
    q_half = ctx.fma(ctx.mul(h, h), ctx.poly(h, u), h)  # (e^r - 1) / -2
    one_minus_s = ctx.fma(s2, ctx.c(-0.5), ctx.c(1.0))
    num = ctx.fma(s2, q_half, one_minus_s)  # 1 - E
    den = ctx.sub(ctx.c(2.0), num)  # 1 + E
    return ctx.copysign(ctx.div(num, den), x)


def sigmoid(ctx: Ctx, x):
    """1 / (1 + e^-x) (float32: sigmoid32, float64: _sigmoid64)."""
    if not ctx.is64:
        return sigmoid32(ctx, x)
    return _sigmoid64(ctx, x)


def sigmoid32(ctx: Ctx, x):
    """float32 1 / (1 + e^-x) as 2^24 / (2^24 + e) for x >= 0 and e / (2^24 + e) below, with
    e = e^-|x| 2^24 = 2^(n+24) e^(-h): 2^(n+24) from the magic-bias multiply-add, h = |x| + n
    ln2 in two Cody-Waite steps (n reaches -150), e^(-h) = 1 + h P(h) with P of degree 5
    (fit_mathlib.py). The scaling keeps e normal down to where sigmoid rounds to 0, and the
    quotient is the result, so results in the subnormals round once. Seventeen vector
    instructions and a division (the float64 form, emitted for float32, took nineteen)."""
    big = 2.0 ** (ctx.mant + 1)
    a = ctx.fabs(x)
    lo = -exp_log.limits(ctx)[0]
    a = ctx.select(ctx.gt(a, ctx.c(lo)), ctx.c(lo), a)  # NaN passes
    s, n = exp_log.pow2_rounded(ctx, a, -exp_log.LOG2E, ctx.mant + 1)  # 2^(n+24)
    c_hi, c_lo = exp_log.ln2_parts(ctx)
    h = ctx.fma(n, c_lo, ctx.fma(n, c_hi, a))
    e = ctx.fma(ctx.mul(s, h), ctx.poly(h, ctx.coeffs["sigmoid"]), s)
    num = ctx.select(ctx.lt(x, ctx.c(0.0)), e, ctx.c(big))
    return ctx.div(num, ctx.add(e, ctx.c(big)))


def _sigmoid64(ctx: Ctx, x):
    """1 / (1 + e^-x), as e^x / (1 + e^x) for negative x so that e never overflows. e^-|x| is
    computed times 2^(mant+1), in the normal range down to where sigmoid rounds to 0, and the
    quotient is scaled back, so results in the subnormals are rounded there once more."""
    shift = ctx.mant + 1
    lo = exp_log.limits(ctx)[0]
    z = ctx.neg(ctx.fabs(x))
    z = ctx.select(ctx.lt(z, ctx.c(lo)), ctx.c(lo), z)
    s, q = exp_log.exp_scaled_parts(ctx, z, shift)
    e = ctx.fma(s, q, s)  # e^z * 2^shift
    denom = ctx.fma(e, ctx.c(2.0**-shift), ctx.c(1.0))
    num = ctx.select(ctx.lt(x, ctx.c(0.0)), e, ctx.c(2.0**shift))
    return ctx.mul(ctx.div(num, denom), ctx.c(2.0**-shift))


def _half_exp(ctx: Ctx, a):
    """e^a / 2, finite wherever sinh and cosh are."""
    return exp_log.exp_dd(ctx, a, extra_scale=-1)


def sinh(ctx: Ctx, x):
    """sinh x: x + x^3 P(x^2) for |x| < 1, else e^|x|/2 - 1/(4 (e^|x|/2)) with the sign of x."""
    a = ctx.fabs(x)
    z = ctx.mul(x, x)
    small = ctx.fma(ctx.mul(x, z), ctx.poly(z, ctx.coeffs["sinh"]), x)
    h = _half_exp(ctx, a)
    large = ctx.copysign(ctx.sub(h, ctx.div(ctx.c(0.25), h)), x)
    return ctx.select(ctx.lt(a, ctx.c(1.0)), small, large)


def cosh(ctx: Ctx, x):
    """cosh x = e^|x|/2 + 1/(4 (e^|x|/2))."""
    h = _half_exp(ctx, ctx.fabs(x))
    return ctx.add(h, ctx.div(ctx.c(0.25), h))


def asinh(ctx: Ctx, x):
    """asinh x = sign(x) log1p(v) with v chosen per range to avoid cancellation and overflow
    (fdlibm's three ranges), plus ln2 for huge |x| where log1p(|x| - 1) = log|x| stands
    for log 2|x|."""
    a = ctx.fabs(x)
    one = ctx.c(1.0)
    z = ctx.mul(a, a)
    root = ctx.sqrt(ctx.add(z, one))
    v_small = ctx.add(a, ctx.div(z, ctx.add(one, root)))
    v_mid = ctx.sub(ctx.fma(ctx.c(2.0), a, ctx.div(one, ctx.add(root, a))), one)
    huge = ctx.gt(a, ctx.c(2.0**28 if ctx.is64 else 2.0**12))
    v = ctx.select(ctx.lt(a, ctx.c(2.0)), v_small, v_mid)
    v = ctx.select(huge, ctx.sub(a, one), v)
    r = exp_log.log1p(ctx, v)
    r = ctx.select(huge, ctx.add(r, ctx.c(float(np.log(2)))), r)
    return ctx.keep_zero(x, ctx.copysign(r, x))


def acosh(ctx: Ctx, x):
    """acosh x = log1p(v): v = t + sqrt(2t + t^2) (t = x - 1) below 2, 2x - 1/(x + sqrt(x^2-1)) - 1
    above, log1p(x - 1) + ln2 for huge x; NaN below 1."""
    one = ctx.c(1.0)
    t = ctx.sub(x, one)
    v_small = ctx.add(t, ctx.sqrt(ctx.fma(t, t, ctx.mul(ctx.c(2.0), t))))
    root = ctx.sqrt(ctx.fma(x, x, ctx.c(-1.0)))
    v_mid = ctx.sub(ctx.fma(ctx.c(2.0), x, ctx.neg(ctx.div(one, ctx.add(x, root)))), one)
    huge = ctx.gt(x, ctx.c(2.0**28 if ctx.is64 else 2.0**12))
    v = ctx.select(ctx.lt(x, ctx.c(2.0)), v_small, v_mid)
    v = ctx.select(huge, ctx.sub(x, one), v)
    r = exp_log.log1p(ctx, v)
    r = ctx.select(huge, ctx.add(r, ctx.c(float(np.log(2)))), r)
    return ctx.select(ctx.lt(x, one), ctx.c(np.nan), r)


def atanh(ctx: Ctx, x):
    """atanh x = sign(x) log1p(v)/2 with v = 2a + 2a^2/(1-a) below 1/2 and 2a/(1-a) above."""
    a = ctx.fabs(x)
    one = ctx.c(1.0)
    two_a = ctx.add(a, a)
    d = ctx.sub(one, a)
    v_small = ctx.add(two_a, ctx.div(ctx.mul(two_a, a), d))
    v = ctx.select(ctx.lt(a, ctx.c(0.5)), v_small, ctx.div(two_a, d))
    r = ctx.mul(ctx.c(0.5), exp_log.log1p(ctx, v))
    return ctx.keep_zero(x, ctx.copysign(r, x))
