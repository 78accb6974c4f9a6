"""erf and erfc of float64 arrays, vectorized (the interpreter's gelu and erf ops call them on
whole tensors; `np.vectorize(math.erf)` cost half of a ViT block's forward time).

Both are Taylor polynomials around table points c = j/64: erf(c + h) on [0, 6] (beyond, erf rounds to
+-1), and erfc(x) = exp(-x*x) * g(x) with g(x) = exp(x*x) erfc(x) on [0, 27.5] (beyond, erfc
underflows). The tables (each point's value as a double-double, then Taylor coefficients)
are computed with `decimal` on first use (~0.1 s); erf is within about one ulp.
"""

from __future__ import annotations

from decimal import Decimal, localcontext
from functools import lru_cache

import numpy as np

ERF_STEP, ERF_END, ERF_TERMS = 64, 6.0, 8  # table points per unit, last point, coefficients
ERFC_STEP, ERFC_END, ERFC_TERMS = 64, 27.5, 9
_DIGITS = 50
_STEP_TERMS = 24  # Taylor terms of a table step: (1/64)^24 ~ 1e-43


def _decimal_pi() -> Decimal:
    """pi to the context's precision (Machin's formula)."""
    def arctan_inv(n: int) -> Decimal:
        total, k, term = Decimal(0), 0, Decimal(1) / n
        while term > Decimal(10) ** -(_DIGITS + 10):
            total += term / (2 * k + 1) if k % 2 == 0 else -term / (2 * k + 1)
            term /= n * n
            k += 1
        return total
    return 4 * (4 * arctan_inv(5) - arctan_inv(239))


def _erf_coefficients(c: Decimal, value: Decimal, n: int, k2: Decimal) -> list[Decimal]:
    """erf's Taylor coefficients at c: erf^(k+1)(c) = k2 (-1)^k H_k(c) exp(-c^2) with H the
    physicists' Hermite polynomials."""
    base, h_prev, h_cur, out, fact = k2 * (-c * c).exp(), Decimal(0), Decimal(1), [value], Decimal(1)
    for k in range(n):
        fact *= k + 1
        out.append(base * (-1) ** k * h_cur / fact)
        h_prev, h_cur = h_cur, 2 * c * h_cur - 2 * k * h_prev
    return out


def _g_coefficients(c: Decimal, value: Decimal, n: int, k2: Decimal) -> list[Decimal]:
    """Taylor coefficients at c of g(x) = exp(x^2) erfc(x), from g' = 2x g - k2."""
    out = [value, 2 * c * value - k2]
    for k in range(1, n):
        out.append((2 * c * out[k] + 2 * out[k - 1]) / (k + 1))
    return out


def _polynomial(coeffs: list[Decimal], h: Decimal) -> Decimal:
    total = Decimal(0)
    for a in reversed(coeffs):
        total = total * h + a
    return total


def _table(rows: list[list[Decimal]], terms: int) -> np.ndarray:
    """Columns: value high, value low, then Taylor coefficients 1..terms (one row per point)."""
    out = np.empty((terms + 2, len(rows)))
    for j, row in enumerate(rows):
        hi = float(row[0])
        out[0, j], out[1, j] = hi, float(row[0] - Decimal(hi))
        out[2:, j] = [float(v) for v in row[1:terms + 1]]
    return out


@lru_cache(maxsize=None)
def _erf_table() -> np.ndarray:
    """erf's table, from erf(0) = 0 stepping forward with long Taylor expansions."""
    with localcontext() as ctx:
        ctx.prec = _DIGITS
        k2 = 2 / _decimal_pi().sqrt()
        step, value, rows = Decimal(1) / ERF_STEP, Decimal(0), []
        for j in range(int(ERF_END * ERF_STEP) + 1):
            coeffs = _erf_coefficients(Decimal(j) / ERF_STEP, value, _STEP_TERMS, k2)
            rows.append(coeffs)
            value = _polynomial(coeffs, step)
    return _table(rows, ERF_TERMS)


