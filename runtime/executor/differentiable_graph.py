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

from typing import Any, Callable, Optional, Sequence

import numpy as np

from irjit.runtime.autograd import GRAD_MODE, GradNode, fixed_vjps, is_broadcast, vjp_array
from irjit.ops.tensor import Tensor
from irjit.ops.types import NamedType, TensorType

from .runnable_gradient import runnable_gradient

_ndarray = np.ndarray  # (a global: cheaper than the module attribute)


def _array(g):
    if isinstance(g, list):  # a `Tensor[]` input's gradient
        return [_array(x) for x in g]
    return g.data if isinstance(g, Tensor) else g if isinstance(g, np.ndarray) else None


def _zeros_like(ref):
    ref = ref.data if isinstance(ref, Tensor) else ref
    return np.zeros(ref.shape, ref.dtype) if isinstance(ref, np.ndarray) else None


def _regroup(flat: list, lengths: list) -> list:
    """Flat per-tensor values regrouped by result: `lengths[i]` elements for a `Tensor[]`
    result (None for a tensor)."""
    grouped, k = [], 0
    for n in lengths:
        grouped.append(flat[k] if n is None else flat[k:k + n])
        k += 1 if n is None else n
    return grouped


class _Schema:
    name = "prim::DifferentiableGraph"
    full_name = name


class _Backward:
    """The tape's entry for a DifferentiableGraphOp's calls (duck-types an OpEntry): runs
    `df` on the vjps and what a call captured (Tensors, or arrays when `f` ran on arrays),
    which its GradNode holds as `inputs`, its outputs' arrays as `outputs`. The tape's
    gradients and outputs come flat, one per tensor result; a call with `Tensor[]` results
    gets an entry of its own whose `lengths[i]` is the length of real output i when it is a
    list (its vjp is a list, zeros where none came), else None."""

    __slots__ = ("op", "lengths", "one_node")
    schema = _Schema()
    takes_broadcast_seed = True  # (`vjp_array`: a seed of ones may stay one broadcast element)

    def __init__(self, op: "DifferentiableGraphOp", lengths: Optional[list] = None):
        self.op, self.lengths = op, lengths
        self.one_node: dict = {}  # (`autograd.backward_of_sums`: seeds, edges' positions)

    def derivative(self, emitter, grads: list, captured: list, outs: list) -> list:
        op = self.op
        if self.lengths is not None:
            grads, outs = _regroup(grads, self.lengths), _regroup(outs, self.lengths)
        vjps = []
        for i in op.gradient.df_input_vjps:
            g = grads[i] if i < len(grads) else None
            if g is None:
                g = _zeros_like(outs[i])
            elif isinstance(g, list):
                g = [vjp_array(x) if x is not None else _zeros_like(o) for x, o in zip(g, outs[i])]
            elif g.__class__ is not np.ndarray or not g.flags.c_contiguous and not is_broadcast(g):
                g = vjp_array(g)
            vjps.append(g)
        return self._df(vjps + captured)

    def _df(self, values: list) -> list:
        """df's outputs for its inputs `values` (vjps, then captures), as arrays."""
        op = self.op
        runner = op._df_runner  # (df's executor's raw_call, tried first: `run` without its lookup)
        got = runner.raw_call(values) if runner is not None else None
        if got is None:
            got = op.run(op.gradient.df, values, arrays=True)  # (df's executor does not
        # record itself as last executed: the forward's graph stays the one shown)
        return _df_arrays(got)

    def derivative_lines(self, grads: list, captured: str, got: str, name: Callable[[str, Any], str],
                         local: Callable[[str], str]) -> Optional[list[str]]:
        """`derivative` for these gradients of the outputs, always the same (a sums plan's
        seeds, none missing, no `Tensor[]` output), inline in the sums plan: lines assigning
        `got` df's outputs for what a call captured (the expression `captured`), the vjps
        made once (its gradients are arrays, or Tensors the sums plan unwraps); None for
        other gradients. `name(prefix, obj)` names an object, `local(prefix)` a fresh local."""
        if self.lengths is not None:
            return None
        vjps = fixed_vjps(grads, self.op.gradient.df_input_vjps)
        if vjps is None:
            return None
        values = local("values")
        runner = self.op._df_runner  # (df's executor's raw_call, tried first)
        lines = [f"{values} = {name('VJPS', vjps)} + {captured}"]
        if runner is None:
            return lines + [f"{got} = {name('DF', self._df)}({values})"]
        return lines + [f"{got} = {name('DF', runner)}.raw_call({values})",
                        f"if {got} is None:",
                        f"    {got} = {name('DF', self._df)}({values})",
                        f"elif len({got}) == 1 and isinstance({got}[0], tuple):",
                        f"    {got} = {got}[0]"]


