"""PyTorch's BatchMM (torch/csrc/jit/passes/batch_mm.cpp): batch many small `aten::mm`s.

Two rewrites, both skipped for a graph holding an aten op with a mutable schema (PyTorch's
`hasMutableOperators`; "TODO(suo): make BatchMM mutability-safe"):

* **Tree reduction.** A tree of `aten::add(Tensor, Tensor, alpha)` whose leaves are
  `aten::mm`s (or `aten::t` of an `aten::mm`, rewritten `(AB)^T = B^T A^T`), each inner
  operand used exactly once, with at least `MIN_FUSION_SIZE` (4) leaves, becomes one matrix
  product: `mm(cat([L1, L2, ...], 1), cat([R1, R2, ...], 0))`.
* **Side batching.** At least `HOW_MANY_IS_MANY` (8) `aten::mm`s of one block using the same
  value as their left (right) operand, none depending on another (PyTorch's
  `couldMoveBeforeTopologically`), are moved together and become one `aten::mm` of that
  value with the `aten::cat` of the other operands (along dim 1 for a shared left operand,
  dim 0 for a shared right one), split back by `prim::ConstantChunk`.

Then dead code is removed and `peephole{disable_shape_peepholes}` runs, as in PyTorch.

PyTorch emits `prim::MMTreeReduce` / `prim::MMBatchSide`, operators that check at run time
whether the operands all have the same shape (and whether that shape is "fast" by its
TITAN V benchmarks) and otherwise fall back to separate mms. By default this pass emits
plain `aten::cat`/`aten::mm`/`prim::ConstantChunk` instead, so it needs at compile time
what those operators check at run time: every operand on a concatenated side must have a
complete, equal, 2-D shape in its type (and equal dtypes where known), and the same size
heuristics (`shape_is_fast_for_reduce`, `shape_is_fast_for_side`) must hold; trees and
groups failing that are left alone. With `pytorch_ops=True` the pass emits PyTorch's two
operators instead, exactly as torch 2.13 does (the interpreter does not run them).

One deliberate difference: PyTorch matches any `aten::add(Tensor, Tensor, alpha)` and then
ignores alpha (torch 2.13 turns `mm1 + 2 * mm2 + ...` into a plain sum); here an add joins
a tree only when its alpha is the constant 1.
"""

from __future__ import annotations

from typing import Optional

from irjit.compiler.ir import Block, Graph, Node, Value
from irjit.ops.types import INT, ListType, TENSOR, TensorType

from ._move import TopologicalMover
from ._side_effects import AliasDb, is_mutating
from .peephole_helpers import const_value, matches
from .registry import all_passes, register_pass

MIN_FUSION_SIZE = 4  # leaves of a tree (batch_mm.cpp's min_fusion_size)
HOW_MANY_IS_MANY = 8  # mms sharing an operand (batch_mm.cpp: "the current loop unrolling factor")
LHS, RHS = 0, 1  # PyTorch's `Side` enum, also the `side` attribute of prim::MMBatchSide


def _is_mm(n: Node) -> bool:
    return matches(n, "aten::mm", "Tensor", "Tensor")


def _is_t(n: Node) -> bool:
    return matches(n, "aten::t", "Tensor")


def _is_add(n: Node) -> bool:
    return matches(n, "aten::add", "Tensor", "Tensor", "Scalar")


def _alpha_is_one(add: Node) -> bool:
    alpha = const_value(add.inputs[2], None)
    return alpha is not None and not isinstance(alpha, (list, str)) and alpha == 1


# ---- static shapes (what PyTorch's operators check at run time)

def _shape(v: Value) -> Optional[tuple[int, int]]:
    t = v.type
    if not isinstance(t, TensorType):
        return None
    sizes = t.complete_sizes()
    return tuple(sizes) if sizes is not None and len(sizes) == 2 else None  # type: ignore


def _same_dtype(values: list[Value]) -> bool:
    known = {v.type.scalar_type for v in values
             if isinstance(v.type, TensorType) and v.type.scalar_type is not None}
    return len(known) <= 1


