"""`prim::DifferentiableGraph` at run time, as PyTorch's DifferentiableGraphOp: run the
forward graph `f` on detached inputs, keep what the backward graph `df` needs, and hook a
backward node into the tape that runs `df` when gradients flow back.

The Gradient (from `compiler.autodiff.differentiate`) says how `f` and `df` connect:
`f_real_outputs` outputs of `f` are the node's results, the rest are captured intermediates;
`df` takes the vjps of `f`'s outputs listed in `df_input_vjps`, then the captured inputs
(`df_input_captured_inputs`) and captured outputs (`df_input_captured_outputs`), and returns
gradients for the inputs listed in `df_output_vjps`.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from irjit.runtime.autograd import GRAD_MODE, GradNode
from irjit.ops.tensor import Tensor

from .runnable_gradient import runnable_gradient


def _contiguous(g) -> np.ndarray:
    """A gradient in row-major layout: one layout per shape, so df's specialization (keyed
    by its inputs' layouts) does not depend on how the gradient was computed upstream."""
    g = np.asarray(g)
    return g if g.flags.c_contiguous else np.ascontiguousarray(g)  # (it makes 0-dim arrays 1-dim)


class _Schema:
    name = "prim::DifferentiableGraph"
    full_name = name


class _Backward:
    """One call's backward, the tape's entry for it (duck-types an OpEntry: `schema`,
    `derivative`): runs `df` on the vjps and what the forward call captured."""

    __slots__ = ("op", "outs", "captured")
    schema = _Schema()

    def __init__(self, op: "DifferentiableGraphOp", outs: list, captured: list):
        self.op, self.outs, self.captured = op, outs, captured

    def derivative(self, emitter, grads: list, saved_inputs, saved_outputs) -> list:
        op, outs = self.op, self.outs
        vjps = []
        for i in op.gradient.df_input_vjps:
            g = grads[i] if i < len(grads) else None
            if g is None:
                ref = outs[i]
                g = np.zeros(ref.data.shape, ref.data.dtype) if isinstance(ref, Tensor) else None
            vjps.append(Tensor(_contiguous(g)) if g is not None else None)
        enabled, GRAD_MODE.enabled = GRAD_MODE.enabled, False
        try:
            got = op.run_df(vjps + self.captured)
        finally:
            GRAD_MODE.enabled = enabled
        if len(got) == 1 and isinstance(got[0], tuple):  # df returns one tuple
            got = got[0]
        return [g.data if isinstance(g, Tensor) else None for g in got]


class DifferentiableGraphOp:
    """Runs one DifferentiableGraph node. `run_graph(graph, inputs)` executes `f` or `df`
    (through an executor of their own, so they are optimized and cached too). What every call
    reads off the Gradient is fixed when the op is made."""

    def __init__(self, gradient, run_graph: Callable[[Any, list], list]):
        self.gradient = grad = runnable_gradient(gradient)
        self.run_graph = run_graph
        self._n_real = grad.f_real_outputs
        self._differentiable = tuple(grad.df_output_vjps)
        self._captured_inputs = tuple(grad.df_input_captured_inputs)
        self._captured_outputs = tuple(grad.df_input_captured_outputs)

    def run_f(self, inputs: list) -> list:
        return self.run_graph(self.gradient.f, inputs)

    def run_df(self, inputs: list) -> list:
        return self.run_graph(self.gradient.df, inputs)

    def __call__(self, inputs: list) -> list:
        detached = [x.detach() if isinstance(x, Tensor) else x for x in inputs]
        enabled, GRAD_MODE.enabled = GRAD_MODE.enabled, False
        try:
            outs = self.run_f(detached)
        finally:
            GRAD_MODE.enabled = enabled
        real = outs[:self._n_real]
        edges = [x if isinstance(x, Tensor) and x.requires_grad else None
                 for x in (inputs[i] for i in self._differentiable)]
        if not enabled or all(e is None for e in edges):
            return list(real)
        captured = [detached[i] for i in self._captured_inputs]
        captured += [outs[i] for i in self._captured_outputs]
        # fresh tensor objects for the results: `f` may return (detached) inputs or aliases
        results = [Tensor(o.data, False, None, o._version)
                   if isinstance(o, Tensor) and o.dtype.kind == "f" else o for o in real]
        node = GradNode(_Backward(self, outs, captured), [],
                        [r.data if isinstance(r, Tensor) else r for r in results], edges,
                        "prim::DifferentiableGraph")
        for i, r in enumerate(results):
            if isinstance(r, Tensor) and r.dtype.kind == "f":
                r.requires_grad = True
                r.grad_fn = (node, i)
        return results