def _df_arrays(got) -> Sequence:
    """df's outputs as arrays (one tuple returned is its elements; arrays, as df's array
    program returns them, pass as they are)."""
    if len(got) == 1 and isinstance(got[0], tuple):  # df returns one tuple
        got = got[0]
    for g in got:
        if g.__class__ is not np.ndarray:
            return [g if g.__class__ is np.ndarray else _array(g) for g in got]
    return got


class DifferentiableGraphOp:
    """Runs one DifferentiableGraph node. `run_graph(graph, inputs)` executes `f` or `df`
    (through an executor of their own, so they are optimized and cached too) on detached
    Tensors with grad mode off; `arrays_runner(graph)`, when given, is `graph`'s executor if
    its `raw_call(arrays)` is to be tried first on the inputs' arrays as they are (it returns
    None when its native plan does not take them; an executor makes that call faster once
    it has run, so it is read per call). What every call reads off the Gradient is
    fixed when the op is made."""

    def __init__(self, gradient, run_graph: Callable[[Any, list], list],
                 arrays_runner: Optional[Callable[[Any], Optional[Callable]]] = None):
        self.gradient = grad = runnable_gradient(gradient)
        self.run_graph = run_graph
        self._arrays = {} if arrays_runner is None else {  # graph -> its executor (raw_call)
            id(g): arrays_runner(g) for g in (grad.f, grad.df)}
        self._n_real = grad.f_real_outputs
        self._differentiable = tuple(grad.df_output_vjps)
        self._captured_inputs = tuple(grad.df_input_captured_inputs)
        self._captured_outputs = tuple(grad.df_input_captured_outputs)
        self._entry = _Backward(self)
        self._f_runner = self._arrays.get(id(grad.f))  # (f's executor, or None)
        self._df_runner = self._arrays.get(id(grad.df))  # (df's)
        # `op(inputs)` as one generated function, for ops whose f takes arrays: what a
        # plan's program calls
        self.step = _tensors_step(self) if self._f_runner is not None else self.__call__
        self._private_step: Optional[Callable] = None

    def private_step(self) -> Callable[[list], list]:
        """`step` for inputs that are Tensors no one else holds (a training program's own
        leaves) and that nothing writes after the call: it records no versions to check."""
        if self._private_step is None:
            self._private_step = _tensors_step(self, record_versions=False) \
                if self._f_runner is not None else self.step
        return self._private_step

    def leaf_lines(self, requires: tuple[bool, ...], inputs: Sequence[str], arrays: Sequence[str],
                   results: Sequence[str], name: Callable[[str, Any], str],
                   local: Callable[[str], str]) -> Optional[list[str]]:
        """`private_step` under grad mode, inline in a training program (`_leaf_lines`): lines
        assigning `results` for the Tensors named `inputs` whose arrays the program holds
        (`arrays`; `requires`: whether each requires grad), without looking at the inputs;
        None when f takes no arrays or its inputs or results are not all tensors and numbers.
        `name(prefix, obj)` gives the program's name of an object, `local(prefix)` a fresh
        local."""
        if not self.inlines_leaves:
            return None
        return _leaf_lines(self, requires, inputs, arrays, results, name, local)

    @property
    def inlines_leaves(self) -> bool:
        """Whether `leaf_lines` gives lines: f takes arrays, its inputs are tensors and values
        without tensors, its real outputs tensors."""
        return self._f_runner is not None and _plain_signature(self)

    def run(self, graph, values: list, arrays: bool = False) -> list:
        """`graph`'s outputs for `values` (Tensors, or arrays where tensors go: all of them
        with `arrays`): of the arrays when `run_arrays` takes them, else of detached Tensors
        with grad mode off."""
        runner = self._arrays.get(id(graph))
        if runner is not None:
            outs = runner.raw_call(values if arrays else
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
        arrays = [x.data if isinstance(x, Tensor) else x for x in inputs]
        runner = self._f_runner
        outs = runner.raw_call(arrays) if runner is not None else None
        if outs is None:  # (detached Tensors share the inputs' versions, as f may need)
            outs = self.run(self.gradient.f, inputs)
        return self._record(inputs, arrays, outs)

    def _record(self, inputs: list, arrays: list, outs: list) -> list:
        """The call's results for f's outputs `outs`, its tape node recorded when an input
        requires grad under grad mode."""
        real = outs[:self._n_real]
        edges, versions = [], []
        if GRAD_MODE.enabled:
            for i in self._differentiable:
                x = inputs[i]
                if isinstance(x, Tensor) and x.requires_grad:
                    edges.append(x)
                    versions.append((x, x._version[0]))
                elif isinstance(x, list) and any(_needs_grad(t) for t in x):  # a `Tensor[]`
                    edges.append(list(x))
                    versions += [(t, t._version[0]) for t in x if isinstance(t, Tensor)]
                else:
                    edges.append(None)
        if not versions:
            return [_result(o) for o in real]
        captured = [arrays[i] for i in self._captured_inputs]
        if self._captured_outputs:
            captured += [outs[i] for i in self._captured_outputs]
        for o in real:  # (a loop: cheaper than any() of a generator)
            if isinstance(o, list):
                return self._record_with_lists(real, captured, edges, versions)
        node = GradNode(self._entry, captured,
                        [o.data if isinstance(o, Tensor) else o for o in real], edges,
                        "prim::DifferentiableGraph", versions)
        # fresh tensor objects for the results: `f` may return (detached) inputs or aliases
        results = []
        for i, o in enumerate(real):
            if o.__class__ is _ndarray:
                o = Tensor(o, o.dtype.kind == "f", (node, i) if o.dtype.kind == "f" else None)
            elif isinstance(o, Tensor):
                if o.dtype.kind == "f":
                    o = Tensor(o.data, True, (node, i), o._version)
            elif isinstance(o, np.ndarray):
                o = Tensor(o, o.dtype.kind == "f", (node, i) if o.dtype.kind == "f" else None)
            results.append(o)
        return results

    def _record_with_lists(self, real: list, captured: list, edges: list, versions: list) -> list:
        """The tape node of a call with `Tensor[]` results: one tape output per tensor."""
        results = [[_fresh(t) for t in o] if isinstance(o, list) else _fresh(o) for o in real]
        flat = [t for r in results for t in (r if isinstance(r, list) else [r])]
        lengths = [len(r) if isinstance(r, list) else None for r in results]
        node = GradNode(_Backward(self, lengths), captured,
                        [r.data if isinstance(r, Tensor) else r for r in flat], edges,
                        "prim::DifferentiableGraph", versions)
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


def _tensors_step(op: DifferentiableGraphOp, record_versions: bool = True) -> Callable:
    """`op(inputs)` as one generated function (the inputs unpacked, f's outputs, edges,
    captures and results spelled out, no loops) for calls whose tensor inputs are Tensors
    and whose f's array program returns an array for each real output; any other call
    (a list input or output, a Tensor output, f's program refusing) takes the op's own
    path from where it differs. Ops with a `Tensor[]` input or output take it always.
    Without `record_versions` the node records no versions (see `private_step`)."""
    if not _plain_signature(op):
        return op.__call__
    inputs = op.gradient.f.inputs
    n = len(inputs)
    tensors = [i for i, v in enumerate(inputs) if isinstance(v.type, TensorType)]
    a = [f"a{i}" for i in range(n)]
    d = [f"d{i}" if i in tensors else f"a{i}" for i in range(n)]
    r = [f"r{j}" for j in range(op._n_real)]
    lines = ["def step(inputs):",
             f"    {''.join(x + ', ' for x in a)}= inputs"]
    if tensors:
        lines += [f"    if {' or '.join(f'a{i}.__class__ is not Tensor' for i in tensors)}:",
                  "        return slow(inputs)"]
    lines += [f"    d{i} = a{i}.data" for i in tensors]
    lines += [f"    arrays = [{', '.join(d)}]",
              "    outs = F.raw_call(arrays)",
              "    if outs is None:",
              "        return slow(inputs)"]
    lines += [f"    r{j} = outs[{j}]" for j in range(op._n_real)]
    if r:
        lines += [f"    if {' or '.join(f'{x}.__class__ is not ndarray' for x in r)}:",
                  "        return record(inputs, arrays, outs)"]
    edges = [f"e{k}" for k in range(len(op._differentiable))]
    tensor_edges = [(e, i) for e, i in zip(edges, op._differentiable) if i in tensors]
    if tensor_edges:
        lines.append("    if GRAD.enabled:")
        lines += [f"        {e} = a{i} if a{i}.requires_grad else None" for e, i in tensor_edges]
        lines.append(f"        if {' or '.join(f'{e} is not None' for e, _ in tensor_edges)}:")
        lines.append(f"            versions = [(e, e._version[0]) for e in "
                     f"({''.join(e + ', ' for e, _ in tensor_edges)}) if e is not None]"
                     if record_versions else "            versions = ()")
        edge_list = [e if i in tensors else "None" for e, i in zip(edges, op._differentiable)]
        lines.append(f"            node = GradNode(entry, [{', '.join(_captured(op, d, r, 'outs'))}], "
                     f"[{', '.join(r)}], [{', '.join(edge_list)}], 'prim::DifferentiableGraph', versions)")
        lines.append(f"            return [{', '.join(_recorded_results(r, 'node'))}]")
    lines.append(f"    return [{', '.join(f'Tensor({x})' for x in r)}]")
    names = {"Tensor": Tensor, "ndarray": np.ndarray, "GradNode": GradNode, "GRAD": GRAD_MODE,
             "entry": op._entry, "F": op._f_runner, "slow": op.__call__, "record": op._record}
    text = "\n".join(lines) + "\n"
    exec(compile(text, "<differentiable graph step>", "exec"), names)  # noqa: S102
    step = names["step"]
    step.source = text
    return step


def _leaf_lines(op: DifferentiableGraphOp, requires: tuple[bool, ...], a: Sequence[str],
                d: Sequence[str], results: Sequence[str], name: Callable[[str, Any], str],
                local: Callable[[str], str]) -> Optional[list[str]]:
    """`DifferentiableGraphOp.leaf_lines`: the private step's work for leaves known to be
    Tensors (`a`, arrays `d`, requiring grad as `requires` says; numbers pass as themselves)
    under grad mode, assigning `results`, with the op's own path where a call differs (f's
    program refusing, a result that is no array). The program's `Tensor` and `ndarray` are
    those classes."""
    tensors = [i for i, v in enumerate(op.gradient.f.inputs) if isinstance(v.type, TensorType)]
    outs, node = local("outs"), local("node")
    r = [local("r") for _ in range(op._n_real)]
    assigned = f"{''.join(x + ', ' for x in results)}= " if results else ""
    a_list, d_list = f"[{', '.join(a)}]", f"[{', '.join(d)}]"
    lines = [f"{outs} = {name('F', op._f_runner)}.raw_call({d_list})",
             f"if {outs} is None:",
             f"    {assigned}{name('slow', op.__call__)}({a_list})",
             "else:"]
    lines += [f"    {r[j]} = {outs}[{j}]" for j in range(op._n_real)]
    body = "    "
    if r:
        lines += [f"    if {' or '.join(f'{x}.__class__ is not ndarray' for x in r)}:",
                  f"        {assigned}{name('record', op._record)}({a_list}, {d_list}, {outs})",
                  "    else:"]
        body = "        "
    edges = [a[i] if i in tensors and requires[i] else "None" for i in op._differentiable]
    if any(e != "None" for e in edges):
        lines.append(f"{body}{node} = {name('GradNode', GradNode)}({name('entry', op._entry)}, "
                     f"[{', '.join(_captured(op, d, r, outs))}], [{', '.join(r)}], "
                     f"[{', '.join(edges)}], 'prim::DifferentiableGraph', ())")
        made = _recorded_results(r, node)
    else:
        made = [f"Tensor({x})" for x in r]
    lines += [f"{body}{x} = {m}" for x, m in zip(results, made)] or [f"{body}pass"]
    return lines


def _plain_signature(op: DifferentiableGraphOp) -> bool:
    """Whether f's inputs are tensors and values without tensors, and its real outputs
    tensors: what the generated steps spell out."""
    grad = op.gradient
    inputs, real = grad.f.inputs, grad.f.outputs[:op._n_real]
    return not any(not isinstance(v.type, TensorType) and _may_hold_tensors(v.type) for v in inputs) \
        and all(isinstance(v.type, TensorType) for v in real)


def _captured(op: DifferentiableGraphOp, d: Sequence[str], r: Sequence[str], outs: str) -> list[str]:
    """What the node keeps for df: the captured inputs' arrays, then the captured outputs."""
    return [d[i] for i in op._captured_inputs] + [
        r[j] if j < op._n_real else f"{outs}[{j}]" for j in op._captured_outputs]


def _recorded_results(r: Sequence[str], node: str) -> list[str]:
    """The results of a recorded call: a Tensor of each output array, floating-point ones
    with the node's grad_fn."""
    return [f"Tensor({x}, True, ({node}, {j})) if {x}.dtype.kind == 'f' else Tensor({x})"
            for j, x in enumerate(r)]


def _may_hold_tensors(t) -> bool:
    """Whether a value of type `t` (not a tensor type) may hold tensors: anything but a
    named type (int, float, bool, str, Device, ...; not Any)."""
    return not isinstance(t, NamedType) or t.name == "Any"
