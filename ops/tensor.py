"""The interpreter's tensor: a numpy array plus what autograd needs (requires_grad, grad_fn,
grad, a version counter shared with views)."""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

_ndarray = np.ndarray  # (a global: `Tensor(...)` is on every call's path)


class Tensor:
    """A tensor value at run time. `data` is the numpy array; views share their base's
    `_version` box so in-place writes are seen by every alias, as in PyTorch. `grad` is the
    gradient autograd accumulated into a leaf, a Tensor as in torch."""

    __slots__ = ("data", "requires_grad", "grad_fn", "grad", "_version", "_base", "__weakref__")

    def __init__(self, data: Any, requires_grad: bool = False, grad_fn=None, version=None):
        self.data = data if data.__class__ is _ndarray or isinstance(data, _ndarray) else \
            np.asarray(data)
        self.requires_grad = requires_grad
        self.grad_fn = grad_fn
        self.grad: Optional["Tensor"] = None
        self._version = version if version is not None else [0]
        self._base: Optional["Tensor"] = None  # the tensor this one is a view of

    @property
    def dtype(self) -> np.dtype:
        return self.data.dtype

    @property
    def shape(self) -> tuple[int, ...]:
        return self.data.shape

    def dim(self) -> int:
        return self.data.ndim

    def numel(self) -> int:
        return int(self.data.size)

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    def numpy(self) -> np.ndarray:
        return self.data

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        """numpy sees the data (`np.asarray(t)`, `np.testing.assert_allclose(t.grad, ...)`)."""
        arr = self.data
        if dtype is not None and arr.dtype != np.dtype(dtype):
            return arr.astype(dtype)
        return arr.copy() if copy else arr

    def tolist(self) -> Any:
        return self.data.tolist()

    def detach(self) -> "Tensor":
        return Tensor(self.data, False, None, self._version)

    def bump_version(self) -> None:
        self._version[0] += 1

    @property
    def version(self) -> int:
        return self._version[0]

    def __repr__(self) -> str:
        rg = ", requires_grad=True" if self.requires_grad else ""
        return f"Tensor({self.data!r}{rg})"


def as_tensor(x: Any, requires_grad: bool = False) -> Tensor:
    if isinstance(x, Tensor):
        return x
    return Tensor(np.asarray(x), requires_grad)
