"""Native groups under grad mode, the way PyTorch runs a DifferentiableGraph: a
`prim::NativeGroup` whose arguments require grad is differentiated once per requires-grad
pattern of its arguments into a forward graph `f` and a backward graph `df`, each run by a
native runner of its own (so both are partitioned and compiled), and a DifferentiableGraphOp
records the backward on the tape. A group that cannot be differentiated, or whose outputs may
alias its inputs, stays interpreted under grad."""

from __future__ import annotations

import threading
from typing import Any, Callable, Optional

from irjit.compiler.autodiff import Gradient, differentiate
from irjit.compiler.autodiff.differentiate import DifferentiationError, requires_grad
from irjit.compiler.autodiff.symbolic_emitter import NotSymbolic
from irjit.compiler.codegen.lower import entry_of
from irjit.compiler.ir import Graph, Node
from irjit.compiler.passes import get_pass
from irjit.ops import facts
from irjit.ops.tensor import Tensor
from irjit.ops.types import TensorType

from .executor.differentiable_graph import DifferentiableGraphOp
from .executor.runnable_gradient import runnable_gradient


def may_alias_input(node: Node) -> bool:
    """Whether an output of `node` may share memory with one of its inputs (views, in-place
    ops, pass-throughs such as `contiguous`): a native unit would hand back a copy."""
    if facts.has_tag(node.kind, "may_alias_input") or facts.has_tag(node.kind, "identity") or \
            facts.has_tag(node.kind, "writes_first_input"):
        return True
    entry = entry_of(node)
    return entry is not None and (entry.schema.is_view or entry.schema.is_inplace)


def outputs_may_alias_inputs(graph: Graph) -> bool:
    """Whether an output of `graph` may be (a view of) one of its inputs: the interpreter
    would hand such an output back sharing the input's memory and version counter, so a
    later in-place op on it must reach the input."""
    aliases = set(graph.inputs)
    for n in graph.nodes():
        if may_alias_input(n) and any(v in aliases for v in n.inputs):
            aliases.update(n.outputs)
    return any(v in aliases for v in graph.outputs)


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
    (or may alias an input). When none does (`zeros_like(x)` of an `x` that requires grad),
    its unit runs as without grad: the interpreter would make the same tensors."""
    if outputs_may_alias_inputs(sub):
        return True
    return any(requires_grad(o) for o in _requires_grad_typed(sub, flags).outputs
               if isinstance(o.type, TensorType) or o.type.contained())


def group_gradient(sub: Graph, requires_grad: tuple[bool, ...]) -> Optional[Gradient]:
    """The Gradient of a group's subgraph when the arguments flagged in `requires_grad` need
    gradients; None when the group must stay interpreted under grad (an op without a
    derivative formula, a formula that needs shapes it cannot know, outputs aliasing inputs,
    or nothing to differentiate)."""
    if outputs_may_alias_inputs(sub):
        return None
    g = _requires_grad_typed(sub, requires_grad)
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
