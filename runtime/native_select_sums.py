"""A backward graph's sum of `select_backward`s that together fill every index of one dim
(the gradient of `x` after `x[0]`, ..., `x[n-1]` were each read once: an unrolled loop's
steps) becomes one `aten::stack` of the gradients in index order. The sum made a tensor of
zeros the size of `x` per index and added them all (n passes over all of `x`, each in a
unit of its own); the stack writes `x`'s gradient once. Each element of the sum is one
gradient plus zeros, so the values are the same (but for the sign of a zero: `-0.0 + 0.0`
is `0.0`, the stack keeps `-0.0`)."""

from __future__ import annotations

from typing import Optional

from irjit.compiler.ir import Graph, Node, Value
from irjit.compiler.ir.constants import constant_value
from irjit.compiler.passes.eliminate_dead_code import eliminate_dead_code
from irjit.ops.types import ListType, TensorType


def _constant(v: Value):
    return constant_value(v.node) if v.node.kind == "prim::Constant" else None


def _is_sum(n: Node) -> bool:
    """An addition of two tensors with alpha 1 (or autodiff's AutogradAdd)."""
    if n.kind == "prim::AutogradAdd":
        return len(n.inputs) == 2
    return n.kind == "aten::add" and len(n.inputs) == 3 and \
        all(isinstance(v.type, TensorType) for v in n.inputs[:2]) and _constant(n.inputs[2]) == 1 \
        and type(_constant(n.inputs[2])) is int


def _terms(v: Value, root: bool = True) -> list[Value]:
    """The leaves of the tree of sums `v` is the root of (a sum used only by the tree is
    an inner node of it)."""
    n = v.node
    if _is_sum(n) and (root or len(v.uses) == 1):
        return _terms(n.inputs[0], False) + _terms(n.inputs[1], False)
    return [v]


def _select_of(v: Value) -> Optional[tuple]:
    """(gradient, sizes, dim, index) of a `select_backward` used once, with constants."""
    n = v.node
    if n.kind != "aten::select_backward" or len(v.uses) != 1 or len(n.inputs) != 4:
        return None
    sizes, dim, index = (_constant(x) for x in n.inputs[1:])
    if not (isinstance(sizes, list) and type(dim) is int and type(index) is int):
        return None
    rank = len(sizes)
    if not -rank <= dim < rank or not -sizes[dim % rank] <= index < sizes[dim % rank]:
        return None
    return n.inputs[0], tuple(sizes), dim % rank, index % sizes[dim % rank]


def stack_select_sums(graph: Graph) -> bool:
    """Rewrite every such sum (see the module docstring) in the graph's top-level block, then
    remove what it replaced; whether anything changed."""
    changed = False
    for n in reversed(list(graph.block.nodes())):
        if not n.is_inserted() or not _is_sum(n) or not isinstance(n.output.type, TensorType):
            continue
        terms = _terms(n.output)
        selects = [_select_of(t) for t in terms]
        if any(s is None for s in selects) or len({s[1:3] for s in selects}) != 1:
            continue
        sizes, dim = selects[0][1], selects[0][2]
        by_index = {s[3]: s[0] for s in selects}
        out = n.output.type
        if len(by_index) != len(selects) or sorted(by_index) != list(range(sizes[dim])) or \
                out.complete_sizes() != sizes or any(
                    not isinstance(g.type, TensorType) or g.type.scalar_type != out.scalar_type
                    for g in by_index.values()):
            continue
        graph.set_insert_point(n)
        pieces = graph.insert("prim::ListConstruct", [by_index[i] for i in range(sizes[dim])],
                              output_types=[ListType(TensorType())]).output
        stack = graph.insert("aten::stack", [pieces, graph.insert_constant(dim)],
                             output_types=[out]).output
        n.output.replace_all_uses_with(stack)
        changed = True
    if changed:  # (the sums and select_backwards)
        eliminate_dead_code(graph)
    return changed
