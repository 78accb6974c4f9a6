"""Erase number types, mirroring PyTorch's EraseNumberTypes (erase_number_types.cpp, run before
ONNX export): number constants become 0-d tensor constants, number values become 0-d tensor
types, and the conversions between numbers and tensors (`aten::Int`, `prim::NumToTensor`, ...) go."""

from __future__ import annotations

import numpy as np

from irjit.compiler.ir import Graph, Value
from irjit.compiler.ir.constants import constant_value, make_constant
from irjit.ops import facts
from irjit.ops.type_parser import parse_type_text
from irjit.ops.types import BOOL, COMPLEX, FLOAT, INT, NUMBER

from .registry import register_pass

_TENSOR_OF = {INT: "Long(device=cpu)", FLOAT: "Double(device=cpu)",
              COMPLEX: "ComplexDouble(device=cpu)", NUMBER: "Double(device=cpu)"}
_DTYPE_OF = {INT: np.int64, FLOAT: np.float64, COMPLEX: np.complex128, BOOL: np.bool_}


def _erase_number(v: Value) -> None:
    if v.type in _TENSOR_OF:
        v.type = parse_type_text(_TENSOR_OF[v.type])


def _erase_number_or_bool(v: Value) -> None:
    if v.type == BOOL:
        v.type = parse_type_text("Bool(device=cpu)")
    else:
        _erase_number(v)


def _is_conversion(node) -> bool:
    return node.kind in ("aten::Bool", "prim::NumToTensor") or facts.has_tag(node.kind, "tensor_to_number")


def _erase(graph: Graph, block) -> bool:
    changed = False
    for node in list(block.nodes()):
        for v in node.inputs:
            changed |= v.type in _TENSOR_OF
            _erase_number(v)
        for b in node.blocks:
            changed |= _erase(graph, b)
        if node.kind == "prim::Constant" and node.output.type in _DTYPE_OF:
            array = np.array(constant_value(node), dtype=_DTYPE_OF[node.output.type])
            tensor = make_constant(graph, array)
            tensor.scope, tensor.source = node.scope, node.source
            tensor.insert_before(node)
            tensor.output.copy_metadata(node.output)
            node.output.replace_all_uses_with(tensor.output)
            node.destroy()
            changed = True
        elif _is_conversion(node):
            node.output.replace_all_uses_with(node.inputs[0])
            node.destroy()
            changed = True
        else:
            for v in node.outputs:
                changed |= v.type in _TENSOR_OF or v.type == BOOL
                _erase_number_or_bool(v)
    return changed


@register_pass("erase_number_types")
def run(graph: Graph) -> bool:
    """PyTorch's EraseNumberTypes: numbers become 0-d tensors, number/tensor conversions go."""
    changed = False
    for v in graph.inputs:
        changed |= v.type in _TENSOR_OF or v.type == BOOL
        _erase_number_or_bool(v)
    return _erase(graph, graph.block) | changed
