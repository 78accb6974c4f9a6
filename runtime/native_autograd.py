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
from irjit.compiler.autodiff.differentiate import DifferentiationError, drops_input_gradients, requires_grad
from irjit.compiler.autodiff.symbolic_emitter import NotSymbolic
from irjit.compiler.codegen.lower import entry_of
from irjit.compiler.ir import Graph, Node
from irjit.compiler.passes import get_pass
from irjit.ops import facts
from irjit.ops.tensor import Tensor
from irjit.ops.types import TensorType

from .executor.differentiable_graph import DifferentiableGraphOp
from .executor.runnable_gradient import runnable_gradient



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


def _requires_grad_typed(sub: Graph, flags: tuple[bool, ...]) -> Graph:
    """A copy of `sub` whose tensors say whether they require grad when the arguments
    flagged in `flags` do (as the tape would record them)."""
    g = sub.copy()
    for v, flag in zip(g.inputs, flags):
        if isinstance(v.type, TensorType):
            v.type = v.type.with_(requires_grad=flag)
    for n in g.walk():
        for v in n.outputs:
            if isinstance(v.type, TensorType):
                v.type = v.type.with_(requires_grad=None)
    get_pass("propagate_requires_grad").run(g)
    _no_grad_through_underivable_ops(g)
    return g


def needs_tape(sub: Graph, flags: tuple[bool, ...]) -> bool:
    """Whether running the group under grad must record something: an output requires grad
    (or it writes an input in place). When none does (`zeros_like(x)` of an `x` that requires grad),
    its unit runs as without grad: the interpreter would make the same tensors."""
    if any(writes_in_place(n) for n in sub.walk()):
        return True
    return any(requires_grad(o) for o in _requires_grad_typed(sub, flags).outputs
               if isinstance(o.type, TensorType) or o.type.contained())


def group_gradient(sub: Graph, requires_grad: tuple[bool, ...]) -> Optional[Gradient]:
    """The Gradient of a group's subgraph when the arguments flagged in `requires_grad` need
    gradients; None when the group must stay interpreted under grad (an op without a
    derivative formula, a formula that needs shapes it cannot know or gives an input that
    requires grad none where the tape would, an in-place write, or nothing to differentiate)."""
    if any(writes_in_place(n) for n in sub.walk()):
        return None
    g = _requires_grad_typed(sub, requires_grad)
    if any(drops_input_gradients(n) for n in g.walk()):
        return None
    try:
        grad = differentiate(g)
    except (DifferentiationError, NotSymbolic):
        return None
    if not grad.df_output_vjps:
        return None
    grad = runnable_gradient(grad)
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
        self._tape: dict[tuple, tuple[Node, bool]] = {}
        self._lock = threading.Lock()

    def needs_tape(self, node: Node, args: list) -> bool:
        """`needs_tape` of the group for these arguments' requires-grad pattern (cached)."""
        key = (id(node), tuple(isinstance(a, Tensor) and a.requires_grad for a in args))
        found = self._tape.get(key)
        if found is None:
            found = self._tape[key] = (node, needs_tape(node.attr("Subgraph"), key[1]))
        return found[1]

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
