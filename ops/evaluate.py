"""Tape-free evaluation of registered ops on plain values (numpy arrays and Python values), for
constant folding, shape and dtype propagation and numeric derivative formulas.

Overloads are resolved as the interpreter resolves them (`registry.find_op`), and results come
back as the interpreter would see them, minus the `Tensor` wrapper: tensor outputs are numpy
arrays, numpy scalars in non-tensor outputs are Python numbers.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .registry import OpEntry, find_op, with_defaults
from .tensor import Tensor


def _plain(v: Any, type_: str) -> Any:
    if type_ in ("Tensor", "Tensor?"):
        return None if v is None else np.asarray(v)
    if type_ in ("Tensor[]", "Tensor?[]"):
        return [None if x is None else np.asarray(x) for x in v]
    if isinstance(v, np.generic):
        return v.item()
    return v


def unwrap(v: Any) -> Any:
    """A run-time Tensor (or list of them) as its array: evaluation never records a tape."""
    if isinstance(v, Tensor):
        return v.data
    if isinstance(v, list):
        return [x.data if isinstance(x, Tensor) else x for x in v]
    return v


def evaluate_entry(entry: OpEntry, args: list) -> Any:
    """`entry`'s implementation on `args` (omitted trailing arguments take their defaults): one
    value, a tuple for several returns, None for none. An in-place op writes into its first
    argument and returns it, as at run time."""
    schema = entry.schema
    if schema.variadic:
        return entry.impl(*args)
    args = [unwrap(a) for a in with_defaults(entry, list(args))]
    out = entry.impl(*args)
    if schema.is_inplace:  # the result is `self`, written in its own dtype
        if out is not args[0] and out is not None:
            args[0][...] = out
        return args[0]
    rets = schema.returns
    if not rets:
        return None
    if len(rets) == 1 and (rets[0].alias or "").endswith("!"):
        return out  # the (mutated) container it was given
    if len(rets) == 1:
        return _plain(out, rets[0].type)
    return tuple(_plain(o, r.type) for o, r in zip(out, rets))


def evaluate(kind: str, *args: Any) -> Any:
    """Resolve `kind` (`aten::add`) for these argument values and evaluate it."""
    return evaluate_entry(find_op(kind, list(args)), list(args))
