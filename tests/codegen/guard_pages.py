"""Arrays that end where an unreadable page begins, and a fork that runs a native call on them:
a kernel that reads or writes one element past the end of such an array dies of a signal in the
child, which the test sees, instead of reading a neighbour's memory unnoticed."""

from __future__ import annotations

import ctypes
import mmap
import os
from typing import Callable

import numpy as np

_PAGE = mmap.PAGESIZE
_libc = ctypes.CDLL(None, use_errno=True)
_libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
_KEEP = []  # the mappings live as long as the process (tests make few)


def array_before_guard(values: np.ndarray) -> np.ndarray:
    """A C-contiguous copy of `values` whose last byte is followed by an unreadable page."""
    nbytes = max(values.nbytes, 1)
    pages = -(-nbytes // _PAGE)
    region = mmap.mmap(-1, (pages + 1) * _PAGE, prot=mmap.PROT_READ | mmap.PROT_WRITE)
    base = ctypes.addressof(ctypes.c_char.from_buffer(region))
    if _libc.mprotect(base + pages * _PAGE, _PAGE, 0) != 0:
        raise OSError(ctypes.get_errno(), "mprotect")
    _KEEP.append(region)
    start = pages * _PAGE - values.nbytes
    out = np.frombuffer(region, dtype=values.dtype, count=values.size, offset=start).reshape(values.shape)
    out[...] = values
    return out


def runs_without_a_fault(call: Callable[[], None]) -> bool:
    """Whether `call()` returns in a forked child instead of dying of a signal."""
    pid = os.fork()
    if pid == 0:  # the child: no pytest, no cleanup, just the call
        try:
            call()
        except BaseException:
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