def _contiguous(sizes: tuple[int, ...]) -> tuple[int, ...]:
    strides, acc = [], 1
    for s in reversed(sizes):
        strides.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(strides))


def _cat_type(operands: list[Value], sizes: tuple[int, int]) -> TensorType:
    """The type of `cat(operands)`: the operands' dtype and device, contiguous `sizes`."""
    t = operands[0].type if isinstance(operands[0].type, TensorType) else TENSOR
    grads = [v.type.requires_grad if isinstance(v.type, TensorType) else None for v in operands]
    rg = None if any(g is None for g in grads) else any(grads)
    return TensorType(t.scalar_type, sizes, _contiguous(sizes), rg, t.device)


def _fast_for_reduce(lhs: tuple[int, int], rhs: tuple[int, int]) -> bool:
    # Numbers obtained by some simple benchmarks of fp32 gemms on a TITAN V (batch_mm.cpp)
    l, m, r = lhs[0], lhs[1], rhs[1]
    return m < 512 or (l < 256 and r < 256) or (l > 256 and r > 256)


def _fast_for_side(other: tuple[int, int]) -> bool:
    return other[0] * other[1] <= 1024 * 2048  # cutoff chosen on a TITAN V (batch_mm.cpp)


# ---- tree reduction

class _Token:
    """batch_mm.cpp's TreeToken: a label on an mm/t/add node that fits the tree pattern."""

    __slots__ = ("tree_size", "node", "is_root")

    def __init__(self, tree_size: int = 0, node: Optional[Node] = None, is_root: bool = False):
        self.tree_size, self.node, self.is_root = tree_size, node, is_root


def _transpose_token(t: Node, inp: _Token) -> _Token:
    if not _is_mm(inp.node):
        return _Token()
    inp.is_root = False
    return _Token(1, t, True)


def _add_token(add: Node, l: _Token, r: _Token) -> _Token:
    # See batch_mm.cpp's Note [Overlapping trees]
    if l is r or not l.is_root or not r.is_root:
        return _Token()
    l.is_root = r.is_root = False  # reserve the subtrees, so they can't be used again
    return _Token(l.tree_size + r.tree_size, add, True)


def _leaves(root: Node) -> list[Node]:
    """The tree's leaves (mm or t-of-mm nodes) in PyTorch's order (a stack from the root)."""
    out, stack = [], [root]
    while stack:
        n = stack.pop()
        if _is_add(n):
            stack.append(n.inputs[0].node)
            stack.append(n.inputs[1].node)
        else:
            out.append(n)
    return out


def _leaf_shapes(leaf: Node) -> tuple[Optional[tuple[int, int]], Optional[tuple[int, int]]]:
    """Static (lhs, rhs) shapes of a leaf; a t(mm(A, B)) leaf is mm(t(B), t(A))."""
    if _is_mm(leaf):
        return _shape(leaf.inputs[0]), _shape(leaf.inputs[1])
    a, b = leaf.inputs[0].node.inputs
    sa, sb = _shape(a), _shape(b)
    return (None if sb is None else (sb[1], sb[0])), (None if sa is None else (sa[1], sa[0]))


def _leaf_operands(leaf: Node) -> list[Value]:
    if _is_mm(leaf):
        return list(leaf.inputs)
    return list(leaf.inputs[0].node.inputs)


def _tree_is_static(leaves: list[Node]) -> bool:
    shapes = [_leaf_shapes(leaf) for leaf in leaves]
    lhs, rhs = shapes[0]
    if lhs is None or rhs is None or lhs[1] != rhs[0]:
        return False
    if any(s != (lhs, rhs) for s in shapes):
        return False
    operands = [v for leaf in leaves for v in _leaf_operands(leaf)]
    return _same_dtype(operands) and _fast_for_reduce(lhs, rhs)


