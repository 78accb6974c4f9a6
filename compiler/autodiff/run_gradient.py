"""Execute a Gradient: `f` forward, then `df` given output gradients (for tests and executors)."""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from runtime.autograd import no_grad
from runtime.interpreter import Interpreter
from runtime.tensor import Tensor

from .gradient import Gradient


def run_forward(grad: Gradient, inputs: Sequence) -> list:
    """All outputs of `f` (real outputs then captured temporaries)."""
    with no_grad():
        return Interpreter(grad.f).run(list(inputs))


def run_backward(grad: Gradient, inputs: Sequence, f_outputs: Sequence,
                 output_grads: Sequence[Optional[np.ndarray]]) -> dict[int, np.ndarray]:
    """Input index -> gradient. Missing real-output gradients are zeros (PyTorch would pass an
    undefined tensor and skip the GradOf); temporaries' vjps are undefined (None)."""
    args = []
    for i in grad.df_input_vjps:
        if i < grad.f_real_outputs:
            g = output_grads[i]
            if g is None:
                g = np.zeros_like(np.asarray(f_outputs[i].data if isinstance(f_outputs[i], Tensor) else f_outputs[i]))
            args.append(Tensor(np.asarray(g)))
        else:
            args.append(None)
    args += [inputs[i] for i in grad.df_input_captured_inputs]
    args += [f_outputs[i] for i in grad.df_input_captured_outputs]
    with no_grad():
        (result,) = _interpreter(grad.df).run_block(grad.df.block, args, {})
    return {i: (g.data if isinstance(g, Tensor) else g) for i, g in zip(grad.df_output_vjps, result)}


def _interpreter(g) -> Interpreter:
    return Interpreter(g)
