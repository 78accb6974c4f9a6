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

from typing import Any, Callable, Optional

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
    """One call's backward, the tape's entry for it (duck-types an OpEntry): runs `df` on the
    vjps and what the forward call captured (Tensors, or arrays when `f` ran on arrays)."""

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
                ref = outs[i].data if isinstance(outs[i], Tensor) else outs[i]
                g = np.zeros(ref.shape, ref.dtype) if isinstance(ref, np.ndarray) else None
            vjps.append(_contiguous(g) if g is not None else None)
        got = op.run(op.gradient.df, vjps + self.captured, arrays=True)
        if len(got) == 1 and isinstance(got[0], tuple):  # df returns one tuple
            got = got[0]
        return [g.data if isinstance(g, Tensor) else g if isinstance(g, np.ndarray) else None
                for g in got]


class DifferentiableGraphOp:
    """Runs one DifferentiableGraph node. `run_graph(graph, inputs)` executes `f` or `df`
    (through an executor of their own, so they are optimized and cached too) on detached
    Tensors with grad mode off; `arrays_runner(graph)`, when given, is a function of `graph`'s
    executor tried first on the inputs' arrays as they are (an executor whose native plan
    takes them), returning None when it cannot. What every call reads off the Gradient is
    fixed when the op is made."""

    def __init__(self, gradient, run_graph: Callable[[Any, list], list],
                 arrays_runner: Optional[Callable[[Any], Optional[Callable]]] = None):
        self.gradient = grad = runnable_gradient(gradient)
        self.run_graph = run_graph
        self._arrays = {} if arrays_runner is None else {  # graph -> its executor's run_arrays
            id(g): arrays_runner(g) for g in (grad.f, grad.df)}
        self._n_real = grad.f_real_outputs
        self._differentiable = tuple(grad.df_output_vjps)
        self._captured_inputs = tuple(grad.df_input_captured_inputs)
        self._captured_outputs = tuple(grad.df_input_captured_outputs)

    def run(self, graph, values: list, arrays: bool = False) -> list:
        """`graph`'s outputs for `values` (Tensors, or arrays where tensors go: all of them
        with `arrays`): of the arrays when `run_arrays` takes them, else of detached Tensors
        with grad mode off."""
        run_arrays = self._arrays.get(id(graph))
        if run_arrays is not None:
            outs = run_arrays(values if arrays else
                              [x.data if isinstance(x, Tensor) else x for x in values])
            if outs is not None:
                return outs
        detached = [x.detach() if isinstance(x, Tensor) else Tensor(x) if isinstance(x, np.ndarray)
                    else x for x in values]
        enabled, GRAD_MODE.enabled = GRAD_MODE.enabled, False
        try:
            return self.run_graph(graph, detached)
        finally:
            GRAD_MODE.enabled = enabled

    def __call__(self, inputs: list) -> list:
        outs = self.run(self.gradient.f, inputs)
        real = outs[:self._n_real]
        edges = [x if isinstance(x, Tensor) and x.requires_grad else None
                 for x in (inputs[i] for i in self._differentiable)]
        if not GRAD_MODE.enabled or all(e is None for e in edges):
            return [Tensor(o) if isinstance(o, np.ndarray) else o for o in real]
        captured = [inputs[i].data if isinstance(inputs[i], Tensor) else inputs[i]
                    for i in self._captured_inputs]
        captured += [outs[i] for i in self._captured_outputs]
        # fresh tensor objects for the results: `f` may return (detached) inputs or aliases
        results = [Tensor(o.data, False, None, o._version)
                   if isinstance(o, Tensor) and o.dtype.kind == "f" else
                   Tensor(o) if isinstance(o, np.ndarray) else o for o in real]
        node = GradNode(_Backward(self, outs, captured), [],
                        [r.data if isinstance(r, Tensor) else r for r in results], edges,
                        "prim::DifferentiableGraph",
                        [(e, e._version[0]) for e in edges if e is not None])
        for i, r in enumerate(results):
            if isinstance(r, Tensor) and r.dtype.kind == "f":
                r.requires_grad = True
                r.grad_fn = (node, i)
        return results
