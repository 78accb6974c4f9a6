"""PyTorch dtypes as numpy dtypes, TorchScript's ScalarType codes, and type promotion."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np


@dataclass(frozen=True)
class ScalarType:
    """One of PyTorch's scalar types: its name in printed tensor types, its `c10::ScalarType`
    code (how TorchScript passes dtypes), its numpy dtype (None when numpy has none), the C
    name PyTorch's error messages use, and its category."""
    name: str
    code: int
    numpy: Optional[str]
    c_name: Optional[str]
    category: str  # "bool", "int", "float", "complex", "quantized"


# The one dtype table.
SCALAR_TYPE_TABLE: tuple[ScalarType, ...] = (
    ScalarType("Byte", 0, "uint8", "unsigned char", "int"),
    ScalarType("Char", 1, "int8", "signed char", "int"),
    ScalarType("Short", 2, "int16", "short int", "int"),
    ScalarType("Int", 3, "int32", "int", "int"),
    ScalarType("Long", 4, "int64", "long int", "int"),
    ScalarType("Half", 5, "float16", "c10::Half", "float"),
    ScalarType("Float", 6, "float32", "float", "float"),
    ScalarType("Double", 7, "float64", "double", "float"),
    ScalarType("ComplexHalf", 8, None, "c10::complex<c10::Half>", "complex"),
    ScalarType("ComplexFloat", 9, "complex64", "c10::complex<float>", "complex"),
    ScalarType("ComplexDouble", 10, "complex128", "c10::complex<double>", "complex"),
    ScalarType("Bool", 11, "bool", "bool", "bool"),
    ScalarType("QInt8", 12, None, None, "quantized"),
    ScalarType("QUInt8", 13, None, None, "quantized"),
    ScalarType("QInt32", 14, None, None, "quantized"),
    ScalarType("BFloat16", 15, None, "c10::BFloat16", "float"),
    ScalarType("QUInt4x2", 16, None, None, "quantized"),
    ScalarType("QUInt2x4", 17, None, None, "quantized"),
    ScalarType("Float8_e5m2", 23, None, None, "float"),
    ScalarType("Float8_e4m3fn", 24, None, None, "float"),
    ScalarType("Float8_e5m2fnuz", 25, None, None, "float"),
    ScalarType("Float8_e4m3fnuz", 26, None, None, "float"),
    ScalarType("UInt16", 27, "uint16", "uint16_t", "int"),
    ScalarType("UInt32", 28, "uint32", "uint32_t", "int"),
    ScalarType("UInt64", 29, "uint64", "uint64_t", "int"),
)
SCALAR_TYPE_BY_NAME = {t.name: t for t in SCALAR_TYPE_TABLE}
_BY_NUMPY = {t.numpy: t for t in SCALAR_TYPE_TABLE if t.numpy is not None}

# TorchScript passes dtypes as ints (c10::ScalarType codes)
SCALAR_TYPE_CODES: dict[int, Any] = {t.code: np.dtype(t.numpy).type if t.numpy else None
                                     for t in SCALAR_TYPE_TABLE}
CODE_OF_DTYPE = {np.dtype(t.numpy): t.code for t in SCALAR_TYPE_TABLE if t.numpy is not None}
DEFAULT_FLOAT = np.dtype(np.float32)
DEFAULT_INT = np.dtype(np.int64)


def dtype_from_code(code: int) -> np.dtype:
    t = SCALAR_TYPE_CODES.get(code)
    if t is None:
        raise ValueError(f"unsupported dtype code {code}")
    return np.dtype(t)


def code_of(dtype) -> int:
    return CODE_OF_DTYPE[np.dtype(dtype)]


def scalar_type_name(dtype) -> str:
    """PyTorch's name of a numpy dtype ('Float', 'Long', ...), the numpy name when it has none."""
    t = _BY_NUMPY.get(np.dtype(dtype).name)
    return t.name if t is not None else np.dtype(dtype).name


def c_type_name(dtype) -> str:
    """The C name PyTorch's messages give a numpy dtype ('float', 'long int', ...)."""
    t = _BY_NUMPY.get(np.dtype(dtype).name)
    return t.c_name if t is not None and t.c_name else np.dtype(dtype).name


def is_floating_name(name: str) -> bool:
    """Whether the printed scalar type name is a floating type (`Float`, `BFloat16`, ...)."""
    t = SCALAR_TYPE_BY_NAME.get(name)
    return t is not None and t.category == "float"


def is_complex_name(name: str) -> bool:
    t = SCALAR_TYPE_BY_NAME.get(name)
    return t is not None and t.category == "complex"


_CATEGORIES = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def category(dtype: np.dtype) -> int:
    """0 bool, 1 integer, 2 floating, 3 complex (PyTorch's promotion categories)."""
    return _CATEGORIES[(dtype if isinstance(dtype, np.dtype) else np.dtype(dtype)).kind]


def is_floating(dtype) -> bool:
    return np.dtype(dtype).kind in "fc"


def _promote_pair(a: np.dtype, b: np.dtype) -> np.dtype:
    if a is b:  # the same (builtin) dtype
        return a
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
