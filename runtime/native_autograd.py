"""Native groups under grad mode, the way PyTorch runs a DifferentiableGraph: a
`prim::NativeGroup` whose arguments require grad is differentiated once per requires-grad
pattern of its arguments into a forward graph `f` and a backward graph `df`, each run by a
native runner of its own (so both are partitioned and compiled), and a DifferentiableGraphOp
records the backward on the tape. A group none of whose outputs needs a gradient (comparisons,
integer casts, `zeros_like`) runs natively without recording anything; one that cannot be
differentiated, or that writes an input in place, stays interpreted under grad; outputs that
view an argument share its memory, version and base, as the interpreter's views do."""

from __future__ import annotations

import threading
from typing import Any, Callable, Optional

import numpy as np

from irjit.compiler.autodiff import Gradient, differentiate
from irjit.compiler.autodiff.differentiate import DifferentiationError, requires_grad
from irjit.compiler.autodiff.symbolic_emitter import NotSymbolic
from irjit.compiler.codegen.lower import entry_of
from irjit.compiler.ir import Graph, Node, Value
from irjit.compiler.passes import get_pass
from irjit.ops import facts
from irjit.ops.tensor import Tensor
from irjit.ops.types import TensorType

from .executor.differentiable_graph import DifferentiableGraphOp


def writes_in_place(node: Node) -> bool:
    """Whether `node` writes one of its inputs (an in-place op): the tape must see the write."""
    if facts.has_tag(node.kind, "writes_first_input"):
        return True
    entry = entry_of(node)
    return entry is not None and entry.schema.is_inplace


def _share_bases(results: list, args: list) -> None:
    """Outputs that are views of an argument share its version counter and base, as the
    interpreter's views do (f ran on detached copies of the arguments)."""
    for r in results:
        if not isinstance(r, Tensor):
            continue
        for a in args:
            if isinstance(a, Tensor) and np.may_share_memory(r.data, a.data) and \
                    np.shares_memory(r.data, a.data):
                r._version = a._version
                r._base = a._base if a._base is not None else a
                break


def _prepared_backward(df: Graph) -> Graph:
    """`df` ready for a runner: GradOf blocks lowered to branches on whether gradients are
    defined, which the runner's specialization folds (every tensor df takes is defined)."""
    df = df.copy()
    get_pass("lower_grad_of").run(df)
    return df


def drop_temporary_vjps(grad: Gradient) -> None:
    """The vjps `df` takes for f's captured temporaries are always zero (DifferentiableGraphOp
    hands the tape only the real outputs, and passes zeros for the rest): they become
    `prim::AutogradZero`, which the backward passes fold away."""
    df = grad.df
    for q in reversed(range(len(grad.df_input_vjps))):
        if grad.df_input_vjps[q] < grad.f_real_outputs:
            continue
        zero = df.block.prepend_node(df.create("prim::AutogradZero"))
        df.inputs[q].replace_all_uses_with(zero.output)
        df.erase_input(q)
        del grad.df_input_vjps[q]


def _is_view(node: Node) -> bool:
    if node.kind.startswith("prim::") or node.blocks:
        return False
    entry = entry_of(node)
    return entry is not None and entry.schema.is_view and not entry.schema.is_inplace


def _view_of_inputs(v: Value, f: Graph) -> bool:
    """`v` is one of f's inputs, a constant, or a view (of a view...) of those."""
    return v in f.inputs or v.node.kind == "prim::Constant" or \
        _is_view(v.node) and all(_view_of_inputs(u, f) for u in v.node.inputs)


class _Recompute:
    """Clones f's views of its inputs into df (before `anchor`), capturing the inputs."""

    def __init__(self, grad: Gradient):
        self.grad, self.f, self.df = grad, grad.f, grad.df
        self.anchor = grad.df.block.first_node
        self.done: dict[Value, Value] = {}

    def __call__(self, v: Value) -> Value:
        found = self.done.get(v)
        if found is not None:
            return found
        grad, df = self.grad, self.df
        n_vjps = len(grad.df_input_vjps)
        if v in self.f.inputs:
            i = self.f.inputs.index(v)
            if i not in grad.df_input_captured_inputs:
                grad.df_input_captured_inputs.append(i)
                df.insert_input(n_vjps + len(grad.df_input_captured_inputs) - 1, type=v.type)
            out = df.inputs[n_vjps + grad.df_input_captured_inputs.index(i)]
        else:
            operands = {u: self(u) for u in v.node.inputs}
            clone = df.clone_node(v.node, lambda u: operands[u])
            out = clone.insert_before(self.anchor).outputs[v.offset]
        self.done[v] = out
        return out


def recompute_captured_views(grad: Gradient) -> None:
    """Captured temporaries of `f` that are views of f's inputs (the `t(w)` a matmul formula
    needs, the heads of an attention layer) are recomputed in `df` from the captured inputs
    instead: a view costs nothing to recompute, and `f` then outputs only computed tensors,
    so its views fuse into its units rather than run interpreted as outputs of their own."""
    f, df = grad.f, grad.df
    recompute = _Recompute(grad)
    for p in reversed(range(len(grad.df_input_captured_outputs))):
        j = grad.df_input_captured_outputs[p]
        v = f.outputs[j]
        if j < grad.f_real_outputs or j in grad.df_input_vjps or v in f.inputs or \
                grad.df_input_captured_outputs.count(j) > 1 or not _view_of_inputs(v, f):
            continue
        recomputed = recompute(v)
        position = len(grad.df_input_vjps) + len(grad.df_input_captured_inputs) + p
        df.inputs[position].replace_all_uses_with(recomputed)
        df.erase_input(position)
        del grad.df_input_captured_outputs[p]
        f.erase_output(j)
        grad.df_input_captured_outputs = [k - (k > j) for k in grad.df_input_captured_outputs]
        grad.df_input_vjps = [k - (k > j) for k in grad.df_input_vjps]
    get_pass("eliminate_dead_code").run(f)


