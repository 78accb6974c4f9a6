"""Shared pieces of the frozen convolution folds (frozen_conv_folding.cpp): which nodes are
foldable convolutions, reading constant tensors, and inserting the folded ones."""

from __future__ import annotations

from typing import Optional

import numpy as np

from irjit.compiler.ir import Value
from irjit.compiler.ir.attributes import TensorData
from irjit.compiler.ir.constants import constant_value, make_constant
from irjit.ops import facts
from irjit.ops.types import NONE

from .peephole_helpers import const_bool


def is_foldable_conv(node) -> bool:
    """conv1d/2d/3d, or `aten::_convolution` known not to be transposed."""
    if facts.has_tag(node.kind, "convolution"):
        return True
    return node.kind == "aten::_convolution" and const_bool(node.inputs[6]) is False


def constant_parameters(node) -> bool:
    """Every input but the first is a `prim::Constant` (PyTorch's !nonConstantParameters)."""
    return all(v.node.kind == "prim::Constant" for v in node.inputs[1:])


def is_none(v: Value) -> bool:
    return v.type == NONE


def tensor_of(v: Value) -> Optional[np.ndarray]:
    """The data of a constant tensor, None when the graph does not hold it (`<Tensor>` without
    attached constants) or `v` is not a tensor constant."""
    if v.node.kind != "prim::Constant":
        return None
    data = constant_value(v.node)
    return data.array if isinstance(data, TensorData) else None


def insert_tensor(graph, array: np.ndarray, before) -> Value:
    """A tensor `prim::Constant` holding `array`, inserted before node `before`."""
    n = make_constant(graph, np.ascontiguousarray(array))
    n.scope = before.scope
    n.insert_before(before)
    return n.output


def _broadcasts_as_channels(op: np.ndarray, weight: np.ndarray) -> bool:
    """PyTorch's opDoesNotBroadCastWithConv: every dim of the operand is 1, except dim 1,
    which may equal the output channels."""
    if op.ndim > weight.ndim:
        return False
    return all(size == 1 or (i == 1 and size == weight.shape[0]) for i, size in enumerate(op.shape))


def pointwise_operand_fits(conv, op) -> bool:
    """PyTorch's checkConvAndBroadcastingOpPreConditions for `op(conv(...), c, ...)`."""
    if not constant_parameters(conv) or not constant_parameters(op) or len(conv.output.uses) > 1:
        return False
    weight = tensor_of(conv.inputs[1])
    if weight is None or not np.issubdtype(weight.dtype, np.floating):
        return False
    operand = op.inputs[1]
    if operand.type.is_tensor():
        array = tensor_of(operand)
        return array is not None and array.dtype != np.bool_ and _broadcasts_as_channels(array, weight)
    return isinstance(const_value_of(operand), (int, float)) and not isinstance(const_value_of(operand), bool)


def const_value_of(v: Value):
    return constant_value(v.node)


def operand_as(v: Value, shape: tuple, dtype) -> np.ndarray:
    """PyTorch's resizeConstantScalarOrTensorToShape: a scalar filled into `shape`, a one-element
    tensor expanded to it, any other tensor viewed as it."""
    array = tensor_of(v) if v.type.is_tensor() else np.full(shape, const_value_of(v), dtype)
    if array.size == 1:
        return np.broadcast_to(array.reshape(1), shape).copy()
    return array.reshape(shape)
