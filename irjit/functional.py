"""The torch namespace's functions on irjit tensors: `irjit.tanh(x)`, `irjit.cat([a, b], 1)`,
`irjit.zeros(2, 3)`, ... one for every registered op that takes or gives a tensor, generated
from the op's schemas on first use (see `eager.op_function`)."""

from __future__ import annotations

from typing import Any

from . import eager
from .eager_dtypes import ALIASES


def __getattr__(name: str) -> Any:
    if name in ALIASES:
        return ALIASES[name]
    if name.startswith("__") or not eager.is_op(name):
        raise AttributeError(f"module 'irjit' has no attribute {name!r}")
    fn = eager.op_function(name)
    globals()[name] = fn
    return fn
