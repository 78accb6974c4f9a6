"""Execute a Gradient: `f` forward, then `df` given output gradients (for tests and executors)."""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from irjit.compiler.autodiff.gradient import Gradient
from irjit.ops.tensor import Tensor

from .autograd import no_grad
from .interpreter import Interpreter


def run_forward(grad: Gradient, inputs: Sequence) -> list:
    """All outputs of `f` (real outputs then captured temporaries)."""
    with no_grad():
        return Interpreter(grad.f).run(list(inputs))


def _vjp(g: Any, out: Any) -> Any:
    """A real output's vjp: zeros when missing (for a `Tensor[]` output, per element)."""
    if isinstance(out, list):
        gs = g if g is not None else [None] * len(out)
        return [_vjp(x, o) for x, o in zip(gs, out)]
    if g is None:
        g = np.zeros_like(np.asarray(out.data if isinstance(out, Tensor) else out))
    return Tensor(np.asarray(g))


def _result(g: Any) -> Any:
    if isinstance(g, list):
        return [_result(x) for x in g]
    return g.data if isinstance(g, Tensor) else g


def run_backward(grad: Gradient, inputs: Sequence, f_outputs: Sequence,
                 output_grads: Sequence[Optional[np.ndarray]]) -> dict[int, np.ndarray]:
    """Input index -> gradient. Missing real-output gradients are zeros (PyTorch would pass an
    undefined tensor and skip the GradOf); temporaries' vjps are undefined (None). A `Tensor[]`
    output takes a list of gradients, and a `Tensor[]` input gets one (None where undefined)."""
    args = []
    for i in grad.df_input_vjps:
        if i < grad.f_real_outputs:
            args.append(_vjp(output_grads[i], f_outputs[i]))
        else:
            args.append(None)
    args += [inputs[i] for i in grad.df_input_captured_inputs]
    args += [f_outputs[i] for i in grad.df_input_captured_outputs]
    with no_grad():
        (result,) = _interpreter(grad.df).run_block(grad.df.block, args, {})
    return {i: _result(g) for i, g in zip(grad.df_output_vjps, result)}


def _interpreter(g) -> Interpreter:
    return Interpreter(g)
