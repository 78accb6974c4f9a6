"""Binding Python call arguments (positional and keyword) to a registered op's schemas, the way
PyTorch's Python argument parser does: keywords by schema name, defaults, the implicit
int->float and bool->int conversions, `x.view(2, 3)` for one int list, dtypes as ScalarType
codes. The result is the argument list in schema order that `runtime.autograd.call_op` takes.
"""

from __future__ import annotations

import re
from typing import Any, Optional

import numpy as np

from irjit.ops.dtypes import CODE_OF_DTYPE
from irjit.ops.errors import IRTypeError
from irjit.ops.registry import NO_DEFAULT, OpEntry, _describe_key, _matches, _type_key, overloads
from irjit.ops.types import Device
from irjit.ops.tensor import Tensor
from irjit.runtime import autograd


class TracedInt(int):
    """An int argument given as a size tensor while tracing (`x.view(x.size(0), -1)`): the op
    computes with the int, the tracer records `aten::Int` of the tensor it came from."""

    def __new__(cls, tensor: Tensor):
        self = super().__new__(cls, int(tensor.data))
        self.tensor = tensor
        return self


class ArgumentError(IRTypeError, TypeError):
    """Arguments that no overload of an op accepts; names the op and its schemas."""


_DTYPE_TYPES = ("ScalarType", "ScalarType?")
_INT_TYPES = frozenset(("int", "int?", "SymInt", "SymInt?"))
# what torch's Python bindings pass for an omitted `device` / `pin_memory` of a factory function
_FACTORY_DEFAULTS = {"device": ("Device?", "cpu"), "pin_memory": ("bool?", False)}


def tensor_overloads(kind: str) -> list[OpEntry]:
    """The overloads of `kind` that take or return a tensor (the ones a torch user can call)."""
    return [e for e in overloads(kind) if not e.schema.variadic and any(
        "Tensor" in a.type for a in e.schema.arguments + e.schema.returns)]


def _dtype_code(v: Any) -> Any:
    """A dtype given as numpy dtype or type (`irjit.float32`, `np.int64`) as its ScalarType code."""
    if isinstance(v, (np.dtype, type)) and not isinstance(v, bool):
        try:
            return CODE_OF_DTYPE[np.dtype(v)]
        except (TypeError, KeyError):
            return v
    return v


def _list_sizes(entry: OpEntry) -> dict[str, int]:
    """The declared length of each fixed-size list argument (`int[2] stride` -> 2), which the
    registry's normalised types drop; a single int given for one is repeated that often."""
    sizes = entry.extras.get("eager_list_sizes")
    if sizes is None:
        sizes = entry.extras["eager_list_sizes"] = {
            m.group(2): int(m.group(1))
            for m in re.finditer(r"int\[(\d+)\]\??\s+([A-Za-z_][A-Za-z0-9_]*)", entry.schema.text)}
    return sizes


def _is_int_tensor(v: Any) -> bool:
    return isinstance(v, Tensor) and v.data.ndim == 0 and v.data.dtype.kind in "iu"


def _as_int(v: Any) -> Any:
    """A 0-dim integer tensor given for an int (torch takes those through `__index__`): a
    TracedInt while tracing, else its value."""
    if not _is_int_tensor(v):
        return v
    return TracedInt(v) if autograd.TRACER[0] is not None else int(v.data)


def _convert(v: Any, type_: str, size: int) -> Any:
    if type_ in _INT_TYPES:
        return _as_int(v)
    if type_.rstrip("?") in ("int[]", "SymInt[]"):
        if isinstance(v, (list, tuple)):
            return [_as_int(x) for x in v]
        if _is_int_tensor(v):  # one size given as a tensor
            return [_as_int(v)]
    if type_ in ("Device", "Device?") and isinstance(v, str):
        return Device(v)
    if type_ in _DTYPE_TYPES or (type_ == "int?" and isinstance(v, (np.dtype, type))):
        return _dtype_code(v)
    if isinstance(v, tuple) and type_.rstrip("?").endswith("[]"):
        return list(v)
    if type_.rstrip("?") in ("int[]", "SymInt[]") and isinstance(v, (int, np.integer)) \
            and not isinstance(v, bool):
        return [v if isinstance(v, TracedInt) else int(v)] * size
    if isinstance(v, np.ndarray) and type_.startswith("Tensor"):
        return Tensor(v)
    return v


def _bind(entry: OpEntry, args: tuple, kwargs: dict, loose: bool) -> Optional[list]:
    """`args`/`kwargs` in `entry`'s schema order, or None when they do not fit it."""
    params = entry.schema.arguments
    positional = [p for p in params if not p.kwarg_only]
    if len(args) > len(positional):
        return None
    bound = {p.name: v for p, v in zip(positional, args)}
    for name, v in kwargs.items():
        if name == "input" and params and params[0].name == "self" and "input" not in bound:
            name = "self"  # torch's functions call their first argument `input`
        if name in bound or all(p.name != name for p in params):
            return None
        bound[name] = v
    values, sizes = [], _list_sizes(entry)
    factory = entry.extras.get("eager_factory")
    if factory is None:  # a factory function (not a `Tensor self` method like zeros_like)
        factory = entry.extras["eager_factory"] = not (params and params[0].type == "Tensor")
    for p in params:
        if p.name in bound:
            v = _convert(bound[p.name], p.type, sizes.get(p.name, 1))
        elif p.default is not NO_DEFAULT:
            v = p.default
            if v is None and p.name in _FACTORY_DEFAULTS and p.type == _FACTORY_DEFAULTS[p.name][0] \
                    and (factory or p.name == "pin_memory"):
                v = _FACTORY_DEFAULTS[p.name][1]
                v = Device(v) if p.name == "device" else v
        else:
            return None
        if not _matches(_key(v), p.type, loose):
            return None
        values.append(v)
    return values


