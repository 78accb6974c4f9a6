"""Rematerialization of a Gradient's saved temporaries, as torch.compile's min-cut partitioner
does it: a temporary that `f` hands `df` (a captured output) and that pointwise ops and views
compute from `f`'s inputs is recomputed at the start of `df` from those inputs instead of
being written by `f` and read back by `df`, when that moves fewer bytes.

A saved temporary costs a write and a read of its size; recomputing it costs a read of each
input of `f` it needs that `df` does not read anyway. Pointwise results are at least as large
as each of their operands (they broadcast), so without knowing sizes (a Gradient is made before
its inputs' shapes are known) a temporary is recomputed when at most one of the inputs it
needs is new to `df`: one read of at most its size instead of a write and a read. For
`tanh(x * a + b) * sigmoid(x) + x * x`, `f` then writes only its result instead of also `tanh`
and `sigmoid`, and `df` reads `b` instead of both: 6 arrays instead of 9 per element move
between `f` and `df`.

This is for running a Gradient, not for printing one: the Gradient that `irtool opt
--passes=autodiff` prints (PyTorch's) is never changed; `rematerialize` works on the copy that
runs (`runtime/executor/runnable_gradient.py`)."""

from __future__ import annotations

from typing import Optional

from irjit.compiler.ir import Graph, Node, Value
from irjit.ops import facts, registry
from irjit.ops.types import TensorType

from .gradient import Gradient

MAX_RECOMPUTED_NODES = 16  # per temporary: recomputing adds this much work to df at most


def _is_view(kind: str) -> bool:
    entries = registry.overloads(kind)
    return bool(entries) and all(e.schema.is_view and not e.schema.is_inplace for e in entries)


def _recomputable_node(node: Node) -> bool:
    """Pointwise ops and views: deterministic, in place of nothing, without blocks."""
    kind = node.kind
    if node.blocks or len(node.outputs) != 1 or facts.has_side_effects(kind) or \
            facts.has_tag(kind, "random") or facts.has_tag(kind, "writes_first_input"):
        return False
    if any(e.schema.is_inplace for e in registry.overloads(kind)):
        return False
    return facts.has_tag(kind, "pointwise") or _is_view(kind)


def recompute_plan(v: Value, f: Graph) -> Optional[tuple[list[Node], set[Value]]]:
    """(the nodes of `f` that compute `v` from f's inputs, in order; the inputs they read), or
    None when `v` needs something else (a product, a reduction, a random op) or too many nodes."""
    nodes: list[Node] = []
    leaves: set[Value] = set()
    seen: set[Value] = set()

    def visit(u: Value) -> bool:
        if u in seen:
            return True
        seen.add(u)
        if u in f.inputs:
            if isinstance(u.type, TensorType):
                leaves.add(u)
            return True
        node = u.node
        if node.kind == "prim::Constant":
            return True
        if not _recomputable_node(node) or not all(visit(w) for w in node.inputs):
            return False
        nodes.append(node)
        return len(nodes) <= MAX_RECOMPUTED_NODES

    if v in f.inputs or v.node.kind == "prim::Constant" or not isinstance(v.type, TensorType) or \
            not visit(v):
        return None
    return nodes, leaves


def rematerializable(grad: Gradient) -> list[int]:
    """Positions in `grad.df_input_captured_outputs` of the temporaries worth recomputing in
    df, chosen in order: each needs at most one input of f that df does not read yet (counting
    those the temporaries chosen before it add)."""
    f = grad.f
    read = set(f.inputs[i] for i in grad.df_input_captured_inputs)
    chosen = []
    for p, j in enumerate(grad.df_input_captured_outputs):
        if j < grad.f_real_outputs or j in grad.df_input_vjps or \
                grad.df_input_captured_outputs.count(j) > 1:
            continue
        plan = recompute_plan(f.outputs[j], f)
        if plan is None:
            continue
        new = plan[1] - read
        if len(new) <= 1:
            chosen.append(p)
            read |= new
    return chosen


def _df_input_for(grad: Gradient, i: int) -> Value:
    """df's input holding f's input `i`, added to the captured inputs when df has none."""
    n_vjps = len(grad.df_input_vjps)
    if i not in grad.df_input_captured_inputs:
        grad.df_input_captured_inputs.append(i)
        grad.df.insert_input(n_vjps + len(grad.df_input_captured_inputs) - 1, type=grad.f.inputs[i].type)
    return grad.df.inputs[n_vjps + grad.df_input_captured_inputs.index(i)]


def rematerialize(grad: Gradient) -> bool:
    """Recompute in `grad.df` the temporaries `rematerializable` picks, and drop them from
    `grad.f`'s outputs (f's now unused work goes too); returns whether anything changed. The
    index fields are kept consistent; the graphs are changed in place."""
    positions = rematerializable(grad)
    if not positions:
        return False
    f, df = grad.f, grad.df
    anchor = df.block.first_node
    cloned: dict[Value, Value] = {}  # f's value -> df's

    def in_df(u: Value) -> Value:
        found = cloned.get(u)
        if found is None:
            if u in f.inputs:
                return _df_input_for(grad, f.inputs.index(u))
            assert u.node.kind == "prim::Constant", u.node.kind  # (recompute_plan's leaves)
            found = cloned[u] = df.clone_node(u.node, lambda w: w).insert_before(anchor).output
        return found

    for p in positions:
        for node in recompute_plan(f.outputs[grad.df_input_captured_outputs[p]], f)[0]:
            if node.output not in cloned:
                cloned[node.output] = df.clone_node(node, in_df).insert_before(anchor).output
    for p in sorted(positions, reverse=True):
        j = grad.df_input_captured_outputs[p]
        position = len(grad.df_input_vjps) + len(grad.df_input_captured_inputs) + p
        df.inputs[position].replace_all_uses_with(cloned[f.outputs[j]])
        df.erase_input(position)
        del grad.df_input_captured_outputs[p]
        f.erase_output(j)
        grad.df_input_captured_outputs = [k - (k > j) for k in grad.df_input_captured_outputs]
        grad.df_input_vjps = [k - (k > j) for k in grad.df_input_vjps]
    _eliminate_dead_code(f)
    return True


def _eliminate_dead_code(g: Graph) -> None:
    from irjit.compiler.passes.eliminate_dead_code import eliminate_dead_code
    eliminate_dead_code(g)
