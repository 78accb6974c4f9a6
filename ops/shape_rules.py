"""Shape and dtype rules for shape propagation: explicit rules for ops whose evaluation on
dummy data would be costly (matmul family, convolutions, pooling) or that only know ranks,
rules by tag (shape-preserving, broadcasting, reductions), and the zero-stride dummy arrays
that `evaluate` runs the other ops on. `attach` puts each rule on its registry entries."""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from .facts import has_tag
from .dtypes import promote_types
from .registry import all_entries
from .types import SCALAR_TYPES, TensorType

_MAX_DUMMY_NUMEL = 1 << 22


def contiguous_strides(sizes) -> tuple[int, ...]:
    strides, acc = [], 1
    for s in reversed(sizes):
        strides.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(strides))


def np_dtype(t: TensorType) -> Optional[np.dtype]:
    name = SCALAR_TYPES.get(t.scalar_type or "")
    return np.dtype(name) if name else None


def dummy(t: TensorType) -> Optional[np.ndarray]:
    """A read-only zero-stride array with the type's shape and dtype (no memory per element)."""
    sizes, dt = t.complete_sizes(), np_dtype(t)
    if sizes is None or dt is None or int(np.prod(sizes, dtype=np.int64)) > _MAX_DUMMY_NUMEL:
        return None
    return np.broadcast_to(np.zeros((), dt), sizes)


def broadcast_sizes(*shapes) -> Optional[tuple]:
    """Broadcast of shapes whose dimensions may be unknown (None)."""
    rank = max(len(s) for s in shapes)
    out = []
    for i in range(rank):
        dims = [s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0]
        known = [d for d in dims if d is not None and d != 1]
        if len(set(known)) > 1:
            return None
        if any(d is None for d in dims):
            out.append(known[0] if known else None)
        elif known:
            if len(set(known)) > 1:
                return None
            out.append(known[0])
        else:
            out.append(1)
    return tuple(out)


def _mm_like(kind: str, shapes: list) -> Optional[tuple]:
    if kind in ("aten::mm", "aten::matmul", "aten::bmm"):
        a, b = shapes[0], shapes[1]
    elif kind == "aten::addmm":
        a, b = shapes[1], shapes[2]
    elif kind == "aten::linear":
        a, w = shapes[0], shapes[1]
        return None if a is None or w is None else tuple(a[:-1]) + ((w[0],) if len(w) == 2 else ())
    else:
        return None
    if a is None or b is None:
        return None
    if len(a) == 1 and len(b) == 1:
        return ()
    if len(a) == 1:
        return tuple(b[:-2]) + (b[-1],)
    if len(b) == 1:
        return tuple(a[:-1])
    batch = broadcast_sizes(tuple(a[:-2]), tuple(b[:-2])) if len(a) > 2 or len(b) > 2 else ()
    return None if batch is None else tuple(batch) + (a[-2], b[-1])