def _remove_transposes(graph: Graph, leaves: list[Node]) -> list[Node]:
    """batch_mm.cpp's removeTransposesAndGatherMatmuls: t(mm(A, B)) becomes mm(t(B), t(A))."""
    matmuls = []
    for n in leaves:
        if _is_mm(n):
            matmuls.append(n)
            continue
        mm = n.inputs[0].node
        graph.set_insert_point(mm)
        at = graph.insert("aten::t", [mm.inputs[0]]).output
        bt = graph.insert("aten::t", [mm.inputs[1]]).output
        btat = graph.insert("aten::mm", [bt, at])
        n.output.replace_all_uses_with(btat.output)
        matmuls.append(btat)
    return matmuls


def _tree_reduce(block: Block, static: bool) -> bool:
    graph = block.graph
    tokens: dict[Node, _Token] = {}
    changed = False
    for node in block.nodes():
        if _is_mm(node):
            tokens[node] = _Token(1, node, True)
        elif _is_t(node):
            inp = tokens.get(node.inputs[0].node)
            if inp is not None:
                tokens[node] = _transpose_token(node, inp)
        elif _is_add(node):
            lhs, rhs = node.inputs[0].node, node.inputs[1].node
            l, r = tokens.get(lhs), tokens.get(rhs)
            # uses == 1 also guarantees that neither operand depends on the other
            if l is not None and r is not None and len(lhs.outputs) == 1 and \
                    len(rhs.outputs) == 1 and len(lhs.output.uses) == 1 and \
                    len(rhs.output.uses) == 1 and _alpha_is_one(node):
                token = _add_token(node, l, r)
                if token.is_root:
                    tokens[node] = token
        else:
            for b in node.blocks:
                changed |= _tree_reduce(b, static)

    for root in list(tokens.values()):
        if not root.is_root or root.tree_size < MIN_FUSION_SIZE:
            continue
        leaves = _leaves(root.node)
        if static and not _tree_is_static(leaves):
            continue
        matmuls = _remove_transposes(graph, leaves)
        graph.set_insert_point(root.node)
        lhs = [mm.inputs[0] for mm in matmuls]
        rhs = [mm.inputs[1] for mm in matmuls]
        if static:
            (ls, rs), k = _leaf_shapes(leaves[0]), len(matmuls)
            lcat = _insert_cat(graph, lhs, 1, (ls[0], ls[1] * k))
            rcat = _insert_cat(graph, rhs, 0, (rs[0] * k, rs[1]))
            new = graph.insert("aten::mm", [lcat, rcat], output_types=[root.node.output.type])
        else:
            new = graph.insert("prim::MMTreeReduce", lhs + rhs)
        root.node.output.replace_all_uses_with(new.output)
        changed = True  # the old tree is left to dead code elimination, as in PyTorch
    return changed


def _insert_cat(graph: Graph, operands: list[Value], dim: int, sizes: tuple[int, int]) -> Value:
    lst = graph.insert("prim::ListConstruct", operands, output_types=[ListType(TENSOR)]).output
    d = graph.insert_constant(dim)
    assert d.type == INT
    return graph.insert("aten::cat", [lst, d], output_types=[_cat_type(operands, sizes)]).output


# ---- side batching

def _independent_mm_uses(value: Value, mover: TopologicalMover) -> tuple[list[Node], list[Node]]:
    """batch_mm.cpp's gatherIndependentMMUses: mms of value's block using it as their lhs
    (rhs) and not as the other operand, dropping those depending on an earlier one."""

    def postprocess(mms: list[Node]) -> list[Node]:
        mms = sorted(mms, key=lambda n: n._pos)
        keep: list[Optional[Node]] = list(mms)
        for i in range(len(keep)):
            if keep[i] is None:
                continue
            for j in range(i + 1, len(keep)):
                if keep[j] is not None and not mover.try_move_before(keep[j], keep[i], True):
                    keep[j] = None
        return [n for n in keep if n is not None]

    block = value.node.owning_block
    lhses, rhses = [], []
    for use in value.uses:
        u = use.user
        if u.owning_block is block and _is_mm(u):
            if use.offset == 0 and u.inputs[1] is not value:
                lhses.append(u)
            elif use.offset == 1 and u.inputs[0] is not value:
                rhses.append(u)
    return postprocess(lhses), postprocess(rhses)