@lru_cache(maxsize=None)
def _erfc_table() -> np.ndarray:
    """g's table, from a continued fraction at the last point stepping backward (the direction
    in which g's errors shrink)."""
    with localcontext() as ctx:
        ctx.prec = _DIGITS
        k2 = 2 / _decimal_pi().sqrt()
        last = int(ERFC_END * ERFC_STEP)
        c = Decimal(last) / ERFC_STEP
        f = c
        for k in range(200, 0, -1):  # exp(c^2) erfc(c) = (k2/2) / (c + (1/2)/(c + 1/(c + ...)))
            f = c + Decimal(k) / 2 / f
        value, rows, step = k2 / 2 / f, [], -Decimal(1) / ERFC_STEP
        for j in range(last, -1, -1):
            coeffs = _g_coefficients(Decimal(j) / ERFC_STEP, value, _STEP_TERMS, k2)
            rows.append(coeffs)
            value = _polynomial(coeffs, step)
    return _table(rows[::-1], ERFC_TERMS)


# Taylor coefficients past the value that a float32 (or narrower) result needs: with |h| <=
# 1/128 the fifth-order polynomial (value low word dropped) is within 1e-13 of erf and 4e-14 of
# g, far below float32's rounding (the rounded results were identical on 3M float32 inputs).
_NARROW_TERMS = 5


def _taylor(table: np.ndarray, step: int, a: np.ndarray, narrow: bool = False) -> np.ndarray:
    """The table's function at `a` (non-negative, inside the table's range): the nearest
    point's polynomial; `narrow` for a float32 result: fewer terms, no low word."""
    idx = (a * step + 0.5).astype(np.intp)  # a >= 0: round half up
    h = a - idx * (1.0 / step)  # exact: a and the point are within a factor of two of each other
    last = _NARROW_TERMS + 1 if narrow else table.shape[0] - 1
    acc = table[last].take(idx)
    for k in range(last - 1, 1, -1):
        acc *= h
        acc += table[k].take(idx)
    acc *= h
    if not narrow:
        acc += table[1].take(idx)
    acc += table[0].take(idx)
    return acc


def _narrow(x) -> bool:
    """Whether the result is wanted in float32 or narrower (the input's precision)."""
    return isinstance(x, np.ndarray) and x.dtype.kind == "f" and x.dtype.itemsize <= 4


def _with_nans(x: np.ndarray, out: np.ndarray) -> np.ndarray:
    nan = np.isnan(x)
    return np.where(nan, x, out) if nan.any() else out


def erf(x) -> np.ndarray:
    """erf of an array as float64 (other inputs are converted; a float32 or narrower input is
    evaluated to float32's precision), NaN for NaN, +-1 at +-inf."""
    narrow = _narrow(x)
    x = np.asarray(x, dtype=np.float64)
    a = np.fmin(np.abs(x), ERF_END)  # NaN and large |x| at the last point: erf = 1.0
    return _with_nans(x, np.copysign(_taylor(_erf_table(), ERF_STEP, a, narrow), x))


def erfc(x) -> np.ndarray:
    """erfc of an array as float64: 1 - erf(x), accurate in relative terms for large x (a
    float32 or narrower input to float32's precision)."""
    narrow = _narrow(x)
    x = np.asarray(x, dtype=np.float64)
    a = np.fmin(np.abs(x), ERFC_END)  # NaN and large |x| at the last point, zeroed below
    hi = a * a
    # x^2 = hi + lo exactly (Dekker's product), so exp(-x^2) = exp(-hi) (1 - lo)
    split = a * 134217729.0
    top = split - (split - a)
    bottom = a - top
    lo = ((top * top - hi) + 2 * top * bottom) + bottom * bottom
    with np.errstate(under="ignore"):
        tail = np.exp(-hi) * (1 - lo) * _taylor(_erfc_table(), ERFC_STEP, a, narrow)
    tail = np.where(np.abs(x) < ERFC_END, tail, 0.0)
    out = np.where(x < 0, 2 - tail, tail)
    return _with_nans(x, out)
