"""What Python arithmetic with a number on the left compiles to in TorchScript (the scalar
operators of PyTorch's builtin_functions.cpp), for derivative formulas that the symbolic
emitter spells as symbolic_script writes them: `1 - t` is `neg(t) + 1`, `2 * t` is `t * 2`,
`1. + t` is `t + 1.`, `s / t` is `reciprocal(t) * s`. The eager emitter computes the same
values, so a formula may use them on both paths."""

from __future__ import annotations

from typing import Any


def rsub(e, s: Any, t: Any) -> Any:
    """`s - t` for a number `s`."""
    return e.op("aten::add", e.op("aten::neg", t), s)


def rmul(e, s: Any, t: Any) -> Any:
    """`s * t` for a number `s`."""
    return e.op("aten::mul", t, s)


def radd(e, s: Any, t: Any) -> Any:
    """`s + t` for a number `s`."""
    return e.op("aten::add", t, s)


def rdiv(e, s: Any, t: Any) -> Any:
    """`s / t` for a number `s`."""
    return e.op("aten::mul", e.op("aten::reciprocal", t), s)
