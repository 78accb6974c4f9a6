"""Derivative formulas evaluated on numpy arrays: the numeric counterpart of the symbolic
emitter, used by the tape autograd (see `registry.derivative`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .evaluate import evaluate


def sum_to(x: Any, shape: tuple) -> np.ndarray:
    """A broadcast gradient `x` reduced back to `shape` (summing the broadcast dimensions)."""
    shape = tuple(shape)
    x = np.asarray(x)
    if x.shape == shape:
        return x
    lead = x.ndim - len(shape)
    if lead > 0:
        x = x.sum(axis=tuple(range(lead)))
    axes = tuple(i for i, s in enumerate(shape) if s == 1 and x.shape[i] != 1)
    if axes:
        x = x.sum(axis=axes, keepdims=True)
    return x.reshape(shape)


class EagerEmitter:
    """Evaluates derivative formulas numerically (without recording)."""

    symbolic = False

    def op(self, kind: str, *args: Any) -> Any:
        return evaluate(kind, *args)

    def sum_to(self, x: np.ndarray, like: Any) -> np.ndarray:
        """Reduce a broadcast gradient back to the shape of `like` (an array or a shape)."""
        return sum_to(x, like.shape if isinstance(like, np.ndarray) else like)

    def is_tensor(self, x: Any) -> bool:
        return isinstance(x, np.ndarray)

    def shape(self, x: Any) -> tuple:
        return tuple(np.shape(x))

    def static_shape(self, x: Any) -> tuple:
        """Arrays always know their shape (the symbolic emitter may not)."""
        return tuple(np.shape(x))

    def size(self, x: Any) -> list:
        return list(np.shape(x))

    def zeros_like(self, x: Any) -> np.ndarray:
        return np.zeros_like(np.asarray(x))

    def ones_like(self, x: Any) -> np.ndarray:
        return np.ones_like(np.asarray(x))

    def const(self, v: Any) -> Any:
        return v

    def cast_like(self, x: Any, like: Any) -> np.ndarray:
        """`x` in the dtype of `like` (gradients take their input's dtype)."""
        return np.asarray(x).astype(np.asarray(like).dtype, copy=False)


EAGER = EagerEmitter()
