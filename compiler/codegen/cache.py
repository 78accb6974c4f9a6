"""The in-memory cache of native units, keyed by the group graph's structural hash (ops,
constants, types and use structure, not value names) and its specialization (the complete
input types)."""

from __future__ import annotations

import hashlib
import threading
from typing import Optional, Union

from irjit.compiler.ir import Graph
from irjit.compiler.structural_hash import structural_hash
from irjit.ops.lowering_common import NotLowerable

from .scalar_program import is_scalar_program
from .scalar_program_unit import ScalarProgramUnit
from .unit import NativeUnit, bounds_checks_enabled, tensor_unit

_LOCK = threading.Lock()
_UNITS: dict[tuple, Optional[Union[NativeUnit, ScalarProgramUnit]]] = {}


def unit_key(graph: Graph) -> tuple:
    return (structural_hash(graph), tuple(str(v.type) for v in graph.inputs), bounds_checks_enabled())


def get_unit(graph: Graph) -> tuple[Optional[Union[NativeUnit, ScalarProgramUnit]], bool]:
    """(the compiled unit of `graph` or None when it cannot be lowered, whether it was cached):
    a scalar program when the graph outputs numbers, else a tensor kernel unit."""
    key = unit_key(graph)
    with _LOCK:
        if key in _UNITS:
            return _UNITS[key], True
    name = "unit_" + hashlib.sha256(repr(key).encode()).hexdigest()[:16]  # the same in every process
    try:
        unit = (ScalarProgramUnit if is_scalar_program(graph) else tensor_unit)(graph, name)
    except NotLowerable:
        unit = None
    with _LOCK:
        return _UNITS.setdefault(key, unit), False


def clear() -> None:
    with _LOCK:
        _UNITS.clear()
