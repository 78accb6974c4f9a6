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
from irjit.compiler.autodiff.differentiate import DifferentiationError
from irjit.compiler.autodiff.symbolic_emitter import NotSymbolic
from irjit.compiler.codegen.lower import entry_of
from irjit.compiler.ir import Graph, Node
from irjit.compiler.passes import get_pass
from irjit.ops import facts
from irjit.ops.tensor import Tensor
from irjit.ops.types import TensorType

from .executor.differentiable_graph import DifferentiableGraphOp

# what a backward graph goes through before its runner partitions it: GradOf blocks become
# branches on which gradients are defined, and those branches fold (every vjp is defined)
_BACKWARD_PASSES = ("lower_grad_of", "specialize_autograd_zero", "eliminate_dead_code",
                    "constant_propagation", "eliminate_dead_code")


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


def _prepared_backward(df: Graph, n_vjps: int) -> Graph:
    """`df` ready for a runner: its vjp inputs are always defined (DifferentiableGraphOp
    passes zeros for missing output gradients), so the GradOf structure folds away."""
    df = df.copy()
    for v in df.inputs[:n_vjps]:
        if isinstance(v.type, TensorType):
            v.type = v.type.with_(undefined=False)
    for name in _BACKWARD_PASSES:
        get_pass(name).run(df, **({"profiling": False} if name == "specialize_autograd_zero" else {}))
    return df


def group_gradient(sub: Graph, requires_grad: tuple[bool, ...]) -> Optional[Gradient]:
    """The Gradient of a group's subgraph when the arguments flagged in `requires_grad` need
    gradients; None when the group must stay interpreted under grad (an op without a
    derivative formula, a formula that needs shapes it cannot know, outputs aliasing inputs,
    or nothing to differentiate)."""
    if outputs_may_alias_inputs(sub):
        return None
    g = sub.copy()
    for v, flag in zip(g.inputs, requires_grad):
        if isinstance(v.type, TensorType):
            v.type = v.type.with_(requires_grad=flag)
    for n in g.walk():
        for v in n.outputs:
            if isinstance(v.type, TensorType):
                v.type = v.type.with_(requires_grad=None)
    get_pass("propagate_requires_grad").run(g)
    try:
        grad = differentiate(g)
    except (DifferentiationError, NotSymbolic):
        return None
    if not grad.df_output_vjps:
        return None
    grad.df = _prepared_backward(grad.df, len(grad.df_input_vjps))
    return grad


class GroupGradients:
    """Per native runner: the DifferentiableGraphOps of its groups (keyed by group node and
    the arguments' requires-grad pattern) and the runners of their `f` and `df` graphs,
    made by `make_runner(graph)`."""

    def __init__(self, make_runner: Callable[[Graph], Any]):
        self.make_runner = make_runner
        self._ops: dict[tuple, tuple[Node, Optional[DifferentiableGraphOp]]] = {}
        self._runners: dict[int, tuple[Graph, Any]] = {}
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
        differentiable = set(op.gradient.df_input_vjps)
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
