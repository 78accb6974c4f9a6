"""A native unit: one group graph compiled to a guarded entry in its own code library, called
with numpy arrays (outputs allocated here) and returning a status instead of failing."""

from __future__ import annotations

import ctypes
import gc
import json
import os
from contextlib import contextmanager
from typing import Optional, Union

import numpy as np

from irjit.compiler.ir import Graph
from irjit.ops.types import TensorType

from . import blas, entry, thread_pool, threads
from .emit import STATUS_OUT_OF_BOUNDS, emit_convolution, emit_product
from .entry import builtin_function, check_array_layout, process_address
from .entry_text import entries_text
from .gemm_tiled import share_plans
from .kernel import Buffer, Convolution, Kernel
from .library import CodeLibrary, load_library, new_module
from .lower import LoweredGroup, lower_group
from .threads import emit_kernel_on_threads
from .view_outputs import ViewOutputs, ViewUnit


def bounds_checks_enabled() -> bool:
    """`IRJIT_NATIVE_CHECKS=1` compiles a bounds check into every load and store."""
    return os.environ.get("IRJIT_NATIVE_CHECKS", "") not in ("", "0")


def _register_symbols(metadata: str) -> None:
    """What emitting a unit registers for the linker: the Python runtime functions its fast
    entry calls, the thread pool if it runs loops on threads (compiling the pool costs a
    process ~30 ms, so a process whose units run on one thread never builds it), and BLAS if
    the unit calls it."""
    meta = json.loads(metadata)
    if meta["threads"]:
        threads.register_symbols()
    entry.register_symbols()
    if meta["blas"]:
        blas.register_symbols()


