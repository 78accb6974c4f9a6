"""The kernel representation between a graph and LLVM IR: a loop nest over an iteration
space, loads from buffers at affine indices, a scalar expression DAG, reductions and stores.

The iteration space is `outer` axes followed by `inner` (reduced) axes. An access gives one
stride per axis, in elements (0 = broadcast), plus an offset, so views, broadcasting and
transposes are index arithmetic rather than copies. Expressions are frozen dataclasses:
equal expressions are one value (the emitter computes each once per loop level).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Union

import numpy as np


@dataclass(frozen=True)
class Buffer:
    """An array argument of the kernel with the exact layout its guard checks."""

    position: int  # argument index of the native entry
    dtype: np.dtype
    sizes: tuple[int, ...]
    strides: tuple[int, ...]  # in elements
    is_output: bool

    @property
    def extent(self) -> int:
        """Number of elements from the data pointer to one past the last one (bounds checks)."""
        if any(s == 0 for s in self.sizes):
            return 0
        return 1 + sum((n - 1) * s for n, s in zip(self.sizes, self.strides))


@dataclass(frozen=True)
class Index:
    """A run-time index: the int64 in 0-dim buffer `buffer`, negative ones counted from
    `size`; the kernel checks 0 <= index < size before anything reads through it."""

    buffer: int
    size: int


@dataclass(frozen=True)
class Access:
    """`buffer[offset + sum(i_k * strides[k]) + sum(index * stride for dynamic terms)]`
    over the kernel's axes (outer then inner)."""

    buffer: int
    strides: tuple[int, ...]
    offset: int = 0
    dynamic: tuple = ()  # (Index, stride) pairs
    clamped: tuple = ()  # ClampedAxis terms (a piece of a cat)


@dataclass(frozen=True)
class Load:
    access: Access
    dtype: np.dtype


@dataclass(frozen=True)
class Const:
    value: Union[int, float, bool]
    dtype: np.dtype


def _cached_hash(self) -> int:
    """The hash of a frozen expression, computed once: expressions are DAGs that share
    subexpressions, which a recursive hash would visit once per path."""
    h = self.__dict__.get("_hash")
    if h is None:
        h = hash((type(self).__name__,) + tuple(getattr(self, f) for f in self.__dataclass_fields__))
        object.__setattr__(self, "_hash", h)
    return h


@dataclass(frozen=True)
class Op:
    """A scalar operation: see `emit.SCALAR_OPS` for the names (math functions are `math.<f>`)."""

    name: str
    args: tuple
    dtype: np.dtype

    __hash__ = _cached_hash


@dataclass(frozen=True)
class Reduce:
    """`combine` ("sum", "max", "min") of `value` over the kernel's inner axes."""

    combine: str
    value: "Expr"
    dtype: np.dtype

    __hash__ = _cached_hash


Expr = Union[Load, Const, Op, Reduce, "Position", "CheckedIndex", "Gather"]


@dataclass(frozen=True)
class Store:
    """Write `value` at `access`; `inner` stores run in the inner loops (full shape), the
    others once per outer point."""

    access: Access
    value: Expr
    inner: bool = False


@dataclass(frozen=True)
class Operand:
    """A strided tensor operand of a product: buffer, sizes and strides (elements), offset."""

    buffer: int
    sizes: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int = 0
    dynamic: tuple = ()  # (Index, stride) pairs


@dataclass(frozen=True)
class Product:
    """`out = torch.matmul(a, b)` into contiguous buffer `out`, by `algorithm`: "blas" (BLAS or
    loop kernels through blas.py) or "tiled" (gemm_tiled.py; `scratch` holds packed panels)."""

    a: Operand
    b: Operand
    out: int
    dtype: np.dtype
    algorithm: str = "blas"
    scratch: Optional[int] = None
    # the group's element-wise loop nest, run on each tile of `out` (gemm_epilogue.py), and
    # `out` as it was (the product then writes no output of its own)
    epilogue: Optional["Kernel"] = field(default=None, compare=False)
    epilogue_input: Optional[Buffer] = field(default=None, compare=False)


CONVOLUTION_MODES = ("forward", "grad_input", "grad_weight")
CONVOLUTION_ALGORITHMS = ("im2col", "direct")


