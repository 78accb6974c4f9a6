"""Decompose ops into simpler aten ops, mirroring PyTorch's DecomposeOps (decompose_ops.cpp):
`addmm(b, x, w, beta=1, alpha=1)` becomes `b + x.mm(w)` (so BatchMM can see the mm); then
shape propagation, constant propagation and DCE when anything changed. PyTorch decomposes
batch_norm/layer_norm only for CUDA inputs, so on CPU they are left alone, as here."""

from __future__ import annotations

from irjit.compiler.ir import Graph, SourceLocation

from .eliminate_dead_code import eliminate_dead_code
from .peephole_helpers import const_value, matches
from .registry import all_passes, register_pass

# where the nodes of PyTorch's decomposition script (`self + mat1.mm(mat2)`) point
_MM_SOURCE = SourceLocation("<string>", 3, 24)
_ADD_SOURCE = SourceLocation("<string>", 3, 17)


def _decompose(block) -> bool:
    changed = False
    for node in block.nodes():
        for b in node.blocks:
            changed |= _decompose(b)
        if not matches(node, "aten::addmm", "Tensor", "Tensor", "Tensor", "Scalar", "Scalar"):
            continue
        beta, alpha = const_value(node.inputs[3], None), const_value(node.inputs[4], None)
        if beta is None or alpha is None or beta != 1 or alpha != 1:
            continue
        g = node.graph
        g.set_insert_point(node)
        one = g.insert_constant(1)
        mm = g.insert("aten::mm", node.inputs[1:3])
        mm.source = _MM_SOURCE
        add = g.insert("aten::add", [node.inputs[0], mm.output, one])
        add.source = _ADD_SOURCE
        add.output.type = node.output.type
        node.output.replace_all_uses_with(add.output)
        node.destroy()
        changed = True
    return changed


@register_pass("decompose_ops")
def run(graph: Graph) -> bool:
    """PyTorch's DecomposeOps: addmm with unit beta/alpha -> add + mm."""
    changed = _decompose(graph.block)
    if changed:
        passes = all_passes()
        passes["propagate_input_shapes"].run(graph)
        for name in ("constant_propagation", "constant_prop"):
            if name in passes:
                passes[name].run(graph)
                break
        eliminate_dead_code(graph)
    return changed
