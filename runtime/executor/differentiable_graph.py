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

from .counters import last_executed_optimized_graph, record_last_executed
from .runnable_gradient import runnable_gradient


def _contiguous(g) -> np.ndarray:
    """A gradient in row-major layout: one layout per shape, so df's specialization (keyed
    by its inputs' layouts) does not depend on how the gradient was computed upstream."""
    g = np.asarray(g)
    return g if g.flags.c_contiguous else np.ascontiguousarray(g)  # (it makes 0-dim arrays 1-dim)


class _Schema:
    name = "prim::DifferentiableGraph"
    full_name = name


def _array(g):
    if isinstance(g, list):  # a `Tensor[]` input's gradient
        return [_array(x) for x in g]
    return g.data if isinstance(g, Tensor) else g if isinstance(g, np.ndarray) else None


def _zeros_like(ref):
    ref = ref.data if isinstance(ref, Tensor) else ref
    return np.zeros(ref.shape, ref.dtype) if isinstance(ref, np.ndarray) else None


class _Backward:
    """One call's backward, the tape's entry for it (duck-types an OpEntry): runs `df` on the
    vjps and what the forward call captured (Tensors, or arrays when `f` ran on arrays). The
    tape's gradients come flat, one per tensor result; `lengths[i]` is the length of real
    output i when it is a `Tensor[]` (its vjp is a list, zeros where none came), else None."""

    __slots__ = ("op", "outs", "captured", "lengths")
    schema = _Schema()

    def __init__(self, op: "DifferentiableGraphOp", outs: list, captured: list,
                 lengths: Optional[list] = None):
        self.op, self.outs, self.captured, self.lengths = op, outs, captured, lengths

    def derivative(self, emitter, grads: list, saved_inputs, saved_outputs) -> list:
        op, outs, lengths = self.op, self.outs, self.lengths
        if lengths is not None:  # regroup the flat gradients of `Tensor[]` results
            grouped, k = [], 0
            for n in lengths:
                grouped.append(grads[k] if n is None else grads[k:k + n])
                k += 1 if n is None else n
            grads = grouped
        vjps = []
        for i in op.gradient.df_input_vjps:
            g = grads[i] if i < len(grads) else None
            if isinstance(g, list):
                vjps.append([_contiguous(x) if x is not None else _zeros_like(o)
                             for x, o in zip(g, outs[i])])
                continue
            if g is None:
                g = _zeros_like(outs[i])
            vjps.append(_contiguous(g) if g is not None else None)
        ran = last_executed_optimized_graph()
        got = op.run(op.gradient.df, vjps + self.captured, arrays=True)
        record_last_executed(ran)  # the graph the latest (forward) call ran stays the one shown
        if len(got) == 1 and isinstance(got[0], tuple):  # df returns one tuple
            got = got[0]
        return [_array(g) for g in got]


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
        detached = [_detached(x) for x in values]
        enabled, GRAD_MODE.enabled = GRAD_MODE.enabled, False
        try:
            return self.run_graph(graph, detached)
        finally:
            GRAD_MODE.enabled = enabled

    def __call__(self, inputs: list) -> list:
        outs = self.run(self.gradient.f, inputs)
        real = outs[:self._n_real]
        edges = [x if isinstance(x, Tensor) and x.requires_grad else
                 list(x) if isinstance(x, list) and any(_needs_grad(t) for t in x) else None
                 for x in (inputs[i] for i in self._differentiable)]
        if not GRAD_MODE.enabled or all(e is None for e in edges):
            return [_result(o) for o in real]
        captured = [inputs[i].data if isinstance(inputs[i], Tensor) else inputs[i]
                    for i in self._captured_inputs]
        captured += [outs[i] for i in self._captured_outputs]
        # fresh tensor objects for the results: `f` may return (detached) inputs or aliases
        results = [[_fresh(t) for t in o] if isinstance(o, list) else _fresh(o) for o in real]
        lists = any(isinstance(r, list) for r in results)
        flat = [t for r in results for t in (r if isinstance(r, list) else [r])] if lists else results
        node = GradNode(_Backward(self, outs, captured,
                                  [len(r) if isinstance(r, list) else None for r in results] if lists else None),
                        [], [r.data if isinstance(r, Tensor) else r for r in flat], edges,
                        "prim::DifferentiableGraph")
        for i, r in enumerate(flat):
            if isinstance(r, Tensor) and r.dtype.kind == "f":
                r.requires_grad = True
                r.grad_fn = (node, i)
        return results


def _needs_grad(x) -> bool:
    return isinstance(x, Tensor) and x.requires_grad


def _detached(x):
    if isinstance(x, Tensor):
        return x.detach()
    if isinstance(x, np.ndarray):
        return Tensor(x)
    if isinstance(x, list) and x and isinstance(x[0], (Tensor, np.ndarray)):  # a `Tensor[]`
        return [_detached(t) for t in x]
    return x


def _result(o):
    """A result of a call that records no gradient."""
    if isinstance(o, np.ndarray):
        return Tensor(o)
    if isinstance(o, list):
        return [Tensor(t) if isinstance(t, np.ndarray) else t for t in o]
    return o


def _fresh(o):
    """A result's own tensor object (floating point ones will carry the node's grad_fn)."""
    if isinstance(o, Tensor) and o.dtype.kind == "f":
        return Tensor(o.data, False, None, o._version)
    return Tensor(o) if isinstance(o, np.ndarray) else o