def _key(v: Any) -> Any:
    """The registry's type key, with sizes read from traced tensors as ints."""
    if isinstance(v, TracedInt):
        return int
    if isinstance(v, list) and v and isinstance(v[0], TracedInt):
        return ("L", int)
    return _type_key(v)


def _packed(entry: OpEntry, args: tuple) -> Optional[tuple]:
    """`x.view(2, 3)`, `zeros(2, 3)`, `einsum("ij,jk", a, b)`: the trailing positional arguments
    packed into the list argument they start at (as torch's parser and torch.einsum allow), or
    None when that does not apply."""
    for first, param in enumerate(entry.schema.arguments[:len(args)]):
        kind = _PACKABLE.get(param.type.rstrip("?"))
        if kind is None:
            continue
        rest = args[first:]
        if len(rest) < 2 or not all(_packable(v, kind, param.type.rstrip("?")) for v in rest):
            return None
        return tuple(args[:first]) + (list(rest),)
    return None


_PACKABLE = {"int[]": (int, np.integer), "SymInt[]": (int, np.integer), "Tensor[]": (Tensor,)}


def _packable(v: Any, kind: tuple, type_: str) -> bool:
    if isinstance(v, bool):
        return False
    return isinstance(v, kind) and not (type_ != "Tensor[]" and isinstance(v, Tensor)) or \
        (type_ != "Tensor[]" and _is_int_tensor(v))


_resolved: dict[tuple, tuple[OpEntry, bool, bool]] = {}


def resolve(kind: str, args: tuple, kwargs: dict, method: bool = False) -> tuple[OpEntry, list]:
    """The overload of `kind` these arguments select and the bound argument list; raises
    ArgumentError naming the op and the schemas it accepts. The choice is cached by the
    arguments' types, as the registry caches its own overload resolution."""
    key = (kind, tuple(_type_key(a) for a in args), tuple((k, _type_key(v)) for k, v in kwargs.items()))
    hit = _resolved.get(key)
    if hit is not None:
        entry, packed, loose = hit
        values = _bind(entry, _packed(entry, args) if packed else args, kwargs, loose)
        if values is not None:
            return entry, values
    candidates = tensor_overloads(kind)
    for loose in (False, True):
        for entry in candidates:
            values = _bind(entry, args, kwargs, loose)
            if values is not None:
                _resolved[key] = (entry, False, loose)
                return entry, values
    for entry in candidates:
        packed = _packed(entry, args)
        if packed is not None:
            values = _bind(entry, packed, kwargs, True)
            if values is not None:
                _resolved[key] = (entry, True, True)
                return entry, values
    if kind in _NUMBERS_AS_TENSORS:  # `x.sub_(2)`: the number as a 0-dim tensor, as torch does
        wrapped = tuple(_wrapped_number(a) for a in args)
        if any(w is not a for w, a in zip(wrapped, args)):
            return resolve(kind, wrapped, kwargs, method)
    raise ArgumentError(_mismatch(kind, args, kwargs, method, candidates))


# ops whose Python bindings take a Python number where the schema says Tensor
_NUMBERS_AS_TENSORS = frozenset(f"aten::{n}" for n in (
    "add", "add_", "sub", "sub_", "mul", "mul_", "div", "div_", "true_divide", "true_divide_",
    "floor_divide", "floor_divide_", "remainder", "remainder_", "fmod", "fmod_", "eq", "ne",
    "lt", "le", "gt", "ge", "__and__", "__or__", "__xor__", "bitwise_and", "bitwise_or",
    "bitwise_xor", "maximum", "minimum", "atan2", "pow", "where"))


def _wrapped_number(v: Any) -> Any:
    if isinstance(v, bool):
        return Tensor(np.array(v))
    if isinstance(v, (int, float)) and not isinstance(v, TracedInt):
        return Tensor(np.array(v, np.int64 if isinstance(v, int) else np.float64))
    return v


def _mismatch(kind: str, args: tuple, kwargs: dict, method: bool, candidates: list) -> str:
    shown = list(args[1:] if method else args)
    described = [_describe_key(_type_key(v)) for v in shown]
    described += [f"{k}={_describe_key(_type_key(v))}" for k, v in kwargs.items()]
    name = kind.split("::", 1)[1]
    call = f"Tensor.{name}" if method else name
    if not candidates:
        return f"{call}() is not an operator on tensors ({kind} has no tensor overload)"
    schemas = "\n  ".join(e.schema.text for e in candidates)
    return (f"{call}() received an invalid combination of arguments ({', '.join(described)}); "
            f"{kind} accepts:\n  {schemas}")