def _side_is_static(mms: list[Node], side: int) -> bool:
    others = [mm.inputs[1 - side] for mm in mms]
    shape = _shape(others[0])
    if shape is None or any(_shape(v) != shape for v in others):
        return False
    return _same_dtype(others + [mms[0].inputs[side]]) and _fast_for_side(shape)


def _batch_side(mms: list[Node], side: int, mover: TopologicalMover, static: bool) -> bool:
    for i in range(len(mms) - 2, -1, -1):
        if not mover.try_move_before(mms[i], mms[i + 1], False):
            return False  # PyTorch asserts; the moves made so far keep the program valid
    graph = mms[0].graph
    graph.set_insert_point(mms[0])
    const_side = mms[0].inputs[side]
    others = [mm.inputs[1 - side] for mm in mms]
    if static:
        dim = 1 if side == LHS else 0
        shape = _shape(others[0])
        sizes = (shape[0], shape[1] * len(mms)) if side == LHS else (shape[0] * len(mms), shape[1])
        cat = _insert_cat(graph, others, dim, sizes)
        mm = graph.insert("aten::mm", [const_side, cat] if side == LHS else [cat, const_side])
        new = graph.insert("prim::ConstantChunk", [mm.output],
                           output_types=[m.output.type for m in mms],
                           chunks=("i", len(mms)), dim=("i", dim))
    else:
        new = graph.insert("prim::MMBatchSide", [const_side] + others, num_outputs=len(mms),
                           side=("i", side))
    for mm, out in zip(mms, new.outputs):
        mm.output.replace_all_uses_with(out)
    return True


def _batch_side_block(block: Block, mover: TopologicalMover, static: bool) -> bool:
    changed = False
    considered: set[Value] = set()
    node = block.first_node
    while node is not block.return_node:  # PyTorch's iterator: `next` read after the body
        if _is_mm(node):
            for value in list(node.inputs):
                if value in considered:
                    continue
                considered.add(value)
                lhses, rhses = _independent_mm_uses(value, mover)
                if len(lhses) >= HOW_MANY_IS_MANY and (not static or _side_is_static(lhses, LHS)):
                    changed |= _batch_side(lhses, LHS, mover, static)
                if len(rhses) >= HOW_MANY_IS_MANY and (not static or _side_is_static(rhses, RHS)):
                    changed |= _batch_side(rhses, RHS, mover, static)
        else:
            for b in node.blocks:
                changed |= _batch_side_block(b, mover, static)
        node = node.next
    return changed


# ---- the pass

def has_mutable_operators(block: Block) -> bool:
    """batch_mm.cpp's hasMutableOperators: an aten node whose schema writes an input."""
    for n in block.nodes():
        if n.kind.startswith("aten::") and is_mutating(n):
            return True
        if any(has_mutable_operators(b) for b in n.blocks):
            return True
    return False


def batch_mm(graph: Graph, pytorch_ops: bool = False) -> bool:
    if has_mutable_operators(graph.block):
        return False
    static = not pytorch_ops
    mover = TopologicalMover(AliasDb(graph))
    changed = _tree_reduce(graph.block, static)
    changed |= _batch_side_block(graph.block, mover, static)
    graph.set_insert_point(graph.block)
    passes = all_passes()
    changed |= bool(passes["eliminate_dead_code"].run(graph))
    # transposes may have created t(t(x)); tensor types are not guaranteed to be right
    changed |= bool(passes["peephole"].run(graph, disable_shape_peepholes=True))
    return changed


@register_pass("batch_mm")
def run(graph: Graph, pytorch_ops: bool = False) -> bool:
    """Batch trees of added mms and mms sharing an operand into single mms (PyTorch's BatchMM)."""
    return batch_mm(graph, bool(pytorch_ops))
