"""Find an optimized BLAS (GEMM, GEMV) at run time and make it callable from JIT code: the
ILP64 CBLAS that numpy ≥ 2 wheels bundle (OpenBLAS), else scipy's `cython_blas` (Fortran ABI),
else none.

The library is found among the shared objects this process has mapped after importing numpy's
core, never by a fixed path; `BlasLibrary.register_symbols()` makes its functions resolvable by
name (`BlasLibrary.symbol(routine)`) in modules the JIT links afterwards."""

from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Mapping, Optional

import llvmlite.binding as llvm

# CBLAS enums (C `enum`, passed as i32)
CBLAS_ROW_MAJOR = 101
CBLAS_NO_TRANS = 111
CBLAS_TRANS = 112

ROUTINES = ("sgemm", "dgemm", "sgemv", "dgemv")

# Symbols of numpy's bundled OpenBLAS: scipy-openblas prefixes every name with `scipy_` and
# suffixes its 64-bit-integer interface with `64_`.
_OPENBLAS_SYMBOLS = {
    "cblas": {r: f"scipy_cblas_{r}64_" for r in ROUTINES},
    "fortran": {r: f"scipy_{r}_64_" for r in ROUTINES},
}


@dataclass(frozen=True)
class BlasLibrary:
    """The GEMM and GEMV entry points of one BLAS: `abi` is "cblas" (row-major C interface, sizes
    by value) or "fortran" (column-major, every argument by pointer); BLAS integers are
    `int_bits` wide."""
    abi: str
    int_bits: int
    addresses: Mapping[str, int]  # routine ("sgemm", "dgemv", ...) -> function address
    origin: str  # the shared object or module the functions come from

    def symbol(self, routine: str) -> str:
        """The name generated code calls `routine` by."""
        return f"irjit_{self.abi}{self.int_bits}_{routine}"

    def register_symbols(self) -> None:
        """Make `symbol(routine)` resolve to the library's function in modules JIT-linked later."""
        for routine, address in self.addresses.items():
            llvm.add_symbol(self.symbol(routine), address)


def _mapped_shared_objects() -> list[str]:
    """Paths of the shared objects mapped into this process once numpy's core is loaded."""
    import numpy._core._multiarray_umath  # noqa: F401  (maps numpy's BLAS)
    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return []
    paths = []
    for line in maps.splitlines():
        fields = line.split(None, 5)
        if len(fields) == 6 and ".so" in os.path.basename(fields[5]):
            paths.append(fields[5])
    return list(dict.fromkeys(paths))


def _function_address(lib: ctypes.CDLL, name: str) -> Optional[int]:
    try:
        return ctypes.cast(getattr(lib, name), ctypes.c_void_p).value
    except AttributeError:
        return None


def numpy_openblas(abi: str = "cblas") -> Optional[BlasLibrary]:
    """The ILP64 routines of the OpenBLAS numpy is linked with (`abi` "cblas" or "fortran"), or
    None when numpy was built without it or the process's mappings cannot be read."""
    names = _OPENBLAS_SYMBOLS[abi]
    paths = _mapped_shared_objects()  # the one named like a BLAS first: each probe costs ~50 us
    for path in sorted(paths, key=lambda p: "blas" not in os.path.basename(p).lower()):
        try:
            lib = ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
        except OSError:
            continue
        addresses = {routine: _function_address(lib, name) for routine, name in names.items()}
        if all(addresses.values()):
            return BlasLibrary(abi, 64, addresses, path)
    return None


def _capsule_address(capsule: object) -> int:
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype, get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    return get_pointer(capsule, get_name(capsule))


def scipy_blas() -> Optional[BlasLibrary]:
    """scipy's `cython_blas` routines (Fortran ABI, 32-bit integers), or None without scipy."""
    try:
        from scipy.linalg import cython_blas
    except ImportError:
        return None
    capi = cython_blas.__pyx_capi__
    addresses = {routine: _capsule_address(capi[routine]) for routine in ROUTINES}
    return BlasLibrary("fortran", 32, addresses, "scipy.linalg.cython_blas")


@lru_cache(maxsize=None)
def default_library() -> Optional[BlasLibrary]:
    """The fastest BLAS available here: numpy's OpenBLAS, else scipy's, else None (loop kernels)."""
    return numpy_openblas() or scipy_blas()
