"""A compiled scalar program (scalar_program.py): its own code library, called through ctypes
with Python numbers and lists of them (arrays or None for tensor arguments), returning a status
and numbers and lists."""

from __future__ import annotations

import ctypes

from irjit.compiler.ir import Graph

from .entry import check_array_layout
from .library import CodeLibrary, new_module
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

    def __init__(self, graph: Graph, name: str = "program"):
        assert check_array_layout(), "numpy's array layout is not the one native entries read"
        self.name = name
        lowering = ProgramLowering(graph)
        module = new_module(name)
        lowering.emit(module, name)
        self.library = CodeLibrary(module)
        self.library.finalize()
        for global_name, address in lowering.addresses.items():
            ctypes.c_int64.from_address(self.library.global_address(global_name)).value = address
        self.input_kinds = lowering.input_kinds
        self.output_kinds = lowering.output_kinds
        self.output_capacities = lowering.output_capacities
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
