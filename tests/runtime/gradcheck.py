"""Checking derivative formulas against central finite differences in float64."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from irjit.runtime.autograd import backward, call_op
from irjit.ops.registry import OpEntry, get
from irjit.ops.tensor import Tensor


def _float_tensor_positions(args: Sequence[Any]) -> list[tuple[int, int | None]]:
    pos = []
    for i, a in enumerate(args):
        if isinstance(a, np.ndarray) and a.dtype.kind == "f":
            pos.append((i, None))
        elif isinstance(a, list):
            pos += [(i, j) for j, x in enumerate(a) if isinstance(x, np.ndarray) and x.dtype.kind == "f"]
    return pos


def _flat_float_outputs(out: Any) -> list[Tensor]:
    if isinstance(out, Tensor):
        return [out] if out.dtype.kind == "f" else []
    if isinstance(out, (list, tuple)):
        return [t for o in out for t in _flat_float_outputs(o)]
    return []


def _run(entry: OpEntry, args: Sequence[Any], requires_grad: bool):
    def box(a):
        if isinstance(a, np.ndarray):
            return Tensor(a.copy(), requires_grad and a.dtype.kind == "f")
        if isinstance(a, list) and any(isinstance(x, np.ndarray) for x in a):
            return [box(x) for x in a]
        return a
    boxed = [box(a) for a in args]
    return boxed, call_op(entry, list(boxed))


def gradcheck(full_name: str, args: Sequence[Any], eps: float = 1e-6, atol: float = 1e-5,
              rtol: float = 1e-4, seed: int = 0) -> None:
    """Assert that the analytic gradient of op `full_name` at `args` (float64 arrays for the
    inputs to check) matches central differences of a random linear functional of its outputs."""
    entry = get(full_name)
    assert entry.derivative is not None, f"{full_name} has no derivative formula"
    rng = np.random.default_rng(seed)
    boxed, out = _run(entry, args, True)
    outs = _flat_float_outputs(out)
    assert outs, f"{full_name}: no floating-point outputs to check"
    weights = [rng.standard_normal(o.shape) for o in outs]
    inputs = []
    for i, j in _float_tensor_positions(args):
        inputs.append(boxed[i] if j is None else boxed[i][j])
    analytic = backward(outs, weights, inputs=inputs)

    def loss(perturbed):
        _, o = _run(entry, perturbed, False)
        return sum(float((w * t.data).sum()) for w, t in zip(weights, _flat_float_outputs(o)))

    for k, (i, j) in enumerate(_float_tensor_positions(args)):
        base = args[i] if j is None else args[i][j]
        numeric = np.zeros(base.shape)
        for idx in np.ndindex(base.shape):
            vals = []
            for sign in (1, -1):
                pert = [a.copy() if isinstance(a, np.ndarray) else
                        ([x.copy() if isinstance(x, np.ndarray) else x for x in a] if isinstance(a, list) else a)
                        for a in args]
                target = pert[i] if j is None else pert[i][j]
                target[idx] += sign * eps
                vals.append(loss(pert))
            numeric[idx] = (vals[0] - vals[1]) / (2 * eps)
        got = analytic[k] if analytic[k] is not None else np.zeros(base.shape)
        np.testing.assert_allclose(got, numeric, atol=atol, rtol=rtol,
                                   err_msg=f"{full_name}: gradient of input {i}{'' if j is None else f'[{j}]'}")
