"""Helpers shared by op implementations: PyTorch's promotion applied to numpy operands."""

from __future__ import annotations

from typing import Any

import numpy as np

from .dtypes import DEFAULT_FLOAT, result_type


def promoted(*args: Any) -> tuple[np.dtype, list]:
    """The PyTorch result dtype of the operands and the operands cast to it (as arrays)."""
    dt = result_type(*args)
    return dt, [np.asarray(a, dtype=dt) if a is not None else None for a in args]


def as_array(x: Any, dtype=None) -> np.ndarray:
    return np.asarray(x, dtype=dtype)


def float_result_type(*args: Any) -> np.dtype:
    """The dtype of ops that always produce floating point (true division, sqrt, exp of ints)."""
    dt = result_type(*args)
    return dt if dt.kind in "fc" else DEFAULT_FLOAT


def normalize_dim(dim: int, ndim: int) -> int:
    """A dim in [0, ndim) (ndim 0 behaves as 1, as in PyTorch); IndexError when out of range."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim % n
