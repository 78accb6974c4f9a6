"""The cache of native units (tensor kernels and scalar programs), keyed by the group graph's
structural hash (ops, constants, types and use structure, not value names) and its
specialization (the complete input types): in memory, and on disk together with what else
decides the code (the code generator's source, the cores kernels are split for, the BLAS it
calls), so a unit another process compiled is loaded without lowering its graph or printing
its LLVM IR."""

from __future__ import annotations

import hashlib
import re
import threading
from typing import Optional, Union

from irjit.compiler import progress
from irjit.compiler.ir import Graph
from irjit.compiler.structural_hash import canonical_text
from irjit.ops.lowering_common import NotLowerable

from . import blas_library
from .scalar_program import is_scalar_program
from .scalar_program_unit import ScalarProgramUnit
from .source_version import generator_version
from .threads import thread_count
from .unit import NativeUnit, bounds_checks_enabled, collector_paused, tensor_unit

_LOCK = threading.Lock()
_UNITS: dict[tuple, Optional[Union[NativeUnit, ScalarProgramUnit]]] = {}


_REQUIRES_GRAD = re.compile(r", requires_grad=[01]|requires_grad=[01], |\(requires_grad=[01]\)")


def _without_requires_grad(text: str) -> str:
    return _REQUIRES_GRAD.sub("", text)


def unit_key(graph: Graph) -> tuple:
    """The graph's structure and input types, leaving out `requires_grad`, which no lowering
    reads: a group run with and without grad is one unit (it was compiled twice, ~130 ms for
    lstm_cell's gate product)."""
    text = _without_requires_grad(canonical_text(graph))
    return (hashlib.sha256(text.encode()).hexdigest(),
            tuple(_without_requires_grad(str(v.type)) for v in graph.inputs), bounds_checks_enabled())


def disk_key(key: tuple) -> str:
    """What a unit's code depends on besides the host: its in-memory key, the generator, the
    threads its kernels may use and the BLAS they call."""
    library = blas_library.default_library()
    return repr((key, generator_version(), thread_count(),
                 None if library is None else (library.abi, library.int_bits)))


def get_unit(graph: Graph) -> tuple[Optional[Union[NativeUnit, ScalarProgramUnit]], bool]:
    """(the compiled unit of `graph` or None when it cannot be lowered, whether it was cached):
    a scalar program when the graph outputs numbers, else a tensor kernel unit."""
    key = unit_key(graph)
    with _LOCK:
        if key in _UNITS:
            return _UNITS[key], True
    name = "unit_" + hashlib.sha256(repr(key).encode()).hexdigest()[:16]  # the same in every process
    progress.tick("native units", "unit", name)
    try:
        with collector_paused():  # (see `collector_paused`: from the disk cache too, lowering too)
            unit = (ScalarProgramUnit(graph, name, cache_key=disk_key(key)) if is_scalar_program(graph)
                    else tensor_unit(graph, name, cache_key=disk_key(key)))
    except NotLowerable:
        unit = None
    with _LOCK:
        return _UNITS.setdefault(key, unit), False


def clear() -> None:
    with _LOCK:
        _UNITS.clear()