@dataclass(frozen=True)
class Convolution:
    """A convolution product of contiguous NCHW/OIHW buffers, by `mode`, for the convolution
    `shape` describes:
    "forward": out = conv2d(x, weight, bias);
    "grad_input": out = the input gradient for output gradient `grad` (conv_transpose2d(grad, weight));
    "grad_weight": out = the weight gradient for input `x` and output gradient `grad`;
    computed by `algorithm` (conv.py: "im2col" into buffer `scratch` + GEMM; conv_direct.py:
    "direct", from a zero-padded copy in `scratch`), as conv.conv_algorithm chose."""

    shape: object  # conv.Conv2dShape
    x: Optional[int]
    weight: Optional[int]
    bias: Optional[int]
    out: int
    scratch: Optional[int]
    dtype: np.dtype
    mode: str = "forward"
    grad: Optional[int] = None
    algorithm: str = "im2col"

    def __post_init__(self):
        assert self.mode in CONVOLUTION_MODES, self.mode
        assert self.algorithm in CONVOLUTION_ALGORITHMS, self.algorithm


@dataclass
class Kernel:
    name: str
    outer: tuple[int, ...]
    inner: tuple[int, ...] = ()
    buffers: list[Buffer] = field(default_factory=list)
    stores: list[Store] = field(default_factory=list)

    @property
    def rank(self) -> int:
        return len(self.outer) + len(self.inner)


def expr_children(e: Expr) -> tuple:
    if isinstance(e, Op):
        return e.args
    if isinstance(e, (Reduce, CheckedIndex)):
        return (e.value,)
    if isinstance(e, Gather):
        return (e.offset,)
    return ()


def walk(roots, into_reductions: bool = True) -> list:
    """Every distinct expression reachable from `roots`, each once (expressions are DAGs);
    without `into_reductions`, not those only a reduction's value reaches."""
    found: list = []
    seen: set = set()
    stack = list(roots)
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        found.append(e)
        if into_reductions or not isinstance(e, Reduce):
            stack.extend(expr_children(e))
    return found


def contains_reduce(e: Expr, seen: Optional[set] = None) -> bool:
    seen = set() if seen is None else seen
    if id(e) in seen:
        return False
    seen.add(id(e))
    return isinstance(e, Reduce) or any(contains_reduce(c, seen) for c in expr_children(e))


def dynamic_indices(kernel: Kernel) -> list[Index]:
    """Every run-time index the kernel's accesses use, in a fixed order."""
    found: dict = {}

    seen: set = set()

    def visit(e) -> None:
        if id(e) in seen:
            return
        seen.add(id(e))
        if isinstance(e, Load):
            for index, _ in e.access.dynamic:
                found.setdefault(index, None)
        for c in expr_children(e):
            visit(c)

    for st in kernel.stores:
        for index, _ in st.access.dynamic:
            found.setdefault(index, None)
        visit(st.value)
    return list(found)


# ---- data-dependent indexing: pooling windows, embedding, index_select, gather

@dataclass(frozen=True)
class Position:
    """The int64 loop index of kernel axis `axis`."""

    axis: int
    dtype: np.dtype = np.dtype(np.int64)


@dataclass(frozen=True)
class ClampedAxis:
    """An access term `clamp(i_axis - start, 0, size - 1) * stride`: a cat piece of `size`
    elements from `start` on along the axis, read in bounds wherever the loop is."""

    axis: int
    start: int
    size: int
    stride: int


@dataclass(frozen=True)
class CheckedIndex:
    """`value` (int64) as an index into a dimension of `size`: negative ones count from the end
    when `wrap`; any other value outside [0, size) makes the kernel return its out-of-bounds
    status before anything reads through it (the interpreter then raises the user's error)."""

    value: "Expr"
    size: int
    wrap: bool
    dtype: np.dtype = np.dtype(np.int64)

    __hash__ = _cached_hash


@dataclass(frozen=True)
class Gather:
    """`buffer[offset]` at a computed int64 element offset, in range by construction (made of
    clamped positions and CheckedIndex values)."""

    buffer: int
    offset: "Expr"
    dtype: np.dtype

    __hash__ = _cached_hash
