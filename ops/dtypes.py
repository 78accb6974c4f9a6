"""PyTorch dtypes as numpy dtypes, TorchScript's ScalarType codes, and type promotion."""

from __future__ import annotations

from typing import Any

import numpy as np

# TorchScript passes dtypes as ints (c10::ScalarType); index = code.
SCALAR_TYPE_CODES: dict[int, Any] = {
    0: np.uint8, 1: np.int8, 2: np.int16, 3: np.int32, 4: np.int64, 5: np.float16,
    6: np.float32, 7: np.float64, 8: None, 9: np.complex64, 10: np.complex128, 11: np.bool_,
}
CODE_OF_DTYPE = {np.dtype(v): k for k, v in SCALAR_TYPE_CODES.items() if v is not None}
DEFAULT_FLOAT = np.dtype(np.float32)
DEFAULT_INT = np.dtype(np.int64)


def dtype_from_code(code: int) -> np.dtype:
    t = SCALAR_TYPE_CODES.get(code)
    if t is None:
        raise ValueError(f"unsupported dtype code {code}")
    return np.dtype(t)


def code_of(dtype) -> int:
    return CODE_OF_DTYPE[np.dtype(dtype)]


def category(dtype: np.dtype) -> int:
    """0 bool, 1 integer, 2 floating, 3 complex (PyTorch's promotion categories)."""
    k = np.dtype(dtype).kind
    return {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}[k]


def is_floating(dtype) -> bool:
    return np.dtype(dtype).kind in "fc"


def _promote_pair(a: np.dtype, b: np.dtype) -> np.dtype:
    ca, cb = category(a), category(b)
    if ca != cb:
        hi, lo = (a, b) if ca > cb else (b, a)
        if category(hi) == 3 and category(lo) == 2:  # complex with a wider float
            return np.promote_types(hi, lo)
        return hi
    return np.promote_types(a, b)


def promote_types(*dtypes) -> np.dtype:
    """PyTorch's promotion of tensor dtypes of equal priority (`torch.promote_types`)."""
    result = np.dtype(dtypes[0])
    for d in dtypes[1:]:
        result = _promote_pair(result, np.dtype(d))
    return result


def _scalar_dtype(v: Any) -> np.dtype:
    if isinstance(v, bool):
        return np.dtype(np.bool_)
    if isinstance(v, int):
        return DEFAULT_INT
    if isinstance(v, complex):
        return np.dtype(np.complex64)
    return DEFAULT_FLOAT


def result_type(*args: Any) -> np.dtype:
    """PyTorch's `torch.result_type`: dimensioned tensors outrank zero-dim tensors, which
    outrank Python numbers; a lower-priority operand only matters if its category is higher."""
    dim_t = zero_t = scalar_t = None
    for a in args:
        if a is None:
            continue
        if isinstance(a, np.ndarray):
            if a.ndim > 0:
                dim_t = a.dtype if dim_t is None else _promote_pair(dim_t, a.dtype)
            else:
                zero_t = a.dtype if zero_t is None else _promote_pair(zero_t, a.dtype)
        elif isinstance(a, (bool, int, float, complex, np.generic)):
            if isinstance(a, np.generic):
                a = a.item()
            s = _scalar_dtype(a)
            scalar_t = s if scalar_t is None else (
                s if category(s) > category(scalar_t) else scalar_t)
    result = dim_t
    for lower in (zero_t, scalar_t):
        if lower is None:
            continue
        if result is None:
            result = lower
        elif category(lower) > category(result):
            if lower is scalar_t and category(lower) == 2:
                result = DEFAULT_FLOAT if category(result) < 2 else result
            elif lower is scalar_t and category(lower) == 3:
                result = np.dtype(np.complex128) if result == np.float64 else np.dtype(np.complex64)
            else:
                result = lower
    return np.dtype(result) if result is not None else DEFAULT_FLOAT
