"""Fuse `aten::add(mm(a, b), c, 1)` into `aten::addmm(c, a, b, 1, 1)`, mirroring PyTorch's
FuseAddMM (the addmm rule of peephole.cpp): the add stays, now unused, for dead code elimination."""

from __future__ import annotations

from irjit.compiler.ir import Graph
from irjit.ops.types import TensorType

from .peephole_helpers import const_value, is_const, type_fits
from ._rewrite import rewrite_nodes
from .registry import register_pass


def _is_tensor_add_alpha_one(node) -> bool:
    return (node.kind == "aten::add" and len(node.inputs) == 3
            and all(type_fits(v.type, "Tensor") for v in node.inputs[:2])
            and is_const(node.inputs[2]) and const_value(node.inputs[2]) == 1)


def _fuse(graph: Graph, node) -> bool:
    for mm_side in (0, 1):
        bias = node.inputs[1 - mm_side]
        if not isinstance(bias.type, TensorType) or bias.type.sizes is None:
            continue  # the bias might be a scalar of another dtype, which addmm rejects
        mm = node.inputs[mm_side].node
        if mm.kind != "aten::mm" or len(mm.inputs) != 2:
            continue
        mat1, mat2 = mm.inputs
        dtype_from = mat1 if getattr(mat1.type, "scalar_type", None) else mat2
        mat_dtype = getattr(dtype_from.type, "scalar_type", None)
        if mat_dtype is None:
            continue
        graph.set_insert_point(node)
        if len(bias.type.sizes) == 0 and bias.type.scalar_type != mat_dtype:
            cast = graph.insert("aten::type_as", [bias, dtype_from])
            bias = cast.output
        one = graph.insert_constant(1)
        addmm = graph.insert("aten::addmm", [bias, mat1, mat2, one, one])
        addmm.output.copy_metadata(node.output)
        node.output.replace_all_uses_with(addmm.output)
        return True
    return False



@register_pass("fuse_addmm")
def run(graph: Graph) -> bool:
    """PyTorch's FuseAddMM: `mm(a, b) + c` (alpha 1, c of known rank) becomes `addmm(c, a, b)`."""
    return rewrite_nodes(graph.block, _is_tensor_add_alpha_one, lambda n: _fuse(graph, n))
