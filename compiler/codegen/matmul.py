"""`torch.matmul` (and bmm/mm) for generated code as batched GEMMs: `matmul_layout` maps the
operands' shapes and strides to batch dims with per-operand batch strides (stride 0 where a dim
broadcasts), `emit_batched_gemm` loops `blas.emit_gemm` over them, `emit_matmul` does both."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence, Union

from llvmlite import ir

from .blas import DEFAULT, SMALL_GEMM_VOLUME, BlasLibrary, Matrix, emit_gemm
from .ir_loops import element, for_range, i64


def emit_batched_gemm(builder: ir.IRBuilder, dtype: str, batch: Sequence, m, n, k,
                      a: Matrix, a_batch_strides: Sequence, b: Matrix, b_batch_strides: Sequence,
                      c: Matrix, c_batch_strides: Sequence, alpha=1, beta=0,
                      scratch: Optional[ir.Value] = None,
                      library: Union[BlasLibrary, None, str] = DEFAULT,
                      small_volume: int = SMALL_GEMM_VOLUME) -> None:
    """Emit one `emit_gemm` per index of the `batch` dims; operand pointers advance by their
    batch strides (elements; 0 repeats an operand across a broadcast dim)."""
    def nest(dim: int, a_off, b_off, c_off):
        if dim == len(batch):
            at = lambda mat, off: Matrix(element(builder, mat.ptr, off), mat.row_stride, mat.col_stride)
            emit_gemm(builder, dtype, m, n, k, at(a, a_off), at(b, b_off), at(c, c_off),
                      alpha, beta, scratch, library, small_volume)
            return
        with for_range(builder, 0, batch[dim], name=f"batch{dim}") as i:
            step = lambda off, strides: builder.add(off, builder.mul(i, i64(strides[dim])))
            nest(dim + 1, step(a_off, a_batch_strides), step(b_off, b_batch_strides),
                 step(c_off, c_batch_strides))
    nest(0, i64(0), i64(0), i64(0))


def emit_matmul(builder: ir.IRBuilder, dtype: str, a: ir.Value, a_shape: Sequence[int],
                a_strides: Sequence[int], b: ir.Value, b_shape: Sequence[int],
                b_strides: Sequence[int], out: ir.Value, scratch: Optional[ir.Value] = None,
                library: Union[BlasLibrary, None, str] = DEFAULT) -> "MatmulLayout":
    """Emit `out = torch.matmul(a, b)` into a contiguous `out` (strides in elements); returns the
    layout, whose `out_shape` is the result's shape."""
    layout = matmul_layout(a_shape, a_strides, b_shape, b_strides)
    nb = len(layout.batch)
    emit_batched_gemm(builder, dtype, layout.batch, layout.m, layout.n, layout.k,
                      Matrix(a, *layout.a_strides[nb:]), layout.a_strides[:nb],
                      Matrix(b, *layout.b_strides[nb:]), layout.b_strides[:nb],
                      Matrix(out, *layout.c_strides[nb:]), layout.c_strides[:nb],
                      scratch=scratch, library=library)
    return layout


@dataclass(frozen=True)
class MatmulLayout:
    """How `torch.matmul(a, b)` maps onto batched GEMMs (strides in elements; C contiguous)."""
    out_shape: tuple[int, ...]
    batch: tuple[int, ...]
    m: int
    n: int
    k: int
    a_strides: tuple[int, ...]  # batch strides..., row stride, column stride
    b_strides: tuple[int, ...]
    c_strides: tuple[int, ...]


def matmul_layout(a_shape: Sequence[int], a_strides: Sequence[int],
                  b_shape: Sequence[int], b_strides: Sequence[int]) -> MatmulLayout:
    """`torch.matmul`'s semantics as a batched GEMM: a 1-D left operand is a row, a 1-D right
    operand a column (that dim is dropped from the result), batch dims broadcast."""
    if not a_shape or not b_shape:
        raise ValueError("both arguments to matmul need to be at least 1D, but they are "
                         f"{len(a_shape)}D and {len(b_shape)}D")
    a_1d, b_1d = len(a_shape) == 1, len(b_shape) == 1
    a_shape, a_strides = ([1] if a_1d else []) + list(a_shape), ([0] if a_1d else []) + list(a_strides)
    b_shape, b_strides = list(b_shape) + ([1] if b_1d else []), list(b_strides) + ([0] if b_1d else [])
    (m, ka), (kb, n) = a_shape[-2:], b_shape[-2:]
    if ka != kb:
        raise ValueError(f"matmul: size mismatch, got input ({m}x{ka}), mat2 ({kb}x{n})")
    nb = max(len(a_shape), len(b_shape)) - 2
    batch, a_batch, b_batch = [], [], []
    for i in range(-nb, 0):
        sa, sb = _dim(a_shape, i - 2), _dim(b_shape, i - 2)
        if sa != sb and 1 not in (sa, sb):
            raise ValueError(f"matmul: the batch dims {tuple(a_shape[:-2])} and "
                             f"{tuple(b_shape[:-2])} do not broadcast")
        size = sa if sb == 1 else sb
        batch.append(size)
        # an operand's size-1 (or missing) dim repeats across the broadcast one
        a_batch.append(a_strides[i - 2] if sa == size and len(a_shape) >= 2 - i else 0)
        b_batch.append(b_strides[i - 2] if sb == size and len(b_shape) >= 2 - i else 0)
    c_strides, size = [], 1
    for d in reversed(batch + [m, n]):
        c_strides.insert(0, size)
        size *= d
    out_shape = tuple(batch) + (() if a_1d else (m,)) + (() if b_1d else (n,))
    return MatmulLayout(out_shape, tuple(batch), m, n, ka, tuple(a_batch + a_strides[-2:]),
                        tuple(b_batch + b_strides[-2:]), tuple(c_strides))


def _dim(shape: list[int], i: int) -> int:
    return shape[i] if len(shape) >= -i else 1
