"""Tensor indexing as torch does it (`x[i]`, `x[:, 1:3]`, `x[None, ...]`, `x[mask]`,
`x[idx] = v`), lowered to the ops TorchScript emits for it: `aten::select`, `aten::slice`,
`aten::unsqueeze`, then `aten::index` / `aten::index_put_` for tensor indices, and
`aten::copy_` / `aten::fill_` into the view for assignments."""

from __future__ import annotations

from typing import Any

import numpy as np

from irjit.ops.tensor import Tensor
from irjit.runtime import autograd
from irjit.runtime.autograd import run_op

_INT64_MAX = 9223372036854775807


def _items(x: Tensor, index: Any) -> list:
    items = list(index) if isinstance(index, tuple) else [index]
    if sum(1 for i in items if i is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    return items


def _is_tensor_index(item: Any) -> bool:
    return isinstance(item, (Tensor, np.ndarray, list))


def _consumed(item: Any) -> int:
    """How many of the indexed tensor's dimensions an index item uses up."""
    if item is None or item is Ellipsis:
        return 0
    if _is_tensor_index(item):
        arr = item.data if isinstance(item, Tensor) else np.asarray(item)
        return arr.ndim if arr.dtype == np.bool_ else 1
    return 1


def _index_tensor(item: Any) -> Tensor:
    if isinstance(item, Tensor):
        return item
    arr = np.asarray(item)
    if arr.dtype.kind not in "iub":
        raise IndexError(f"tensors used as indices must be long, int or bool tensors (got {arr.dtype})")
    return Tensor(arr if arr.dtype == np.bool_ else arr.astype(np.int64))


def _basic(x: Tensor, index: Any) -> tuple[Tensor, list]:
    """`x` with the int, slice, None and ellipsis items applied (a view of `x`), and the tensor
    items per dimension of that view (None where the dimension is taken whole)."""
    items = _items(x, index)
    used = sum(_consumed(i) for i in items)
    if used > x.dim():
        raise IndexError(f"too many indices for tensor of dimension {x.dim()} (got {used})")
    out, dim, tensors = x, 0, []
    for item in items:
        if item is None:
            out = run_op("aten::unsqueeze", out, dim)
            tensors.append(None)
            dim += 1
        elif item is Ellipsis:
            skip = x.dim() - used
            tensors += [None] * skip
            dim += skip
        elif isinstance(item, bool):
            raise IndexError("indexing with a Python bool is not supported; use a bool tensor")
        elif isinstance(item, (int, np.integer)) or (isinstance(item, Tensor) and item.dim() == 0
                                                     and item.dtype.kind in "iu"):
            out = run_op("aten::select", out, dim, int(item.data if isinstance(item, Tensor) else item))
        elif isinstance(item, slice):
            tracing = autograd.TRACER[0] is not None
            if item != slice(None) or tracing:  # a trace records `:` too, as torch's does
                step = 1 if item.step is None else int(item.step)
                if step <= 0:
                    raise ValueError("step must be greater than zero")
                start, stop = item.start, item.stop
                if tracing:
                    start = 0 if start is None else start
                    stop = _INT64_MAX if stop is None else stop
                out = run_op("aten::slice", out, dim, start, stop, step)
            tensors.append(None)
            dim += 1
        elif _is_tensor_index(item):
            t = _index_tensor(item)
            tensors.append(t)
            n = t.dim() if t.dtype == np.bool_ else 1
            tensors += [None] * (n - 1)
            dim += n
        else:
            raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None and long or "
                             f"bool tensors are valid indices (got {type(item).__name__})")
    return out, tensors


def _trimmed(tensors: list) -> list:
    while tensors and tensors[-1] is None:
        tensors = tensors[:-1]
    return tensors


def getitem(x: Tensor, index: Any) -> Tensor:
    """`x[index]`: a view for ints, slices, None and ellipsis; a copy with tensor indices."""
    out, tensors = _basic(x, index)
    tensors = _trimmed(tensors)
    if not tensors:
        return out
    return run_op("aten::index", out, tensors)


def setitem(x: Tensor, index: Any, value: Any) -> None:
    """`x[index] = value`: written into `x` in place (recorded for autograd like torch)."""
    view, tensors = _basic(x, index)
    tensors = _trimmed(tensors)
    if tensors:
        v = value if isinstance(value, Tensor) else Tensor(np.asarray(value, dtype=x.dtype))
        run_op("aten::index_put_", view, tensors, v, False)
    elif isinstance(value, Tensor):
        run_op("aten::copy_", view, value, False)
    elif isinstance(value, np.ndarray):
        run_op("aten::copy_", view, Tensor(value.astype(x.dtype, copy=False)), False)
    else:
        run_op("aten::fill_", view, value)
