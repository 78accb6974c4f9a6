"""A native unit: one group graph compiled to a guarded entry in its own code library, called
with numpy arrays (outputs allocated here) and returning a status instead of failing."""

from __future__ import annotations

import ctypes
import os
from typing import Optional, Union

import numpy as np

from irjit.compiler.ir import Graph

from .emit import STATUS_OUT_OF_BOUNDS, emit_convolution, emit_product
from .entry import check_array_layout, emit_entry
from .kernel import Convolution, Kernel
from .library import CodeLibrary, new_module
from .lower import LoweredGroup, lower_group
from .threads import emit_kernel_on_threads
from .view_outputs import ViewOutputs, ViewUnit


def bounds_checks_enabled() -> bool:
    """`IRJIT_NATIVE_CHECKS=1` compiles a bounds check into every load and store."""
    return os.environ.get("IRJIT_NATIVE_CHECKS", "") not in ("", "0")


class NativeUnit:
    """A compiled group: `call(arrays)` returns (status, outputs); status 0 means success."""

    def __init__(self, graph: Graph, name: str = "unit", bounds_checks: Optional[bool] = None,
                 lowered: Optional[LoweredGroup] = None):
        assert check_array_layout(), "numpy's array layout is not the one native entries read"
        self.name = name
        self.lowered = lowered if lowered is not None else lower_group(graph, f"{name}_kernel")
        self.kernel: Optional[Kernel] = self.lowered.kernel
        self.buffers = self.lowered.buffers
        self.bounds_checks = bounds_checks_enabled() if bounds_checks is None else bounds_checks
        module = new_module(name)
        fns = [(emit_convolution if isinstance(p, Convolution) else emit_product)(
                   module, f"{name}_product{i}", self.buffers, p)
               for i, p in enumerate(self.lowered.products)]
        if self.kernel is not None:
            fns.append(emit_kernel_on_threads(module, self.kernel, self.bounds_checks))
        addresses = emit_entry(module, name, self.buffers, fns)
        if self.lowered.products:
            from .blas import register_symbols
            register_symbols()
        self.library = CodeLibrary(module)
        self.library.finalize()
        for global_name, address in addresses.items():
            ctypes.c_int64.from_address(self.library.global_address(global_name)).value = address
        self.n_inputs = len(graph.inputs)
        self.views = ViewOutputs(self.lowered.views, self.n_inputs, self.lowered.results)
        self.aliases = self.views.aliases
        self.outputs = [b for b in self.buffers if b.is_output]  # outputs, then scratch
        proto = ctypes.CFUNCTYPE(ctypes.c_int32, *[ctypes.py_object] * len(self.buffers))
        self._fn = proto(self.library.address(name))

    @property
    def compile_ms(self) -> float:
        return self.library.compile_ms

    def call(self, args: list) -> tuple[int, list]:
        """Run on `args` (arrays; numbers for number inputs) into new output arrays."""
        args = [a if isinstance(a, np.ndarray) or not isinstance(a, (bool, int, float))
                else np.array(a, self.buffers[i].dtype) for i, a in enumerate(args)]
        offsets = self.views.offsets(args)
        if offsets is None:
            return STATUS_OUT_OF_BOUNDS, []
        outs = [np.empty(b.sizes, b.dtype) for b in self.outputs]
        status = self._fn(*args, *outs)
        if status:
            return status, []
        sizes = [self.buffers[self.n_inputs + j].sizes for j in range(len(self.lowered.results))]
        results = [None if i is None else outs[i - self.n_inputs].reshape(s)
                   for i, s in zip(self.lowered.results, sizes)]
        return 0, self.views.fill(results, offsets, args, outs)


def tensor_unit(graph: Graph, name: str = "unit") -> Union[NativeUnit, ViewUnit]:
    """The unit of a tensor group graph: a ViewUnit when every output is a view of an input
    (nothing to compile), else a NativeUnit."""
    lowered = lower_group(graph, f"{name}_kernel")
    if lowered.is_metadata_only:
        return ViewUnit(graph, lowered, name)
    return NativeUnit(graph, name, lowered=lowered)
