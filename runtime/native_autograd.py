"""Native groups under grad mode, the way PyTorch runs a DifferentiableGraph: a
`prim::NativeGroup` whose arguments require grad is differentiated once per requires-grad
pattern of its arguments into a forward graph `f` and a backward graph `df`, each run by a
native runner of its own (so both are partitioned and compiled), and a NativeGroupOp records
the backward on the tape (`native_group_ops`; a group that only views one argument records
the windows it views instead). A group none of whose outputs needs a gradient (comparisons,
integer casts, `zeros_like`) runs natively without recording anything; one that cannot be
differentiated, or that writes an input in place, stays interpreted under grad; outputs that
view an argument share its memory, version and base, as the interpreter's views do."""

from __future__ import annotations

import threading
from typing import Any, Callable, Optional

from irjit.compiler.autodiff import Gradient, differentiate
from irjit.compiler.autodiff.differentiate import DifferentiationError, drops_input_gradients, requires_grad
from irjit.compiler.autodiff.symbolic_emitter import NotSymbolic
from irjit.compiler.codegen.lower import entry_of
from irjit.compiler.codegen.scalar_program import is_scalar_program
from irjit.compiler.ir import Graph, Node
from irjit.compiler.ir.constants import constant_value
from irjit.compiler.passes import get_pass
from irjit.ops import facts
from irjit.ops.tensor import Tensor
from irjit.ops.types import TensorType

from .executor.runnable_gradient import runnable_gradient
from .native_group_ops import NativeGroupOp, ViewGroupOp, view_group_base
from .native_specialization import fold_metadata, fold_size_if_not_equal



def writes_in_place(node: Node) -> bool:
    """Whether `node` writes one of its inputs (an in-place op): the tape must see the write."""
    if facts.has_tag(node.kind, "writes_first_input"):
        return True
    entry = entry_of(node)
    return entry is not None and entry.schema.is_inplace


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
    fold_constant_captures(grad)  # (grad's graphs are this call's: g is a copy of sub)
    grad.df = _prepared_backward(grad.df)
    return grad


def fold_constant_captures(grad: Gradient) -> None:
    """Captured temporaries of `f` that its complete types make constant (the sizes, and
    `_size_if_not_equal`s of them, that broadcasting formulas capture) become constants of
    `df` instead of values each call captures and df's plan checks. A group's gradient is
    made for a specialized plan, whose key fixes every size of its tensors."""
    f, df = grad.f, grad.df
    known = set(f.inputs) | {v for n in f.walk() for v in n.outputs}  # (sizes: complete types)
    if not fold_metadata(f, known) | fold_size_if_not_equal(f):
        return
    get_pass("lower_tuples").run(f)  # (the formulas' tuples of sizes, unpacked at once)
    first = next(iter(df.block.nodes()), None)
    df.set_insert_point(first if first is not None else df.block)
    for p in reversed(range(len(grad.df_input_captured_outputs))):
        j = grad.df_input_captured_outputs[p]
        v = f.outputs[j]
        if v.node.kind != "prim::Constant":
            continue
        position = len(grad.df_input_vjps) + len(grad.df_input_captured_inputs) + p
        old = df.inputs[position]
        old.replace_all_uses_with(df.insert_constant(constant_value(v.node), old.type))
        df.erase_input(position)
        del grad.df_input_captured_outputs[p]
        if j >= grad.f_real_outputs and j not in grad.df_input_vjps and \
                j not in grad.df_input_captured_outputs:  # (f need not return it any more)
            f.erase_output(j)
            grad.df_input_captured_outputs = [k - (k > j) for k in grad.df_input_captured_outputs]
            grad.df_input_vjps = [k - (k > j) for k in grad.df_input_vjps]
    get_pass("eliminate_dead_code").run(f)




_UNDECIDED = object()


class GroupGradients:
    """Per native runner: how each group runs under grad mode for a requires-grad pattern of
    its arguments (a NativeGroupOp, a ViewGroupOp, nothing to record, or interpreted),
    and the runners of the ops' `f` and `df` graphs, made by `make_runner(graph)`;
    `unit_of(node)` is the runner's compiled unit of a group."""

    def __init__(self, make_runner: Callable[[Graph], Any], unit_of: Callable[[Node], Any]):
        self.make_runner = make_runner
        self.unit_of = unit_of
        self._nodes: dict[int, tuple[Node, dict]] = {}  # id(group) -> (group, its decisions)
        self._runners: dict[int, tuple[Graph, Any]] = {}
        self._lock = threading.RLock()  # (deciding makes runners)

    def decisions(self, node: Node) -> dict:
        """The group's decisions so far, by the requires-grad flags of its arguments (see
        `for_call`): a program reads the flags of its call there."""
        found = self._nodes.get(id(node))
        if found is None:
            with self._lock:
                found = self._nodes.setdefault(id(node), (node, {}))
        return found[1]

    def all_decisions(self) -> list:
        return [d for _, found in list(self._nodes.values()) for d in list(found.values())]

    def for_call(self, node: Node, args: list) -> Any:
        """How the group runs for these arguments under grad mode: None when it records
        nothing (no argument requires grad, no output would: its unit runs as without grad),
        a callable running it with its backward recorded (`op(args) -> outputs`: a
        NativeGroupOp's `step`, a ViewGroupOp), or False: interpret it."""
        return self.decided(node, tuple(isinstance(a, Tensor) and a.requires_grad for a in args))

    def decided(self, node: Node, flags: tuple[bool, ...]) -> Any:
        """`for_call` of arguments with these requires-grad flags (deciding once)."""
        decisions = self.decisions(node)
        found = decisions.get(flags, _UNDECIDED)
        if found is _UNDECIDED:
            with self._lock:
                found = decisions.get(flags, _UNDECIDED)
                if found is _UNDECIDED:
                    found = decisions[flags] = self._decide(node, flags)
        return found

    def _decide(self, node: Node, flags: tuple[bool, ...]) -> Any:
        sub = node.attr("Subgraph")
        if not any(flags) or is_scalar_program(sub) or not needs_tape(sub, flags):
            return None  # (numbers need no tape)
        grad = group_gradient(sub, flags)
        if grad is None:
            return False
        op = NativeGroupOp(grad, self._runner(grad.f), self._runner(grad.df), flags)
        unit = self.unit_of(node)
        base = view_group_base(unit, flags)
        if base is None:
            return op.step  # (its generated function when it records: no call through the op)
        kinds = [n.kind for n in sub.nodes() if n.kind != "prim::Constant"]
        return ViewGroupOp(node, self.unit_of, base,
                           kinds[0] if len(kinds) == 1 else "prim::NativeGroup", op)

    def runners(self) -> list:
        return [r for _, r in list(self._runners.values())]

    def _runner(self, graph: Graph) -> Any:
        found = self._runners.get(id(graph))
        if found is None:
            with self._lock:
                found = self._runners.get(id(graph))
                if found is None:
                    found = self._runners[id(graph)] = (graph, self.make_runner(graph))
        return found[1]
