"""Group outputs that are views: an output whose value is a strided window (offset, sizes,
strides fixed at specialization) of a group input or of a buffer the unit computes is handed
out as a numpy view of that array, so it shares memory with its base exactly as the
interpreter's view would. A run-time index (a select inside a loop) moves the window; it is
checked against its dimension first, and an out-of-range one is a bailout."""

from __future__ import annotations

from typing import Optional

import numpy as np

from irjit.compiler.ir import Graph
from irjit.ops.types import TensorType

from .emit import STATUS_OUT_OF_BOUNDS
from .kernel import Buffer
from .lower import LoweredGroup
from .scalar_emitter import View

# guard kinds of entry.GUARD_KINDS: a failed check returns `kind + 16 * argument`
_NOT_AN_ARRAY, _DTYPE, _RANK, _SIZE, _STRIDE = 1, 2, 3, 4, 5


class _Window:
    """The array interface of one view; the array made from it keeps `base` alive."""

    __slots__ = ("__array_interface__", "base")

    def __init__(self, interface: dict, base: np.ndarray):
        self.__array_interface__ = interface
        self.base = base


class ViewOutput:
    """One view output: its base buffer and, in bytes, its fixed offset, shape and strides (and
    per run-time index: the number input holding it, its dimension's size, its stride)."""

    def __init__(self, base: int, offset: int, dynamic, shape, strides, typestr: str):
        self.base, self.offset, self.typestr = base, offset, typestr
        self.dtype = np.dtype(typestr)
        self.dynamic = tuple(tuple(d) for d in dynamic)
        self.shape, self.strides = tuple(shape), tuple(strides)

    @classmethod
    def of_view(cls, view: View) -> "ViewOutput":
        itemsize = view.dtype.itemsize
        return cls(view.buffer, view.offset * itemsize,
                   [(index.buffer, index.size, stride * itemsize) for index, stride in view.dynamic],
                   view.sizes, [s * itemsize for s in view.strides], view.dtype.str)

    def state(self) -> list:
        """What rebuilds this view output (JSON: a disk-cached unit's metadata)."""
        return [self.base, self.offset, [list(d) for d in self.dynamic], list(self.shape),
                list(self.strides), self.typestr]

    def offset_of(self, args: list) -> Optional[int]:
        """The window's byte offset for these arguments; None when a run-time index is out
        of its dimension's range."""
        offset = self.offset
        for buffer, size, stride in self.dynamic:
            index = int(args[buffer])
            if not -size <= index < size:
                return None
            offset += (index % size) * stride
        return offset

    def array(self, base: np.ndarray, offset: int) -> np.ndarray:
        if offset == 0 and base.shape == self.shape and (base.strides == self.strides or all(
                n == 1 or a == b for n, a, b in zip(self.shape, base.strides, self.strides))):
            return base  # the op returned its input: the same array, as the interpreter's
        try:  # a window of the base's buffer (a contiguous base exports one): 8x faster
            return np.ndarray(self.shape, self.dtype, base, offset, self.strides)
        except (TypeError, ValueError):
            pass
        data, readonly = base.__array_interface__["data"]
        interface = {"version": 3, "typestr": self.typestr, "shape": self.shape,
                     "strides": self.strides, "data": (data + offset, readonly)}
        return np.asarray(_Window(interface, base))


