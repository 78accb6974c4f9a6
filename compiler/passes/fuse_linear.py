"""Fuse matrix products with a transposed weight into `aten::linear`, mirroring PyTorch's
FuseLinear (fuse_linear.cpp): `addmm(b, x, t(w), 1, 1)`, `add_(matmul(x, t(w)), b, 1)` and
`matmul(x, t(w))` become `linear(x, t(t(w)), b)`, and a final rewrite drops the double
transpose. Each rewrite places its nodes as PyTorch's SubgraphRewriter does: right after the
last node of the block that defines one of the match's inputs (at the block's start if none)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from irjit.compiler.ir import Block, Graph, Node, Value
from irjit.ops.types import OptionalType, TENSOR

from .peephole_helpers import const_int, is_const
from .registry import register_pass


@dataclass
class _Match:
    inputs: list[Value]   # the replacement's inputs: x, weight, bias (None: a None constant)
    output: Value         # the value the linear replaces
    nodes: list[Node]     # the matched nodes, deleted after the rewrite


def _is_int_one(v: Value) -> bool:
    return is_const(v) and const_int(v) == 1


def _only_used_by(v: Value, user: Node) -> bool:
    return all(u.user is user for u in v.uses)


def _transposed(v: Value) -> bool:
    return v.node.kind == "aten::t"


def _match_addmm(n: Node) -> Optional[_Match]:
    if n.kind != "aten::addmm" or len(n.inputs) != 5:
        return None
    bias, x, weight_t, beta, alpha = n.inputs
    if not (_is_int_one(beta) and _is_int_one(alpha) and _transposed(weight_t)):
        return None
    return _Match([x, weight_t, bias], n.output, [n])


def _match_matmul_add(n: Node) -> Optional[_Match]:
    if n.kind != "aten::add_" or len(n.inputs) != 3 or not _is_int_one(n.inputs[2]):
        return None
    mm = n.inputs[0].node
    if mm.kind != "aten::matmul" or not _only_used_by(mm.output, n) or not _transposed(mm.inputs[1]):
        return None
    return _Match([mm.inputs[0], mm.inputs[1], n.inputs[1]], n.output, [mm, n])


def _match_matmul(n: Node) -> Optional[_Match]:
    if n.kind != "aten::matmul" or len(n.inputs) != 2 or not _transposed(n.inputs[1]):
        return None
    return _Match([n.inputs[0], n.inputs[1], None], n.output, [n])


def _match_double_transpose(n: Node) -> Optional[_Match]:
    if n.kind != "aten::linear" or len(n.inputs) != 3:
        return None
    t2 = n.inputs[1].node
    if not _transposed(n.inputs[1]) or not _only_used_by(t2.output, n):
        return None
    t1 = t2.inputs[0].node
    if not _transposed(t2.inputs[0]) or not _only_used_by(t1.output, t2):
        return None
    return _Match([n.inputs[0], t1.inputs[0], n.inputs[2]], n.output, [t1, t2, n])


def _insertion_point(block: Block, inputs: list[Value]) -> Node:
    last = None
    for v in inputs:
        n = v.node
        if n.owning_block is block and n is not block.param_node and (last is None or last.is_before(n)):
            last = n
    return last.next if last is not None else block.first_node


def _rewrite_all(graph: Graph, match: Callable[[Node], Optional[_Match]], transpose: bool) -> bool:
    """One SubgraphRewriter run: find every match first, then rewrite them in program order
    and delete the matched nodes at the end."""
    matches = [m for m in map(match, list(graph.walk())) if m is not None]
    doomed: list[Node] = []
    for m in matches:
        if any(n in doomed for n in m.nodes):
            continue  # overlaps a match already rewritten
        block = m.output.node.owning_block
        inputs = [v for v in m.inputs if v is not None]
        graph.set_insert_point(_insertion_point(block, inputs))
        x, weight, bias = m.inputs
        if transpose:
            weight = graph.insert("aten::t", [weight]).output
        if bias is None:
            bias = graph.insert_constant(None, OptionalType(TENSOR))
        linear = graph.insert("aten::linear", [x, weight, bias])
        linear.output.type = m.output.type
        m.output.replace_all_uses_with(linear.output)
        doomed.extend(m.nodes)
    for n in reversed(doomed):
        n.destroy()
    return bool(doomed)


@register_pass("fuse_linear")
def run(graph: Graph) -> bool:
    """PyTorch's FuseLinear: addmm / matmul(+add_) with a transposed weight become `aten::linear`."""
    changed = False
    for match in (_match_addmm, _match_matmul_add, _match_matmul):
        changed |= _rewrite_all(graph, match, transpose=True)
    changed |= _rewrite_all(graph, _match_double_transpose, transpose=False)
    return changed