def _no_grad_through_underivable_ops(g: Graph) -> None:
    """As the tape records it: an op without a derivative formula (`zeros_like(x)`) makes
    tensors that do not require grad, nor do the aten values computed only from them."""
    for n in g.nodes():
        if not n.kind.startswith("aten::"):
            continue
        entry = entry_of(n)
        underivable = entry is not None and entry.derivative is None
        needs = any(requires_grad(v) for v in n.inputs
                    if isinstance(v.type, TensorType) or v.type.contained())
        for o in n.outputs:
            if isinstance(o.type, TensorType) and o.type.requires_grad and (underivable or not needs):
                o.type = o.type.with_(requires_grad=False)


def _with_requires_grad(sub: Graph, requires_grad: tuple[bool, ...]) -> Graph:
    """A copy of `sub` whose tensors say whether they require grad when the arguments flagged
    in `requires_grad` do, as the tape would record them."""
    g = sub.copy()
    for v, flag in zip(g.inputs, requires_grad):
        if isinstance(v.type, TensorType):
            v.type = v.type.with_(requires_grad=flag)
    for n in g.walk():
        for v in n.outputs:
            if isinstance(v.type, TensorType):
                v.type = v.type.with_(requires_grad=None)
    get_pass("propagate_requires_grad").run(g)
    _no_grad_through_underivable_ops(g)
    return g


def needs_no_gradient(sub: Graph, requires_grad: tuple[bool, ...]) -> bool:
    """Whether no output of a group requires grad although the flagged arguments do (argmax,
    comparisons: every path from them runs through ops without a derivative formula): the
    tape would record nothing, so the group's unit runs as without grad."""
    g = _with_requires_grad(sub, requires_grad)
    return not any(writes_in_place(n) for n in sub.walk()) and not any(
        isinstance(o.type, TensorType) and o.type.requires_grad is not False for o in g.outputs)


def group_gradient(sub: Graph, requires_grad: tuple[bool, ...]) -> Optional[Gradient]:
    """The Gradient of a group's subgraph when the arguments flagged in `requires_grad` need
    gradients; None when the group must stay interpreted under grad (an op without a
    derivative formula, a formula that needs shapes it cannot know, an in-place write, or
    nothing to differentiate)."""
    if any(writes_in_place(n) for n in sub.walk()):
        return None
    g = _with_requires_grad(sub, requires_grad)
    try:
        grad = differentiate(g)
    except (DifferentiationError, NotSymbolic):
        return None
    if not grad.df_output_vjps:
        return grad
    drop_temporary_vjps(grad)
    recompute_captured_views(grad)
    grad.df = _prepared_backward(grad.df)
    return grad




class GroupGradients:
    """Per native runner: the DifferentiableGraphOps of its groups (keyed by group node and
    the arguments' requires-grad pattern) and the runners of their `f` and `df` graphs,
    made by `make_runner(graph)`."""

    def __init__(self, make_runner: Callable[[Graph], Any]):
        self.make_runner = make_runner
        self._ops: dict[tuple, tuple[Node, Optional[DifferentiableGraphOp]]] = {}
        self._runners: dict[int, tuple[Graph, Any]] = {}
        self._untracked: dict[tuple, bool] = {}
        self._lock = threading.Lock()

    def run(self, node: Node, args: list) -> Optional[list]:
        """The group's outputs with its backward recorded, or None: interpret the group."""
        flags = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        key = (id(node), flags)
        found = self._ops.get(key)
        if found is None:
            with self._lock:
                found = self._ops.get(key)
                if found is None:
                    grad = group_gradient(node.attr("Subgraph"), flags)
                    op = None if grad is None else DifferentiableGraphOp(grad, self._run_graph)
                    found = self._ops[key] = (node, op)
        op = found[1]
        if op is None:
            return None
        results = op(args)
        _share_bases(results, args)
        differentiable = set(op.gradient.df_input_vjps)
        recorded = next((r.grad_fn[0] for r in results if isinstance(r, Tensor) and r.grad_fn), None)
        if recorded is not None:
            # as the tape does for every tensor an op saves: backward fails if one is written
            # in place afterwards (df reads the arguments that do not require grad too)
            recorded.versions = [(a, a.version) for a in args if isinstance(a, Tensor)]
        for i, r in enumerate(results):
            if isinstance(r, Tensor) and i not in differentiable:
                # the interpreter records only what depends on an input that requires grad
                r.requires_grad, r.grad_fn = False, None
        return results

    def untracked(self, node: Node, args: list) -> bool:
        """`needs_no_gradient` of the group for these arguments' requires-grad pattern."""
        flags = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        key = (id(node), flags)
        found = self._untracked.get(key)
        if found is None:
            found = self._untracked[key] = needs_no_gradient(node.attr("Subgraph"), flags)
        return found

    def runners(self) -> list:
        return [r for _, r in list(self._runners.values())]

    def _run_graph(self, graph: Graph, inputs: list) -> list:
        found = self._runners.get(id(graph))
        if found is None:
            with self._lock:
                found = self._runners.get(id(graph))
                if found is None:
                    found = self._runners[id(graph)] = (graph, self.make_runner(graph))
        return found[1].run(list(inputs))
