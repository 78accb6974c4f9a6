"""Fit the polynomial kernels of compiler/codegen/mathlib and write mathlib/coefficients.py.

Each kernel is a smooth function (mostly the tail of a Taylor series, so no cancellation) that
is interpolated at Chebyshev nodes in x87 long double (64-bit mantissa), converted exactly to
monomials with fractions, rounded to the target dtype, and kept at the lowest degree whose
rounded polynomial meets the kernel's relative error target. Chebyshev interpolation is within
a small factor of minimax, which is all the 4-ulp budget needs. numpy only.

    python tools/dev/fit_mathlib.py            # rewrites compiler/codegen/mathlib/coefficients.py
"""

from fractions import Fraction
from pathlib import Path

import numpy as np

LD = np.longdouble
OUT = Path(__file__).resolve().parents[2] / "compiler/codegen/mathlib/coefficients.py"


def series(z, term, n_terms=60):
    """Sum term(k, z) for k = 0..n_terms-1 in long double, smallest terms first."""
    total = np.zeros_like(z)
    for k in reversed(range(n_terms)):
        total = total + term(k, z)
    return total


def fact(k):
    """k! in long double."""
    return LD(np.prod([LD(i) for i in range(1, k + 1)], dtype=LD)) if k > 1 else LD(1)


def exp_tail(r):
    """(e^r - 1 - r) / r^2 = sum r^k / (k+2)!."""
    return series(r, lambda k, r: r**k / fact(k + 2), 30)


def log_tail(z):
    """R(z)/z with log((1+s)/(1-s)) = 2s + s R(s^2): sum 2 z^k / (2k+3)."""
    return series(z, lambda k, z: 2 * z**k / LD(2 * k + 3), 40)


def sin_tail(z):
    """(sin x - x) / x^3 as a function of z = x^2."""
    return series(z, lambda k, z: (-1) ** (k + 1) * z**k / fact(2 * k + 3), 25)


def cos_tail(z):
    """(cos x - 1 + x^2/2) / x^4 as a function of z = x^2."""
    return series(z, lambda k, z: (-1) ** k * z**k / fact(2 * k + 4), 25)


def atan_tail(z):
    """(atan u - u) / u^3 as a function of z = u^2."""
    return series(z, lambda k, z: (-1) ** (k + 1) * z**k / LD(2 * k + 3), 120)


def asin_tail(z):
    """(asin x - x) / x^3 as a function of z = x^2."""
    def term(k, z):
        c = fact(2 * k + 2) / (LD(4) ** (k + 1) * fact(k + 1) ** 2 * LD(2 * k + 3))
        return c * z**k
    return series(z, term, 120)


def sinh_tail(z):
    """(sinh x - x) / x^3 as a function of z = x^2."""
    return series(z, lambda k, z: z**k / fact(2 * k + 3), 25)


def expm1_scaled_over(c):
    """(e^(c h) - 1) / h = sum c^(k+1) h^k / (k+1)!: h times it is e^(c h) - 1 with the
    relative accuracy of the fit (float32 tanh: c = -2, sigmoid: c = -1)."""
    c = LD(c)
    return lambda h: series(h, lambda k, h: c ** (k + 1) * h**k / fact(k + 1), 30)


TWO_OVER_SQRTPI = LD(2) / np.sqrt(np.arccos(LD(-1)))


def erf_over_x(z):
    """erf(x)/x as a function of z = x^2 (Taylor series of erf)."""
    head = series(z, lambda k, z: (-1) ** k * z**k / (fact(k) * LD(2 * k + 1)), 60)
    return TWO_OVER_SQRTPI * head


def erfcx(x):
    """erfc(x) e^(x^2) for x >= 0.5 by Laplace's continued fraction, evaluated backwards."""
    tail = np.zeros_like(x)
    for k in reversed(range(1, 6000)):
        tail = (LD(k) / 2) / (x + tail)
    return 1 / (np.sqrt(np.arccos(LD(-1))) * (x + tail))


ERF_RATIONAL_END, ERF_RATIONAL_DEGREES = 3.92, (8, 6)  # special.erf32's rational

