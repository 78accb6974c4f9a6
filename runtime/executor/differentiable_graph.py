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

from irjit.runtime.autograd import GradNode, is_grad_enabled, no_grad
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


class _BackwardEntry:
    """Duck-types an OpEntry for the tape: its `derivative` runs `df`."""

    schema = _Schema()

    def __init__(self, derivative: Callable):
        self.derivative = derivative


class DifferentiableGraphOp:
    """Runs one DifferentiableGraph node. `run_graph(graph, inputs)` executes `f` or `df`
    (through an executor of their own, so they are optimized and cached too)."""

    def __init__(self, gradient, run_graph: Callable[[Any, list], list]):
        self.gradient = runnable_gradient(gradient)
        self.run_graph = run_graph

    def __call__(self, inputs: list) -> list:
        grad = self.gradient
        detached = [x.detach() if isinstance(x, Tensor) else x for x in inputs]
        with no_grad():
            outs = self.run_graph(grad.f, detached)
        n_real = grad.f_real_outputs
        real = list(outs[:n_real])
        diff_inputs = [inputs[i] for i in grad.df_output_vjps]
        if not (is_grad_enabled() and any(isinstance(x, Tensor) and x.requires_grad
                                          for x in diff_inputs)):
            return real
        captured = [detached[i] for i in grad.df_input_captured_inputs] + \
                   [outs[i] for i in grad.df_input_captured_outputs]
        results = []
        for o in real:
            if isinstance(o, Tensor) and o.dtype.kind == "f":
                # a fresh tensor object: `f` may return (detached) inputs or aliases of them
                o = Tensor(o.data, False, None, o._version)
            results.append(o)

        def run_df(e, grads, saved_inputs, saved_outputs):
            vjps = []
            for i in grad.df_input_vjps:
                g = grads[i] if i < len(grads) else None
                ref = outs[i]
                if g is None:
                    g = np.zeros_like(ref.data) if isinstance(ref, Tensor) else None
                vjps.append(Tensor(_contiguous(g)) if g is not None else None)
            with no_grad():
                got = self.run_graph(grad.df, vjps + captured)
            if len(got) == 1 and isinstance(got[0], tuple):  # df returns one tuple
                got = list(got[0])
            return [g.data if isinstance(g, Tensor) else None for g in got]

        edges = [x if isinstance(x, Tensor) and x.requires_grad else None for x in diff_inputs]
        node = GradNode(_BackwardEntry(run_df), [], [r.data if isinstance(r, Tensor) else r
                                                     for r in results], edges,
                        "prim::DifferentiableGraph")
        for i, r in enumerate(results):
            if isinstance(r, Tensor) and r.dtype.kind == "f":
                r.requires_grad = True
                r.grad_fn = (node, i)
        return results