class ViewOutputs:
    """The view outputs of a lowered group (by output index) and what each aliases."""

    def __init__(self, outputs: dict[int, ViewOutput], n_inputs: int, results: list[Optional[int]]):
        self.outputs = outputs
        self.n_inputs = n_inputs
        # per output: ("input", i) or ("output", k) for a view of input i or of the buffer
        # that output k is, else None
        self.aliases: list[Optional[tuple[str, int]]] = [None] * len(results)
        for j, v in outputs.items():
            if v.base < n_inputs:
                self.aliases[j] = ("input", v.base)
            elif v.base in results:
                self.aliases[j] = ("output", results.index(v.base))

    @classmethod
    def of_lowered(cls, views: dict[int, View], n_inputs: int, results: list) -> "ViewOutputs":
        return cls({j: ViewOutput.of_view(v) for j, v in views.items()}, n_inputs, results)

    @classmethod
    def from_state(cls, state: dict, n_inputs: int, results: list) -> "ViewOutputs":
        return cls({int(j): ViewOutput(*v) for j, v in state.items()}, n_inputs, results)

    def state(self) -> dict:
        return {str(j): v.state() for j, v in self.outputs.items()}

    def bases(self) -> set[int]:
        """The buffers view outputs are windows of (they escape the unit with them)."""
        return {v.base for v in self.outputs.values()}

    def offsets(self, args: list) -> Optional[dict[int, int]]:
        """Per view output its byte offset; None when a run-time index is out of range."""
        found = {}
        for j, out in self.outputs.items():
            offset = out.offset_of(args)
            if offset is None:
                return None
            found[j] = offset
        return found

    def fill(self, results: list, offsets: dict[int, int], args: list, scratch: list) -> list:
        """`results` with each view output made from its base (an argument, or a buffer the
        unit allocated: `scratch[k]` is buffer `n_inputs + k`)."""
        for j, out in self.outputs.items():
            base = args[out.base] if out.base < self.n_inputs else scratch[out.base - self.n_inputs]
            results[j] = out.array(base, offsets[j])
        return results


def check_inputs(buffers: list[Buffer], positions: list[int], args: list,
                 layouts: Optional[list] = None) -> int:
    """The checks a native entry makes of the tensor inputs at `positions` (type, dtype, rank,
    sizes, strides of dimensions longer than one), made in Python for a unit with no native
    code; 0 when every one has its specialized layout. `layouts` (per position: dtype, sizes,
    byte strides) answers an exact match without the checks one by one."""
    for k, i in enumerate(positions):
        buf, a = buffers[i], args[i]
        if layouts is not None and isinstance(a, np.ndarray) and \
                (a.dtype, a.shape, a.strides) == layouts[k]:
            continue
        if not isinstance(a, np.ndarray):
            return _NOT_AN_ARRAY + 16 * i
        if a.dtype != buf.dtype:
            return _DTYPE + 16 * i
        if a.ndim != len(buf.sizes):
            return _RANK + 16 * i
        if a.shape != buf.sizes:
            return _SIZE + 16 * i
        if any(n != 1 and s != st * a.itemsize for n, s, st in zip(a.shape, a.strides, buf.strides)):
            return _STRIDE + 16 * i
    return 0


class ViewUnit:
    """A group whose outputs are all views of its inputs: no code to compile; `call(args)`
    checks the inputs' layouts and returns (status, views)."""

    library = None  # nothing compiled
    compile_ms = 0.0

    def __init__(self, graph: Graph, lowered: LoweredGroup, name: str = "views"):
        self.name = name
        self.buffers = lowered.buffers
        self.tensors = [i for i, v in enumerate(graph.inputs) if isinstance(v.type, TensorType)]
        self._layouts = [(np.dtype(self.buffers[i].dtype), tuple(self.buffers[i].sizes),
                          tuple(s * self.buffers[i].dtype.itemsize for s in self.buffers[i].strides))
                         for i in self.tensors]
        self.views = ViewOutputs.of_lowered(lowered.views, len(graph.inputs), lowered.results)
        self.aliases = self.views.aliases

    def call(self, args: list) -> tuple[int, list]:
        status, views, _ = self.windows(args)
        return status, views

    def windows(self, args: list) -> tuple[int, list, Optional[dict[int, int]]]:
        """(status, the views, per output its byte offset in its base): `call` with where
        each view starts."""
        status = check_inputs(self.buffers, self.tensors, args, self._layouts)
        if status:
            return status, [], None
        offsets = self.views.offsets(args)
        if offsets is None:
            return STATUS_OUT_OF_BOUNDS, [], None
        return 0, self.views.fill([None] * len(self.aliases), offsets, args, []), offsets
