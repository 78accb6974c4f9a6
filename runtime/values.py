"""Converting between run-time values and the arrays of `.npz` files, following the
fixture conventions: inputs `arg0, arg1, ...`; outputs flattened into `out0, out1, ...`."""

from __future__ import annotations

from typing import Any

import numpy as np

from irjit.ops.types import ListType, NamedType, OptionalType, TensorType, TupleType, Type

from irjit.ops.errors import IRTypeError
from irjit.ops.tensor import Tensor


def from_array(a: np.ndarray, t: Type, requires_grad: bool = False) -> Any:
    """The run-time value of type `t` that an npz array stands for."""
    if isinstance(t, OptionalType):
        t = t.elem
    if isinstance(t, TensorType) or t is None:
        return Tensor(np.array(a), requires_grad and a.dtype.kind == "f")
    if isinstance(t, NamedType):
        if t.name in ("int", "float", "bool"):
            return _scalar(a, t.name)
        if t.name in ("str", "string"):
            return str(a)
    if isinstance(t, ListType):
        if isinstance(t.elem, TensorType):
            return [Tensor(np.array(x)) for x in a]
        conv = {"int": int, "float": float, "bool": bool, "str": str}.get(getattr(t.elem, "name", ""), lambda x: x)
        return [conv(x) for x in np.asarray(a).reshape(-1)]
    if isinstance(t, TupleType):
        return tuple(from_array(x, et) for x, et in zip(a, t.elems))
    if a.ndim == 0:
        return a.item()
    return Tensor(np.array(a))


# array kinds a scalar of each type may come from without losing information
_SCALAR_KINDS = {"int": "iub", "float": "fiub", "bool": "b"}
_ARTICLE = {"int": "an", "float": "a", "bool": "a"}


def _scalar(a: np.ndarray, name: str) -> Any:
    """An `int`, `float` or `bool` from a one-element array; a complex (or, for `int`, a
    floating-point) array is an error rather than a silent cast."""
    a = np.asarray(a)
    if a.size != 1:
        raise IRTypeError(f"expected {_ARTICLE[name]} {name}, got an array of shape {list(a.shape)}")
    if a.dtype.kind not in _SCALAR_KINDS[name]:
        raise IRTypeError(f"expected {_ARTICLE[name]} {name}, got a value of dtype {a.dtype}")
    return {"int": int, "float": float, "bool": bool}[name](a.reshape(()).item())


def flatten_value(v: Any, path: str = "<root>") -> list[tuple[str, Any]]:
    """(path, leaf) pairs as the fixtures flatten outputs: tuples and lists of tensors element
    by element, dicts by value in insertion order, lists of scalars/strings as one leaf."""
    if isinstance(v, tuple):
        out = []
        for i, x in enumerate(v):
            out += flatten_value(x, f"[{i}]" if path == "<root>" else f"{path}[{i}]")
        return out
    if isinstance(v, list) and any(isinstance(x, (Tensor, list, tuple, dict)) for x in v):
        out = []
        for i, x in enumerate(v):
            out += flatten_value(x, f"[{i}]" if path == "<root>" else f"{path}[{i}]")
        return out
    if isinstance(v, dict):
        out = []
        for k, x in v.items():
            out += flatten_value(x, f"[{k!r}]" if path == "<root>" else f"{path}[{k!r}]")
        return out
    return [(path, v)]


def leaves(v: Any) -> list:
    """The leaves of `flatten_value(tuple(v))` (for a list of outputs), without their paths."""
    out: list = []
    for x in v:  # (tensors, and tuples of them, without recursion: a graph's usual outputs)
        if x.__class__ is Tensor:
            out.append(x)
        elif x.__class__ is tuple:
            for e in x:
                if e.__class__ is not Tensor:
                    _collect_leaves(x, out)
                    break
            else:
                out.extend(x)
        else:
            _collect_leaves(x, out)
    return out


def _collect_leaves(v: Any, out: list) -> None:
    if isinstance(v, tuple) or isinstance(v, list) and any(
            isinstance(x, (Tensor, list, tuple, dict)) for x in v):
        for x in v:
            _collect_leaves(x, out)
    elif isinstance(v, dict):
        for x in v.values():
            _collect_leaves(x, out)
    else:
        out.append(v)


def to_numpy(v: Any) -> np.ndarray:
    """A leaf of a flattened output as an array (tensors as their data, scalars 0-d)."""
    if isinstance(v, Tensor):
        return v.data
    if isinstance(v, bool):
        return np.array(v, dtype=np.bool_)
    if isinstance(v, int):
        return np.array(v, dtype=np.int64)
    if isinstance(v, float):
        return np.array(v, dtype=np.float64)
    if v is None:
        return np.array(np.nan)
    if isinstance(v, list):
        return np.array(v)
    return np.asarray(v)


def to_python(v: Any) -> Any:
    """A run-time value with tensors replaced by their numpy arrays (for API results)."""
    if isinstance(v, Tensor):
        return v.data
    if isinstance(v, tuple):
        return tuple(to_python(x) for x in v)
    if isinstance(v, list):
        return [to_python(x) for x in v]
    if isinstance(v, dict):
        return {k: to_python(x) for k, x in v.items()}
    return v