# (name, function, variable interval, target max relative error[, dtype of the coefficients])
# per dtype: float32 sin and cos are evaluated in float64 after a float64 range reduction.
# Targets sit just above the rounding floor of the constant term; the kernels are tails that a
# later multiplication damps. erfcx pieces are in a local variable v = x - centre so that
# Horner stays well conditioned.
PI4 = float(np.arccos(LD(-1)) / 4)
KERNELS = {
    "float64": [
        ("exp", exp_tail, (-0.3467, 0.3467), 2.0**-53),
        ("log", log_tail, (0.0, 0.02945), 2.0**-53),
        ("sin", sin_tail, (0.0, (PI4 + 1e-3) ** 2), 2.0**-53),
        ("cos", cos_tail, (0.0, (PI4 + 1e-3) ** 2), 2.0**-53),
        ("atan", atan_tail, (0.0, 0.1716), 2.0**-53),
        ("asin", asin_tail, (0.0, 0.25), 2.0**-53),
        ("sinh", sinh_tail, (0.0, 1.0), 2.0**-53),
        ("erf", erf_over_x, (0.0, 1.0), 2.0**-53),
    ],
    "float32": [
        ("exp", exp_tail, (-0.3467, 0.3467), 2.0**-24),
        ("log", log_tail, (0.0, 0.02945), 2.0**-24),
        ("sin", sin_tail, (0.0, (PI4 + 1e-3) ** 2), 2.0**-30, "float64"),
        ("cos", cos_tail, (0.0, (PI4 + 1e-3) ** 2), 2.0**-30, "float64"),
        ("atan", atan_tail, (0.0, 0.1716), 2.0**-24),
        ("asin", asin_tail, (0.0, 0.25), 2.0**-24),
        ("sinh", sinh_tail, (0.0, 1.0), 2.0**-24),
        ("erf", erf_over_x, (0.0, 1.0), 2.0**-24),
        # hyperbolic.tanh32 (the exp tail, one degree less than exp's: a ninth of its error
        # reaches tanh) and sigmoid32 (e^-h = 1 + h P(h))
        ("tanh", exp_tail, (-0.3468, 0.3468), 2.0**-22),
        ("sigmoid", expm1_scaled_over(-1), (-0.3467, 0.3467), 2.0**-25),
    ],
}
# erfcx(x) on [0.5, 28] (float64) / [0.5, 11] (float32) in pieces (lo, hi, centre).
ERFCX_PIECES = {
    "float64": [(0.5, 1.0, 0.75), (1.0, 1.5, 1.25), (1.5, 2.25, 1.875), (2.25, 3.25, 2.75),
                (3.25, 4.75, 4.0), (4.75, 7.0, 5.875), (7.0, 11.0, 9.0), (11.0, 17.0, 14.0),
                (17.0, 28.0, 22.5)],
    "float32": [(0.5, 1.25, 0.875), (1.25, 2.5, 1.875), (2.5, 4.5, 3.5), (4.5, 11.0, 7.75)],
}


def chebyshev_monomials(f, lo, hi, degree):
    """Monomial coefficients (exact fractions) of the Chebyshev interpolant of f on [lo, hi]."""
    n = degree + 1
    theta = (np.arange(n, dtype=LD) + LD(0.5)) * np.arccos(LD(-1)) / n
    nodes_t = np.cos(theta)
    mid, half = (LD(lo) + LD(hi)) / 2, (LD(hi) - LD(lo)) / 2
    values = f(mid + half * nodes_t)
    cheb = [2 * np.sum(values * np.cos(k * theta)) / n for k in range(n)]
    cheb[0] /= 2
    # T_k((v - mid)/half) as exact polynomials in v, accumulated with the Chebyshev weights.
    fmid, fhalf = Fraction(float(mid)), Fraction(float(half))
    t_prev, t_cur = [Fraction(1)], [-fmid / fhalf, 1 / fhalf]
    total = [Fraction(0)] * n
    for k in range(n):
        tk = t_prev if k == 0 else t_cur
        weight = Fraction(*cheb[k].as_integer_ratio())
        for j, c in enumerate(tk):
            total[j] += weight * c
        if k >= 1:
            nxt = [Fraction(0)] * (len(t_cur) + 1)
            for j, c in enumerate(t_cur):
                nxt[j + 1] += 2 * c / fhalf
                nxt[j] += -2 * c * fmid / fhalf
            for j, c in enumerate(t_prev):
                nxt[j] -= c
            t_prev, t_cur = t_cur, nxt
    return total


def rounded(coeffs, dtype):
    """Coefficients rounded to the target dtype, as Python floats."""
    return [float(np.dtype(dtype).type(float(c))) for c in coeffs]


def max_rel_error(f, coeffs, lo, hi, c0_lo=0.0):
    """Max relative error of the (rounded) polynomial plus c0_lo against f on a dense grid."""
    v = np.linspace(LD(lo), LD(hi), 4001, dtype=LD)
    p = np.zeros_like(v)
    for c in reversed(coeffs):
        p = p * v + LD(c)
    p = p + LD(c0_lo)
    ref = f(v)
    return float(np.max(np.abs((p - ref) / ref)))


