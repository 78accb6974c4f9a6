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
    """The tape's entry for a DifferentiableGraphOp's calls (duck-types an OpEntry): runs
    `df` on the vjps and what a call captured (Tensors, or arrays when `f` ran on arrays),
    which its GradNode holds as `inputs`, its outputs' arrays as `outputs`."""

    __slots__ = ("op",)
    schema = _Schema()

    def __init__(self, op: "DifferentiableGraphOp"):
        self.op = op

    def derivative(self, emitter, grads: list, captured: list, outs: list) -> list:
        op = self.op
        vjps = []
        for i in op.gradient.df_input_vjps:
            g = grads[i] if i < len(grads) else None
            if g is None:
                ref = outs[i]
                g = np.zeros(ref.shape, ref.dtype) if isinstance(ref, np.ndarray) else None
            elif g.__class__ is not np.ndarray or not g.flags.c_contiguous:
                g = _contiguous(g)
            vjps.append(g)
        got = op.run(op.gradient.df, vjps + captured, arrays=True)
        if len(got) == 1 and isinstance(got[0], tuple):  # df returns one tuple
            got = got[0]
        return [g if g.__class__ is np.ndarray else g.data if isinstance(g, Tensor) else
                g if isinstance(g, np.ndarray) else None for g in got]


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
        self._entry = _Backward(self)
        self._run_f = self._arrays.get(id(grad.f))  # (f's run_arrays, or None)

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
        arrays = [x.data if isinstance(x, Tensor) else x for x in inputs]
        run_arrays = self._run_f
        outs = run_arrays(arrays) if run_arrays is not None else None
        if outs is None:  # (detached Tensors share the inputs' versions, as f may need)
            outs = self.run(self.gradient.f, inputs)
        real = outs[:self._n_real]
        edges, versions = [], []
        if GRAD_MODE.enabled:
            for i in self._differentiable:
                x = inputs[i]
                if isinstance(x, Tensor) and x.requires_grad:
                    edges.append(x)
                    versions.append((x, x._version[0]))
                else:
                    edges.append(None)
        if not versions:
            return [Tensor(o) if isinstance(o, np.ndarray) else o for o in real]
        captured = [arrays[i] for i in self._captured_inputs]
        if self._captured_outputs:
            captured += [outs[i] for i in self._captured_outputs]
        node = GradNode(self._entry, captured,
                        [o.data if isinstance(o, Tensor) else o for o in real], edges,
                        "prim::DifferentiableGraph", versions)
        # fresh tensor objects for the results: `f` may return (detached) inputs or aliases
        results = []
        for i, o in enumerate(real):
            if o.__class__ is np.ndarray:
                o = Tensor(o, o.dtype.kind == "f", (node, i) if o.dtype.kind == "f" else None)
            elif isinstance(o, Tensor):
                if o.dtype.kind == "f":
                    o = Tensor(o.data, True, (node, i), o._version)
            elif isinstance(o, np.ndarray):
                o = Tensor(o, o.dtype.kind == "f", (node, i) if o.dtype.kind == "f" else None)
            results.append(o)
        return results
