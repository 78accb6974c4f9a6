"""The host's SIMD shape for hand-vectorized kernels (direct convolution, GEMM): how many
elements of a dtype one vector register holds and how many vector registers there are. Explicit
`<N x float>` IR of that width maps one-to-one onto the host's registers; on a host with
narrower vectors LLVM splits it, which stays correct."""

from __future__ import annotations

from functools import lru_cache

import llvmlite.binding as llvm
from llvmlite import ir

ELEMENT_TYPES = {"float32": ir.FloatType(), "float64": ir.DoubleType()}
_ALIGN = {"float": 4, "double": 8}


@lru_cache(maxsize=None)
def vector_bytes() -> int:
    """64 with AVX-512, 32 with AVX, else 16 (SSE2 is every x86-64's baseline)."""
    features = llvm.get_host_cpu_features()
    if features.get("avx512f"):
        return 64
    if features.get("avx"):
        return 32
    return 16


@lru_cache(maxsize=None)
def vector_registers() -> int:
    """Architectural vector registers: 32 with AVX-512, else 16."""
    return 32 if vector_bytes() == 64 else 16


def lanes(dtype: str) -> int:
    """Elements of `dtype` ("float32", "float64") in one vector register."""
    return vector_bytes() // {"float32": 4, "float64": 8}[dtype]


class _Uniform(ir.Constant):
    """A vector constant of one repeated value, printed in LLVM's short form (`zeroinitializer`,
    `undef`): llvmlite prints vectors element by element, and a tile's 16-lane zeros and
    splats were a fifth of a product unit's IR text (~86 KB), which Python prints and LLVM
    parses on every cold compile."""

    def __init__(self, vty: ir.VectorType, value, text: str):
        super().__init__(vty, value)
        self._text = text

    def _get_reference(self) -> str:
        return self._text


def zeros(vty: ir.VectorType) -> ir.Constant:
    """The vector of zeros of type `vty`."""
    return _Uniform(vty, [0] * vty.count if isinstance(vty.element, ir.IntType) else None, "zeroinitializer")


def undefined(vty: ir.VectorType) -> ir.Constant:
    return _Uniform(vty, ir.Undefined, "undef")


def splat(builder: ir.IRBuilder, value: ir.Value, count: int) -> ir.Value:
    """A vector of `count` copies of the scalar `value`."""
    vty = ir.VectorType(value.type, count)
    one = builder.insert_element(undefined(vty), value, ir.Constant(ir.IntType(32), 0))
    return builder.shuffle_vector(one, undefined(vty), zeros(ir.VectorType(ir.IntType(32), count)))


def load_vector(builder: ir.IRBuilder, ptr: ir.Value, ety: ir.Type, count: int) -> ir.Value:
    """`count` consecutive elements from `ptr` (element-aligned)."""
    vty = ir.VectorType(ety, count)
    return builder.load(builder.bitcast(ptr, vty.as_pointer()), align=_ALIGN[str(ety)], typ=vty)


def store_vector(builder: ir.IRBuilder, value: ir.Value, ptr: ir.Value) -> None:
    """Store a vector at `ptr` (element-aligned)."""
    builder.store(value, builder.bitcast(ptr, value.type.as_pointer()), align=_ALIGN[str(value.type.element)])


def even_lanes(builder: ir.IRBuilder, lo: ir.Value, hi: ir.Value) -> ir.Value:
    """Lanes 0, 2, 4, ... of the concatenation lo:hi (a stride-2 read of 2N elements)."""
    count = lo.type.count
    mask = ir.Constant(ir.VectorType(ir.IntType(32), count), list(range(0, 2 * count, 2)))
    return builder.shuffle_vector(lo, hi, mask)
