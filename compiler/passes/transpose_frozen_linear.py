"""Replace frozen linears by a matmul with the pre-transposed weight, mirroring PyTorch's
FrozenLinearTranspose (frozen_linear_transpose.cpp): `linear(x, W, b)` with constant W, b becomes
`matmul(x, W^T) + b`, W^T a contiguous constant, so no transpose runs at inference time."""

from __future__ import annotations

import numpy as np

from irjit.compiler.ir import Graph

from ._frozen_conv import constant_parameters, insert_tensor, is_none, tensor_of
from .registry import register_pass


def _replace(graph: Graph, linear) -> bool:
    weight = tensor_of(linear.inputs[1])
    if weight is None:
        return False
    weight_t = insert_tensor(graph, np.ascontiguousarray(weight.T), linear)
    matmul = graph.create("aten::matmul", [linear.inputs[0], weight_t])
    matmul.insert_after(weight_t.node)
    result = matmul.output
    if not is_none(linear.inputs[2]):
        graph.set_insert_point(matmul)
        one = graph.insert_constant(1)
        add = graph.create("aten::add", [matmul.output, linear.inputs[2], one])
        add.insert_after(matmul)
        result = add.output
    linear.output.replace_all_uses_with(result)
    linear.destroy()
    return True


@register_pass("transpose_frozen_linear")
def run(graph: Graph) -> bool:
    """PyTorch's FrozenLinearTranspose: constant-weight `aten::linear` -> `matmul(x, W^T) + b`."""
    changed = False
    for node in list(graph.walk()):
        if node.kind == "aten::linear" and len(node.inputs) == 3 and constant_parameters(node):
            changed |= _replace(graph, node)
    return changed
