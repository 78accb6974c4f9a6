"""`irjit.compile`'s plans for calls that need gradients, for graphs with loops of a few
constant trips: the loops are unrolled completely (as PyTorch's UnrollConstantLoops unrolls
them, but never by a factor) and, when no loop or branch is left, the whole graph is
differentiated once per requires-grad pattern of its inputs, as one DifferentiableGraph:
the forward graph `f` runs as one native plan and the tape records one node, whose backward
runs `df` as one native plan. The loop kept a loop runs a DifferentiableGraph per trip with
its own tape node, and the backward walk visits each (~14 µs of Python a trip for rnn_loop).
Graphs whose loops cannot all be unrolled, or whose unrolled graph cannot be differentiated
(an in-place write, an op without a formula), keep the per-group plan."""

from __future__ import annotations

from typing import Any, Optional

from irjit.compiler.ir import Graph
from irjit.compiler.passes.constant_propagation import run as constant_propagation
from irjit.compiler.passes.eliminate_dead_code import eliminate_dead_code
from irjit.compiler.passes.inline_autodiff_subgraphs import run as inline_autodiff_subgraphs
from irjit.compiler.passes.unroll_loops import any_loop, unroll_completely
from irjit.ops.tensor import Tensor
from irjit.ops.types import ClassType, TensorType

from .native_autograd import group_gradient
from .native_group_ops import NativeGroupOp

# an unrolled loop's nodes at most (its trips times its body's nodes, the body's return
# counted): rnn_loop's 16 trips of 6 fit. The backward graph grows with it (~7,300 nodes for
# rnn_loop before specialization folds it to ~450), and so does the first call's time
MAX_UNROLLED_NODES = 128
_NO_THRESHOLD = 1 << 30  # (every DifferentiableGraph is inlined, whatever its size)


def unrolls(graph: Graph) -> bool:
    """Whether `graph` has a loop `unrolled` would unroll (on a copy: `graph` stays)."""
    return any_loop(graph.block) and unrolled(graph.copy()) is not None


def unrolled(graph: Graph) -> Optional[Graph]:
    """`graph` (changed in place) with its loops unrolled, when every loop went and no
    branch is left; else None (then `graph` is half unrolled: discard it). A profiling
    executor's graph has its guarded DifferentiableGraphs inlined first (`inline_guarded`);
    one that cannot be (an op autograd cannot run) would run unguarded: None then too."""
    inline_guarded(graph)
    if any(n.kind == "prim::DifferentiableGraph" for n in graph.walk()):
        return None
    if not unroll_completely(graph.block, MAX_UNROLLED_NODES):
        return None
    constant_propagation(graph)  # (the trip counters, and branches on them)
    eliminate_dead_code(graph)
    if any(n.blocks for n in graph.nodes()):
        return None
    return graph


def inline_guarded(graph: Graph) -> None:
    """A profiling executor's graph as the graph it differentiated: its DifferentiableGraphs
    inlined and their `prim::RequiresGradCheck`s taken as holding (the branch on one then
    folds to the DifferentiableGraph's block). A whole-gradient plan is made per requires-grad
    pattern of the call's inputs and differentiates what the guarded block and its fallback
    both compute, so no guard is needed; the loop unrolled around them is then one graph."""
    guards = [n for n in graph.walk() if n.kind == "prim::RequiresGradCheck"]
    if not guards and not any(n.kind == "prim::DifferentiableGraph" for n in graph.walk()):
        return
    for n in guards:
        for out, value in zip(n.outputs, n.inputs):
            out.replace_all_uses_with(value)
        point = graph.insert_point
        graph.set_insert_point(n)
        holds = graph.insert_constant(True)
        graph.set_insert_point(point)
        n.outputs[-1].replace_all_uses_with(holds)
        n.destroy()
    inline_autodiff_subgraphs(graph, threshold=_NO_THRESHOLD)
    constant_propagation(graph)  # (the branches on the guards)
    eliminate_dead_code(graph)
    for v in [*graph.inputs, *(o for n in graph.walk() for o in n.outputs)]:
        if isinstance(v.type, TensorType) and v.type.requires_grad is not None:
            v.type = v.type.with_(requires_grad=None)  # (a subgraph's values say 0: they ran
            # detached; the call's flags decide now)


def requires_grad_flags(inputs: list) -> tuple[bool, ...]:
    return tuple(isinstance(x, Tensor) and x.requires_grad for x in inputs)


class GradientPlan:
    """A runner's plan for calls with one layout and requires-grad pattern: the graph's
    NativeGroupOp (`f` and `df` run by native runners of their own). `run(inputs)` records
    the call on the tape and returns its outputs."""

    def __init__(self, op: NativeGroupOp):
        self.op = op

    def run(self, inputs: list) -> list:
        return self.op.step(inputs)


def gradient_plan(graph: Graph, inputs: list, make_runner) -> Optional[GradientPlan]:
    """The plan differentiating `graph` (unrolled, its values typed by the call's layouts) as
    a whole for these inputs' requires-grad flags; None when it cannot be (module inputs,
    tensors without complete types, nothing to differentiate, no formula, a write)."""
    if any(isinstance(v.type, ClassType) for v in graph.inputs):
        return None
    if any(isinstance(v.type, TensorType) and v.type.complete_sizes() is None
           for n in graph.nodes() for v in n.outputs):
        return None
    flags = requires_grad_flags(inputs)
    grad = group_gradient(graph, flags)
    if grad is None:
        return None
    return GradientPlan(NativeGroupOp(grad, make_runner(grad.f), make_runner(grad.df), flags))