@contextmanager
def collector_paused():
    """Python's cyclic garbage collector off while a unit is compiled: the tens of thousands of
    llvmlite objects of its module live until it is compiled, so young collections promoted
    them all to the oldest generation, whose growth then set off full collections of the
    process's heap (40-55 ms in one of lstm2's units, tools/bench_compile.py's gc column).
    Off, they are garbage before a collection sees them and go with a young one.
    `cache.get_unit` keeps it off while it makes any unit (lowering it, or linking it from the
    disk cache): a full collection, which a bench process's heap makes 14-42 ms here whatever
    the unit, otherwise fell inside whichever unit's allocations set it off; one that is due
    then runs at the first allocation after the unit instead."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


GIL_WORK = 1 << 15  # estimated work (kernel_work, or a product's multiply-adds) worth releasing the GIL for


def _releases_gil(kernel: Optional[Kernel], products: list) -> bool:
    """Whether the entry releases the GIL while its kernels run (as a ctypes call would), so
    other threads run meanwhile: when they do enough work that releasing it costs little."""
    work = threads.kernel_work(kernel) if kernel is not None else 0
    for p in products:
        if isinstance(p, Convolution):
            return True
        work += int(np.prod(p.a.sizes, dtype=np.int64)) * int(p.b.sizes[-1])
    return work >= GIL_WORK


class NativeUnit:
    """A compiled group: `call(arrays)` returns (status, outputs); status 0 means success."""

    def __init__(self, graph: Graph, name: str = "unit", bounds_checks: Optional[bool] = None,
                 cache_key: Optional[str] = None, lowered: Optional[LoweredGroup] = None,
                 loaded: Optional[tuple] = None):
        """Compile `graph` (or its `lowered` form); with `cache_key` (what the unit is made from:
        its graph's structural hash and specialization, the code generator's version, the host),
        a unit the disk cache holds under that key (or `loaded` from it) is used instead,
        without lowering or emitting anything."""
        assert check_array_layout(), "numpy's array layout is not the one native entries read"
        self.name = name
        self.bounds_checks = bounds_checks_enabled() if bounds_checks is None else bounds_checks
        self.kernel: Optional[Kernel] = None  # the loop nest, when compiled in this process
        self.n_inputs = len(graph.inputs)
        if loaded is None and lowered is None and cache_key is not None:
            loaded = load_library(name, cache_key, _register_symbols)
        if loaded is not None:
            self.library, metadata = loaded
            addresses = self._read_metadata(metadata)
        else:
            addresses = self._compile(graph, cache_key, lowered)
        for global_name, address in addresses.items():
            ctypes.c_int64.from_address(self.library.global_address(global_name)).value = address
        self.aliases = self.views.aliases
        self.outputs = [b for b in self.buffers if b.is_output]  # outputs, then scratch
        # the entry as a builtin: `_fn(*arrays)` returns the status (see entry.emit_fast_entry)
        self.fast_address = self.library.address(f"{name}_fast")  # (its METH_FASTCALL function)
        self._fn, self._fn_definition = builtin_function(name, self.fast_address)
        self._plan_calls(graph)

    def _compile(self, graph: Graph, cache_key: Optional[str],
                 lowered: Optional[LoweredGroup]) -> dict[str, int]:
        """Lower, emit and finalize; returns the globals to fill in (name -> address)."""
        with collector_paused():
            return self._compile_now(graph, cache_key, lowered)

    def _compile_now(self, graph: Graph, cache_key: Optional[str],
                     lowered: Optional[LoweredGroup]) -> dict[str, int]:
        name = self.name
        if lowered is None:
            lowered = lower_group(graph, f"{name}_kernel")
        self.kernel = lowered.kernel
        self.buffers, self.results = lowered.buffers, lowered.results
        self.views = ViewOutputs.of_lowered(lowered.views, self.n_inputs, self.results)
        module = new_module(name)
        share_plans(module, lowered.products)
        fns = [emit_convolution(module, f"{name}_product{i}", self.buffers, p) if isinstance(p, Convolution)
               else emit_product(module, f"{name}_product{i}", self.buffers, p, self.bounds_checks)
               for i, p in enumerate(lowered.products)]
        if self.kernel is not None:
            fns.append(emit_kernel_on_threads(module, self.kernel, self.bounds_checks))
        entries, addresses = entries_text(module, name, self.buffers, fns,
                                          _releases_gil(self.kernel, lowered.products))
        entry.register_symbols()
        if lowered.products:
            blas.register_symbols()
        self.library = CodeLibrary(module, more_ir=entries)
        threaded = thread_pool.SYMBOL in module.globals
        self.library.finalize(cache_key, None if cache_key is None else
                              self._metadata(addresses, bool(lowered.products), threaded))
        return addresses

    def _metadata(self, addresses: dict[str, int], products: bool, threaded: bool) -> str:
        """What rebuilds this unit from its object code: buffers, results, the globals to fill
        in (by the `process_address` each holds), whether it calls BLAS and the thread pool."""
        return json.dumps({
            "buffers": [[b.dtype.str, list(b.sizes), list(b.strides), b.is_output] for b in self.buffers],
            "results": self.results,
            "views": self.views.state(),
            "globals": sorted(addresses),
            "blas": products,
            "threads": threaded})

    def _read_metadata(self, text: str) -> dict[str, int]:
        meta = json.loads(text)
        self.buffers = [Buffer(i, np.dtype(d), tuple(sizes), tuple(strides), out)
                        for i, (d, sizes, strides, out) in enumerate(meta["buffers"])]
        self.results = meta["results"]
        self.views = ViewOutputs.from_state(meta["views"], self.n_inputs, self.results)
        return {name: process_address(name.rsplit(".", 1)[1]) for name in meta["globals"]}

    def _plan_calls(self, graph: Graph) -> None:
        """Precompute what every call needs: which inputs are numbers (passed as 0-dim arrays),
        each output array's sizes and dtype, per result its array (reshaped when the result is
        a product's scratch of other sizes), and the scratch arrays no result hands out."""
        n_in = self.n_inputs
        self._numbers = [(i, self.buffers[i].dtype) for i, v in enumerate(graph.inputs)
                         if not isinstance(v.type, TensorType)]
        self._specs = [(b.sizes, b.dtype) for b in self.outputs]
        self.result_buffers: list[tuple[int, Optional[tuple]]] = []  # (output array, reshape)
        for j, i in enumerate(self.results):
            if i is None:  # a view output: made from its base after the call
                self.result_buffers.append((None, None))
                continue
            sizes = self.buffers[n_in + j].sizes
            self.result_buffers.append((i - n_in, None if self.buffers[i].sizes == sizes else sizes))
        returned = {k for k, _ in self.result_buffers} | {
            base - n_in for base in self.views.bases() if base >= n_in}  # views hand these out
        self.private = tuple(k for k in range(len(self.outputs)) if k not in returned)
        self._spare: list[dict] = []  # private arrays of finished calls, for the next ones

    @property
    def compile_ms(self) -> float:
        return self.library.compile_ms

    def new_arrays(self, positions) -> dict:
        """Fresh arrays for the output buffers at `positions` (indices into `outputs`)."""
        return {k: np.empty(*self._specs[k]) for k in positions}

    def call(self, args: list, arrays: Optional[dict] = None) -> tuple[int, list]:
        """Run on `args` (arrays; numbers for number inputs) into new output arrays, except
        those `arrays` supplies (output buffer index -> an array the caller owns). Private
        scratch arrays are reused across calls: no result is ever one of them."""
        if self._numbers:
            args = list(args)
            for i, dtype in self._numbers:
                if isinstance(args[i], (bool, int, float)):
                    args[i] = np.array(args[i], dtype)
        offsets = self.views.offsets(args) if self.views.outputs else None
        if offsets is None and self.views.outputs:
            return STATUS_OUT_OF_BOUNDS, []
        spare = None
        if arrays is None and self.private:
            try:
                spare = self._spare.pop()
            except IndexError:
                spare = self.new_arrays(self.private)
            arrays = spare
        specs = self._specs
        outs = [np.empty(*specs[k]) for k in range(len(specs))] if arrays is None else [
            arrays[k] if k in arrays else np.empty(*specs[k]) for k in range(len(specs))]
        status = self._fn(*args, *outs)
        if spare is not None:
            self._spare.append(spare)
        if status:
            return status, []
        results = [None if k is None else outs[k] if sizes is None else outs[k].reshape(sizes)
                   for k, sizes in self.result_buffers]
        return 0, self.views.fill(results, offsets, args, outs) if self.views.outputs else results


def tensor_unit(graph: Graph, name: str = "unit", cache_key: Optional[str] = None
                ) -> Union[NativeUnit, ViewUnit]:
    """The unit of a tensor group graph: loaded from the disk cache under `cache_key` when it
    holds one (nothing lowered), a ViewUnit when every output is a view of an input (nothing to
    compile), else a NativeUnit compiled now."""
    loaded = load_library(name, cache_key, _register_symbols) if cache_key is not None else None
    if loaded is not None:
        return NativeUnit(graph, name, cache_key=cache_key, loaded=loaded)
    lowered = lower_group(graph, f"{name}_kernel")
    if lowered.is_metadata_only:
        return ViewUnit(graph, lowered, name)
    return NativeUnit(graph, name, cache_key=cache_key, lowered=lowered)
