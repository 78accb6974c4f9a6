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
from irjit.compiler.codegen.scalar_program import is_scalar_program
from irjit.compiler.ir import Graph, Node
from irjit.compiler.passes import get_pass
from irjit.ops import facts
from irjit.ops.tensor import Tensor
from irjit.ops.types import TensorType

from .autograd import GradNode
from .executor.differentiable_graph import DifferentiableGraphOp
from .executor.runnable_gradient import runnable_gradient



def writes_in_place(node: Node) -> bool:
    """Whether `node` writes one of its inputs (an in-place op): the tape must see the write."""
    if facts.has_tag(node.kind, "writes_first_input"):
        return True
    entry = entry_of(node)
    return entry is not None and entry.schema.is_inplace


def share_bases(results: list, args: list) -> None:
    """Outputs that are views of an argument share its version counter and base, as the
    interpreter's views do (f ran on detached copies of the arguments). An array that owns
    its memory and is no argument's was allocated after them: it cannot be a view of one."""
    arrays = None
    for r in results:
        if not isinstance(r, Tensor):
            continue
        d = r.data
        if d.base is None:
            arrays = arrays or [a.data for a in args if isinstance(a, Tensor)]
            if not any(d is a for a in arrays):
                continue
        for a in args:
            if isinstance(a, Tensor) and np.may_share_memory(d, a.data) and \
                    np.shares_memory(d, a.data):
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
    derivative formula, a formula that needs shapes it cannot know, an in-place write, or
    nothing to differentiate)."""
    if any(writes_in_place(n) for n in sub.walk()):
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




class _GroupOp:
    """A group's DifferentiableGraphOp, its outputs sharing versions and bases with the
    arguments they view."""

    __slots__ = ("op",)

    def __init__(self, op: DifferentiableGraphOp):
        self.op = op

    def __call__(self, args: list) -> list:
        results = self.op(args)
        share_bases(results, args)
        return results


class _WindowBackward:
    """The tape's entry for a view group (duck-types an OpEntry): each output is a window of
    the base argument at a byte offset; backward adds each output's gradient into its window
    of the base's gradient (`autograd.backward` adds into an accumulator in place)."""

    __slots__ = ("schema", "shape", "dtype", "windows")

    def __init__(self, schema, base: np.ndarray, windows: list):
        self.schema = schema
        self.shape, self.dtype = base.shape, base.dtype
        self.windows = windows  # per output: (shape, byte strides, byte offset)

    def add_into(self, acc: np.ndarray, grads: list) -> None:
        """Add the outputs' gradients into their windows of `acc` (C-contiguous, the base's
        shape and dtype)."""
        for (shape, strides, offset), g in zip(self.windows, grads):
            if g is not None:
                window = np.ndarray(shape, self.dtype, acc, offset, strides)
                np.add(window, g, out=window)

    def derivative(self, emitter, grads: list, saved_inputs, saved_outputs) -> list:
        acc = np.zeros(self.shape, self.dtype)
        self.add_into(acc, grads)
        return [acc]


class _Schema:
    __slots__ = ("name", "full_name")

    def __init__(self, name: str):
        self.name = self.full_name = name


def _windows_apart(shape: tuple, strides: tuple, itemsize: int) -> bool:
    """Whether a strided window's elements are distinct (no zero or overlapping strides, as an
    expand or unfold makes) and its strides positive, so adding into it adds once per element."""
    extent = itemsize
    for size, stride in sorted(((n, s) for n, s in zip(shape, strides) if n > 1), key=lambda p: p[1]):
        if stride < extent:
            return False
        extent = stride * (size - 1) + extent
    return True


class ViewGroupOp:
    """A group whose outputs are all views of one argument that requires grad (select, slice,
    transpose: a ViewUnit): it records no backward graph but the windows its outputs view, so
    backward adds each gradient into the base's gradient in place, where a backward graph
    would scatter it into a fresh tensor of zeros per call (a loop selecting x[i] would then
    add up one tensor of x's size per iteration). A call whose base is not C-contiguous, or
    whose windows overlap, runs `fallback` (the group's DifferentiableGraphOp)."""

    def __init__(self, node: Node, unit_of: Callable[[Node], Any], base: int, kind: str,
                 fallback: _GroupOp):
        self.node, self.unit_of, self.base, self.fallback = node, unit_of, base, fallback
        self.schema = _Schema(kind)

    def __call__(self, args: list) -> list:
        base = args[self.base]
        arrays = [a.data if isinstance(a, Tensor) else a for a in args]
        unit = self.unit_of(self.node)
        offsets = unit.views.offsets(arrays) if base.data.flags.c_contiguous else None
        status, outs = unit.call(arrays) if offsets is not None else (1, None)
        itemsize = base.data.itemsize
        if status or not all(_windows_apart(o.shape, o.strides, itemsize) for o in outs):
            return self.fallback(args)
        windows = [(o.shape, o.strides, offsets[j]) for j, o in enumerate(outs)]
        node = GradNode(_WindowBackward(self.schema, base.data, windows), [], outs, [base],
                        self.schema.name)
        version, root = base._version, base._base if base._base is not None else base
        results = []
        for j, o in enumerate(outs):
            r = Tensor(o, True, (node, j), version)
            r._base = root
            results.append(r)
        return results


def _view_group(unit, flags: tuple[bool, ...]) -> Optional[int]:
    """The argument a group's outputs all view (its unit computes none of them: a ViewUnit)
    when that argument alone requires grad; else None."""
    if unit is None or not getattr(unit, "aliases", None):
        return None
    bases = {alias for alias in unit.aliases}
    if len(bases) != 1:
        return None
    kind, k = next(iter(bases)) or (None, None)
    if kind != "input" or [i for i, f in enumerate(flags) if f] != [k]:
        return None
    return k


_UNDECIDED = object()


class GroupGradients:
    """Per native runner: how each group runs under grad mode for a requires-grad pattern of
    its arguments (a DifferentiableGraphOp, a ViewGroupOp, nothing to record, or interpreted),
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
        a callable running it with its backward recorded (`op(args) -> outputs`), or False:
        interpret it."""
        flags = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
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
        # as the tape records an op: backward fails if a tensor df reads (the arguments that
        # do not require grad too) is written in place afterwards, and only what depends on
        # an input that requires grad requires grad
        diff = DifferentiableGraphOp(grad, self._run_graph, like_tape=True)
        diff.run_f, diff.run_df = self._runner(grad.f).run, self._runner(grad.df).run
        op = _GroupOp(diff)
        unit = self.unit_of(node)
        base = _view_group(unit, flags)
        if base is None:
            return op
        kinds = [n.kind for n in sub.nodes() if n.kind != "prim::Constant"]
        return ViewGroupOp(node, self.unit_of, base,
                           kinds[0] if len(kinds) == 1 else "prim::NativeGroup", op)

    def run(self, node: Node, args: list) -> Optional[list]:
        """The group's outputs with its backward recorded, or None: interpret the group (or,
        when nothing needs recording, run its unit)."""
        op = self.for_call(node, args)
        return op(args) if op else None

    def runners(self) -> list:
        return [r for _, r in list(self._runners.values())]

    def _run_graph(self, graph: Graph, inputs: list) -> list:
        return self._runner(graph).run(inputs)

    def _runner(self, graph: Graph) -> Any:
        found = self._runners.get(id(graph))
        if found is None:
            with self._lock:
                found = self._runners.get(id(graph))
                if found is None:
                    found = self._runners[id(graph)] = (graph, self.make_runner(graph))
        return found[1]