def _window_out(size, k, s, p, d, ceil=False):
    if size is None:
        return None
    num = size + 2 * p - d * (k - 1) - 1
    out = (-(-num // s) if ceil else num // s) + 1
    if ceil and (out - 1) * s >= size + p:
        out -= 1
    return out


def _as_tuple(v, n):
    if isinstance(v, (list, tuple)):
        return tuple(v) if len(v) == n else tuple(v) * n if len(v) == 1 else tuple(v)
    return (v,) * n


_EXPLICIT: dict = {}


def _rule(*kinds: str):
    """Decorator: `fn(kind, shapes, values) -> sizes` is the explicit shape rule of `kinds`."""
    def wrap(fn):
        for k in kinds:
            _EXPLICIT[k] = fn
        return fn
    return wrap


_rule("aten::mm", "aten::matmul", "aten::bmm", "aten::addmm", "aten::linear")(
    lambda kind, shapes, values: _mm_like(kind, shapes))


@_rule("aten::conv1d", "aten::conv2d", "aten::conv3d")
def _conv(kind, shapes, values):
    x, w = shapes[0], shapes[1]
    if x is None or w is None:
        return None
    n = len(w) - 2
    stride, pad, dil = (_as_tuple(values[i] if len(values) > i else 1, n) for i in (3, 4, 5))
    if not all(isinstance(p, int) for p in pad):
        return None
    spatial = tuple(_window_out(x[-n + i], w[2 + i], stride[i], pad[i], dil[i]) for i in range(n))
    return tuple(x[:-n - 1]) + (w[0],) + spatial


@_rule("aten::max_pool1d", "aten::max_pool2d", "aten::max_pool3d",
       "aten::avg_pool1d", "aten::avg_pool2d", "aten::avg_pool3d")
def _pool(kind, shapes, values):
    x = shapes[0]
    if x is None:
        return None
    n = int(kind[-2])
    k = _as_tuple(values[1], n)
    s = _as_tuple(values[2], n) if values[2] not in (None, []) else k
    p = _as_tuple(values[3] if len(values) > 3 else 0, n)
    is_max = "max" in kind
    d = _as_tuple(values[4], n) if is_max and len(values) > 4 else (1,) * n
    ceil = bool(values[5] if is_max and len(values) > 5 else values[4] if not is_max and len(values) > 4 else False)
    return tuple(x[:-n]) + tuple(_window_out(x[-n + i], k[i], s[i], p[i], d[i], ceil) for i in range(n))


@_rule("aten::adaptive_avg_pool1d", "aten::adaptive_avg_pool2d", "aten::adaptive_avg_pool3d",
       "aten::adaptive_max_pool2d")
def _adaptive_pool(kind, shapes, values):
    x = shapes[0]
    if x is None:
        return None
    n = len(_as_tuple(values[1], 1)) if isinstance(values[1], (list, tuple)) else 1
    return tuple(x[:-n]) + tuple(_as_tuple(values[1], n))


def explicit_sizes(kind: str, shapes: list, values: list) -> Any:
    """Output sizes by an explicit rule, `NotImplemented` when there is no rule for `kind`."""
    rule = _EXPLICIT.get(kind)
    return NotImplemented if rule is None else rule(kind, shapes, values)


def symbolic_sizes(kind: str, shapes: list, values: list, tensor_args: list) -> Optional[tuple]:
    """Sizes from ranks and partial sizes (PyTorch's symbolic shape functions, for common ops)."""
    if has_tag(kind, "shape_preserving") and shapes and shapes[0] is not None:
        return tuple(shapes[0])
    if has_tag(kind, "broadcasting") and tensor_args:
        known = [shapes[i] for i in tensor_args]
        if all(s is not None for s in known):
            return broadcast_sizes(*[tuple(s) for s in known])
        return None
    if has_tag(kind, "full_reduction") and \
            (len(values) == 1 or (len(values) == 2 and not isinstance(values[1], (list, tuple)))):
        return ()  # reduction over everything (the second argument is a dtype)
    if has_tag(kind, "dim_reduction") and shapes[0] is not None:
        x = shapes[0]
        dims = values[1]
        keep = values[2] if len(values) > 2 else False
        if not isinstance(dims, (list, tuple)) or not isinstance(keep, bool):
            return None
        dims = {d % len(x) for d in dims} if dims else set(range(len(x)))
        return tuple(1 if i in dims else s for i, s in enumerate(x) if keep or i not in dims)
    r = explicit_sizes(kind, shapes, values)
    return None if r is NotImplemented else r


def result_dtype(kind: str, dtypes: list) -> np.dtype:
    """The dtype of a pointwise op's result from its tensor inputs' dtypes: promoted as PyTorch
    promotes, bool for comparisons and logical ops, float32 for ops that make integers floating."""
    dt = promote_types(*dtypes)
    if has_tag(kind, "comparison") or has_tag(kind, "logical"):
        return np.dtype(np.bool_)
    if has_tag(kind, "float_result") and dt.kind not in "fc":
        return np.dtype(np.float32)
    return dt


def attach() -> None:
    """Put the rules on the registry entries they apply to (`OpEntry.shape_rule/dtype_rule`)."""
    for entry in all_entries():
        kind = entry.schema.name
        if kind in _EXPLICIT:
            entry.shape_rule = _explicit_rule(kind)
        elif has_tag(kind, "pointwise") or has_tag(kind, "reduction"):
            entry.shape_rule = _symbolic_rule(kind)
        if has_tag(kind, "pointwise"):
            entry.dtype_rule = _dtype_rule(kind)


def _explicit_rule(kind):
    return lambda shapes, values: _EXPLICIT[kind](kind, shapes, values)


def _symbolic_rule(kind):
    def rule(shapes, values):
        return symbolic_sizes(kind, shapes, values, [i for i, s in enumerate(shapes) if s is not None])
    return rule


def _dtype_rule(kind):
    return lambda dtypes: result_dtype(kind, dtypes)
