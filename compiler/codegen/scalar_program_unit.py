"""A compiled scalar program (scalar_program.py): its own code library, called through ctypes
with Python numbers and lists of them (arrays or None for tensor arguments), returning a status
and numbers and lists. Cached on disk by its graph as tensor units are (cache.py): a hit links
the object code with the kinds and globals its JSON sidecar holds."""

from __future__ import annotations

import ctypes
import json
from typing import Optional

from irjit.compiler.ir import Graph

from .entry import check_array_layout, process_address
from .library import CodeLibrary, load_library, new_module
from .scalar_program import ProgramLowering

STATUS_ARGUMENT = 2  # an argument is not of its input's type (or an int outside int64)
_CTYPES = {"int": ctypes.c_int64, "float": ctypes.c_double, "bool": ctypes.c_bool,
           "tensor": ctypes.py_object}
_ELEMENT_CTYPES = {f"{k}[]": c for k, c in _CTYPES.items() if k != "tensor"}
_PYTHON_TYPES = {"int": int, "float": float, "bool": bool}
INT64_MIN, INT64_MAX = -(2 ** 63), 2 ** 63 - 1


class _ListSlot(ctypes.Structure):
    """A list output: the buffer the caller provides (room for the list's capacity) and the
    length the program stores."""

    _fields_ = [("data", ctypes.c_void_p), ("length", ctypes.c_int64)]


def _fits(x, kind: str) -> bool:
    """Whether `x` is a Python number of `kind` (ints within int64)."""
    return type(x) is _PYTHON_TYPES[kind] and (kind != "int" or INT64_MIN <= x <= INT64_MAX)


class ScalarProgramUnit:
    """A compiled scalar program: `call(args)` returns (status, numbers); status 0 means it ran.
    Tensor arguments (arrays or None) are passed as objects: the program compares them with
    None and reads one-element arrays through the entry's array guards."""

    def __init__(self, graph: Graph, name: str = "program", cache_key: Optional[str] = None):
        """Compile `graph`; with `cache_key` (its structural hash and specialization, the code
        generator's version, the host), a program the disk cache holds under that key is linked
        from its object code instead, without lowering, emitting or printing anything."""
        assert check_array_layout(), "numpy's array layout is not the one native entries read"
        self.name = name
        loaded = load_library(name, cache_key, lambda metadata: None) if cache_key is not None else None
        if loaded is not None:
            self.library, metadata = loaded
            meta = json.loads(metadata)
            addresses = {g: process_address(g.rsplit(".", 1)[1]) for g in meta["globals"]}
            self.input_kinds, self.output_kinds = meta["inputs"], meta["outputs"]
            self.output_capacities = meta["capacities"]
        else:
            lowering = ProgramLowering(graph)
            module = new_module(name)
            lowering.emit(module, name)
            addresses = lowering.addresses
            self.input_kinds = lowering.input_kinds
            self.output_kinds = lowering.output_kinds
            self.output_capacities = lowering.output_capacities
            self.library = CodeLibrary(module)
            self.library.finalize(cache_key, json.dumps({
                "globals": sorted(addresses), "inputs": self.input_kinds, "outputs": self.output_kinds,
                "capacities": self.output_capacities}))
        for global_name, address in addresses.items():
            ctypes.c_int64.from_address(self.library.global_address(global_name)).value = address
        fields = [(f"out{k}", _ListSlot if kind in _ELEMENT_CTYPES else _CTYPES[kind])
                  for k, kind in enumerate(self.output_kinds)]
        self._outputs = type(f"{name}_outputs", (ctypes.Structure,), {"_fields_": fields})
        self._names = [f for f, _ in fields]
        params = [t for k in self.input_kinds for t in (
            [ctypes.POINTER(_ELEMENT_CTYPES[k]), ctypes.c_int64] if k in _ELEMENT_CTYPES else [_CTYPES[k]])]
        proto = ctypes.CFUNCTYPE(ctypes.c_int32, *params, ctypes.c_void_p)
        self._fn = proto(self.library.address(name))

    @property
    def compile_ms(self) -> float:
        return self.library.compile_ms

    def call(self, args: list) -> tuple[int, list]:
        """Run on `args` (Python numbers and lists of them; arrays or None for tensor inputs)."""
        passed = []
        for a, kind in zip(args, self.input_kinds):
            if kind == "tensor":
                passed.append(a)
            elif kind in _ELEMENT_CTYPES:
                if type(a) is not list or not all(_fits(x, kind[:-2]) for x in a):
                    return STATUS_ARGUMENT, []
                passed += [(_ELEMENT_CTYPES[kind] * len(a))(*a), len(a)]
            elif not _fits(a, kind):
                return STATUS_ARGUMENT, []
            else:
                passed.append(a)
        out = self._outputs()
        buffers = {}
        for f, kind, capacity in zip(self._names, self.output_kinds, self.output_capacities):
            if capacity is not None:
                buffers[f] = (_ELEMENT_CTYPES[kind] * max(capacity, 1))()
                getattr(out, f).data = ctypes.cast(buffers[f], ctypes.c_void_p)
        status = self._fn(*passed, ctypes.byref(out))
        if status:
            return status, []
        return 0, [buffers[f][:getattr(out, f).length] if f in buffers else getattr(out, f)
                   for f in self._names]
