"""ArgumentSpec: the key of the legacy executor's plan cache, as in PyTorch's argument_spec.h.

Per tensor input: defined, dtype, rank, device and (only when grad mode is on) requires_grad;
non-tensor inputs do not take part. The spec also gives the input types a plan is compiled for.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from compiler.ir.types import DTYPE_TO_SCALAR_TYPE, TensorType, Type

from ..tensor import Tensor

TensorSpec = tuple[bool, Optional[str], Optional[int], bool]  # defined, dtype, rank, requires_grad


def argument_spec(inputs: Sequence[Any], grad_enabled: bool) -> tuple:
    specs = []
    for x in inputs:
        if isinstance(x, Tensor):
            specs.append((True, str(x.dtype), x.dim(), grad_enabled and bool(x.requires_grad)))
        elif x is None:
            specs.append((False, None, None, False))
        else:
            specs.append(None)
    return (grad_enabled, tuple(specs))


def specialized_type(declared: Type, spec: Optional[TensorSpec]) -> Type:
    """The input type a plan is compiled for: `Float(*, *, requires_grad=1, device=cpu)`."""
    if spec is None or not spec[0] or not isinstance(declared, (TensorType,)) and \
            "Tensor" not in str(declared):
        return declared
    _, dtype, rank, requires_grad = spec
    return TensorType(DTYPE_TO_SCALAR_TYPE.get(dtype), (None,) * rank, None, requires_grad, "cpu")


def needs_gradient(spec: tuple) -> bool:
    """Whether any input requires grad under grad mode (PyTorch's `needsGradient`)."""
    grad_enabled, specs = spec
    return grad_enabled and any(s is not None and s[3] for s in specs)
