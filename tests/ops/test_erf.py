"""The vectorized erf and erfc against the C library's (math.erf, math.erfc): erf within
2 ulp over its whole range, erfc within a few ulp wherever it is a normal number, and the
special values."""

import math

import numpy as np
import pytest

from irjit.ops.erf import erf, erfc


def ulp_error(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    return np.abs(got - want) / np.spacing(np.abs(want))


def sample_points() -> np.ndarray:
    rng = np.random.default_rng(11)
    return np.concatenate([
        np.linspace(-7, 7, 70_001),                      # every table interval, both signs
        rng.uniform(-6.5, 6.5, 50_000),
        rng.uniform(-1e-3, 1e-3, 5_000),
        np.ldexp(rng.uniform(1, 2, 2_000), rng.integers(-1070, -5, 2_000)),  # tiny to subnormal
        (np.arange(-6 * 64, 6 * 64 + 1) + 0.5) / 64,     # halfway between table points
        [0.0, -0.0, 5.0e-324, 5.9, 5.99999999, 6.0, 1e300],
    ])


def test_erf_within_two_ulp_of_math_erf():
    x = sample_points()
    want = np.array([math.erf(v) for v in x])
    nonzero = want != 0
    assert ulp_error(erf(x)[nonzero], want[nonzero]).max() <= 2
    assert np.array_equal(erf(x)[~nonzero], want[~nonzero])


def test_erfc_within_a_few_ulp_of_math_erfc():
    rng = np.random.default_rng(12)
    x = np.concatenate([sample_points(), rng.uniform(6, 26.5, 20_000)])
    want = np.array([math.erfc(v) for v in x])
    normal = want > np.finfo(np.float64).tiny
    assert ulp_error(erfc(x)[normal], want[normal]).max() <= 4


@pytest.mark.parametrize("fn, ref", [(erf, math.erf), (erfc, math.erfc)])
def test_special_values(fn, ref):
    x = np.array([np.inf, -np.inf, 0.0, -0.0, 40.0, -40.0])
    assert fn(x).tolist() == [ref(v) for v in x]
    assert np.isnan(fn(np.array([np.nan]))).all()
    assert np.signbit(erf(np.array([-0.0])))[0]


def test_shapes_and_scalars():
    x = np.linspace(-2, 2, 12).reshape(3, 4)
    assert erf(x).shape == (3, 4)
    assert erf(0.5) == pytest.approx(math.erf(0.5), rel=1e-15)


@pytest.mark.parametrize("fn", [erf, erfc])
def test_float32_inputs_round_as_the_float64_evaluation(fn):
    """A float32 input is evaluated with fewer Taylor terms (to float32's precision): rounded to
    float32, its results are those of the full float64 evaluation."""
    rng = np.random.default_rng(13)
    x = np.concatenate([np.linspace(-7, 7, 200_001), rng.standard_normal(100_000) * 2,
                        (np.arange(-6 * 64, 6 * 64 + 1) + 0.5) / 64,
                        [0.0, -0.0, 1e-30, 5.99, 6.0, 27.4, 27.5, 30.0, np.inf, -np.inf]]).astype(np.float32)
    narrow = fn(x).astype(np.float32)
    full = fn(x.astype(np.float64)).astype(np.float32)
    assert np.array_equal(narrow, full)
    assert np.isnan(fn(np.array([np.nan], np.float32))).all()