def fit(f, lo, hi, target, dtype, split_c0=False):
    """The lowest-degree rounded polynomial for f on [lo, hi] meeting target, and its error.

    With split_c0 the constant term is kept as a rounded value plus a rounded remainder
    (returned first), for kernels whose value is not damped by a later multiplication.
    """
    for degree in range(1, 30):
        exact = chebyshev_monomials(f, lo, hi, degree)
        coeffs = rounded(exact, dtype)
        c0_lo = rounded([exact[0] - Fraction(coeffs[0])], dtype)[0] if split_c0 else 0.0
        err = max_rel_error(f, coeffs, lo, hi, c0_lo)
        if err <= target:
            return ([c0_lo] if split_c0 else []) + coeffs, err
    raise RuntimeError(f"no polynomial up to degree 29 meets {target} on [{lo}, {hi}]")


def fit_rational(f, hi, m, n, rounds=40):
    """P/Q (degrees m, n in z, Q(0) = 1, coefficients rounded to float32) near-minimax in
    relative error for f(z) on [0, hi]: Sanathanan-Koerner linearised least squares (weights
    1/Q), then Lawson reweighting toward equal ripple. Fitted in u = z/hi for conditioning."""
    th = (np.arange(3000) + 0.5) * np.pi / 3000
    x = np.unique(np.concatenate([np.sqrt(hi) / 2 * (1 - np.cos(th)),
                                  np.linspace(0, np.sqrt(hi), 3000)]))
    z = x * x
    fz = f(z.astype(LD)).astype(np.float64)
    u = z / hi
    w = np.ones_like(u)
    for k in range(rounds):
        a = np.hstack([u[:, None] ** np.arange(m + 1),
                       -fz[:, None] * u[:, None] ** np.arange(1, n + 1)])
        sol = np.linalg.lstsq(a * (w / fz)[:, None], w, rcond=None)[0]
        p, q = sol[:m + 1], np.concatenate([[1.0], sol[m + 1:]])
        qu = np.polyval(q[::-1], u)
        err = np.abs(np.polyval(p[::-1], u) / qu / fz - 1)
        if k < 10:
            w = 1 / np.abs(qu)
        else:  # the floor keeps points at a zero of the error in play
            w = (w * (err / err.max()) ** 0.3 + 1e-12) / np.abs(qu) * np.abs(qu).mean()
    p, q = p / hi ** np.arange(m + 1), q / hi ** np.arange(n + 1)
    return rounded(p, "float32"), rounded(q, "float32"), float(err.max())


def local(f, centre):
    """f as a function of v = x - centre."""
    return lambda v: f(v + LD(centre))


def main():
    lines = ['"""Polynomial coefficients, lowest degree first. Generated by',
             'tools/dev/fit_mathlib.py; do not edit."""', "", "COEFFICIENTS = {"]
    for dtype, kernels in KERNELS.items():
        lines.append(f"    {dtype!r}: {{")
        for name, f, (lo, hi), target, *rounding in kernels:
            coeffs, err = fit(f, lo, hi, target, rounding[0] if rounding else dtype)
            lines.append(f"        # {name}: degree {len(coeffs) - 1} on [{lo:g}, {hi:g}], "
                         f"max relative error {err:.2g}")
            lines.append(f"        {name!r}: ({', '.join(repr(c.hex()) for c in coeffs)},),")
        pieces = []
        for lo, hi, centre in ERFCX_PIECES[dtype]:
            target = 2.0**-54.5 if dtype == "float64" else 2.0**-26
            coeffs, err = fit(local(erfcx, centre), lo - centre, hi - centre, target, dtype, True)
            hexes = ", ".join(repr(c.hex()) for c in coeffs)
            pieces.append(f"            ({lo!r}, {centre!r}, ({hexes},)),"
                          f"  # degree {len(coeffs) - 2}, max relative error {err:.2g}")
        if dtype == "float32":
            p, q, err = fit_rational(erf_over_x, ERF_RATIONAL_END**2, *ERF_RATIONAL_DEGREES)
            lines.append(f"        # erf(x)/x = P(x^2)/Q(x^2) for |x| <= {ERF_RATIONAL_END}: "
                         f"degrees {ERF_RATIONAL_DEGREES}, max relative error {err:.2g} "
                         "before rounding")
            lines.append(f"        'erf_p': ({', '.join(repr(c.hex()) for c in p)},),")
            lines.append(f"        'erf_q': ({', '.join(repr(c.hex()) for c in q)},),")
        lines.append("        # erfcx(x) = erfc(x) exp(x^2) in pieces: (start, centre, (low part")
        lines.append("        # of the constant term, coefficients in x - centre))")
        lines.append("        'erfcx': (")
        lines.extend(pieces)
        lines.append("        ),")
        lines.append("    },")
    lines.append("}")
    OUT.write_text("\n".join(lines) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
