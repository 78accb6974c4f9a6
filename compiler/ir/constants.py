"""Building `prim::Constant` nodes and reading their values back, as PyTorch's insertConstant/toIValue do."""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from .attributes import AnnotatedValue, TensorData
from irjit.ops.types import (BOOL, DEVICE, DTYPE_TO_SCALAR_TYPE, FLOAT, INT, NONE, STR, COMPLEX,
                    Device, ListType, NamedType, TensorType, Type)


def tensor_type_of(array: np.ndarray, requires_grad: bool = False) -> TensorType:
    """The complete tensor type PyTorch gives a contiguous CPU tensor."""
    sizes = tuple(int(s) for s in array.shape)
    strides, acc = [], 1
    for s in reversed(sizes):
        strides.append(acc)
        acc *= max(s, 1)
    return TensorType(DTYPE_TO_SCALAR_TYPE.get(str(array.dtype), "Float"), sizes,
                      tuple(reversed(strides)), requires_grad, "cpu")


def make_constant(graph, value: Any, type: Optional[Type] = None):
    """An uninserted `prim::Constant` node holding `value`."""
    n = graph.create("prim::Constant", num_outputs=1)
    if value is None:
        n.output.type = type or NONE
    elif isinstance(value, bool):
        n.set_attr("value", "i", int(value))
        n.output.type = BOOL
    elif isinstance(value, (int, np.integer)):
        n.set_attr("value", "i", int(value))
        n.output.type = type or INT
    elif isinstance(value, (float, np.floating)):
        n.set_attr("value", "f", float(value))
        n.output.type = FLOAT
    elif isinstance(value, complex):
        n.set_attr("value", "c", value)
        n.output.type = COMPLEX
    elif isinstance(value, Device):
        n.set_attr("value", "s", str(value))
        n.output.type = DEVICE
    elif isinstance(value, str):
        n.set_attr("value", "s", value)
        n.output.type = STR
    elif isinstance(value, np.ndarray):
        n.set_attr("value", "t", TensorData(value))
        n.output.type = type or tensor_type_of(value)
    elif isinstance(value, (list, tuple)) and all(isinstance(x, bool) for x in value) and value:
        n.set_attr("value", "ival", list(value))
        n.output.type = ListType(BOOL)
    elif isinstance(value, (list, tuple)) and all(isinstance(x, (int, np.integer)) for x in value):
        n.set_attr("value", "is", tuple(int(x) for x in value))
        n.output.type = type or ListType(INT)
    elif isinstance(value, (list, tuple)) and all(isinstance(x, float) for x in value):
        n.set_attr("value", "fs", tuple(value))
        n.output.type = ListType(FLOAT)
    elif isinstance(value, (list, tuple)) and all(isinstance(x, str) for x in value):
        n.set_attr("value", "ss", tuple(value))
        n.output.type = ListType(STR)
    else:
        n.set_attr("value", "ival", value)
        n.output.type = type or NamedType("Any")
    return n


def constant_value(node) -> Any:
    """The Python value of a `prim::Constant` (bools from their type, tensors as TensorData)."""
    assert node.kind == "prim::Constant"
    entry = node.attrs.get("value")
    t = node.outputs[0].type if node.outputs else None
    if entry is None:
        return None
    kind, value = entry
    if kind == "i" and t == BOOL:
        return bool(value)
    if kind == "s" and t == DEVICE:
        return Device(value)
    if kind in ("is", "fs", "ss"):
        return list(value)
    return value


def plain_constant_value(node) -> Any:
    """`constant_value`, with a value printed with its type (`annotate(List[int], [])`) as the
    value itself: what an op computing with the constant sees."""
    value = constant_value(node)
    return value.value if isinstance(value, AnnotatedValue) else value
