"""Folded values as constants the way PyTorch's tryInsertConstant (ir/constants.cpp) makes them:
which lists and tuples are insertable, which attribute kind holds them, their type, and their
printed form (IValue::repr with ir.cpp's tensor formatter, `annotate(List[...], ...)` where
the element type cannot be read off the elements)."""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from irjit.compiler.ir.attributes import AnnotatedValue, TensorData, format_ivalue
from irjit.compiler.ir.constants import tensor_type_of
from irjit.ops.types import (BOOL, COMPLEX, FLOAT, INT, NONE, STR, GenericType, ListType, annotation,
                             NamedType, OptionalType, TensorType, TupleType, Type)

NOT_INSERTABLE = object()


def insertable(value: Any) -> Any:
    """`value` with numpy scalars unboxed and tensors as arrays, or NOT_INSERTABLE when PyTorch's
    insertableIValue refuses it (objects, dicts, anything else)."""
    if isinstance(value, np.ndarray):
        return np.array(value)
    if isinstance(value, np.generic):
        return value.item()
    if value is None or isinstance(value, (bool, int, float, str, complex)):
        return value
    if isinstance(value, (list, tuple)):
        items = [insertable(x) for x in value]
        if any(x is NOT_INSERTABLE for x in items):
            return NOT_INSERTABLE
        return tuple(items) if isinstance(value, tuple) else items
    return NOT_INSERTABLE


def value_type(value: Any, declared: Optional[Type] = None) -> Type:
    """The type PyTorch gives a constant of `value` (`IValue::type`); a list keeps the declared
    type of the value it replaces (the list's static type), a tuple its elements' types."""
    if value is None:
        return NONE
    if isinstance(value, bool):
        return BOOL
    if isinstance(value, int):
        return INT
    if isinstance(value, float):
        return FLOAT
    if isinstance(value, complex):
        return COMPLEX
    if isinstance(value, str):
        return STR
    if isinstance(value, np.ndarray):
        return tensor_type_of(value)
    if isinstance(value, tuple):
        elems = declared.elems if isinstance(declared, TupleType) and \
            len(declared.elems) == len(value) else (None,) * len(value)
        return TupleType(tuple(value_type(x, t) for x, t in zip(value, elems)))
    if isinstance(value, list):
        if isinstance(declared, ListType):
            return declared
        kinds = {value_type(x) for x in value}
        if len(kinds) == 1:
            return ListType(kinds.pop())
    return NamedType("Any")


def _needs_annotation(elem: Type) -> bool:
    """`!elementTypeCanBeInferredFromMembers`: optionals, unions, numbers and Any."""
    if isinstance(elem, OptionalType):
        return True
    if isinstance(elem, GenericType) and elem.name == "Union":
        return True
    return isinstance(elem, NamedType) and elem.name in ("Scalar", "Any")


def _repr(value: Any, t: Type) -> str:
    if isinstance(value, TensorData):
        return value.print_form()
    if isinstance(value, list):
        elem = t.elem if isinstance(t, ListType) else NamedType("Any")
        body = "[" + ", ".join(_repr(x, elem) for x in value) + "]"
        if not value or _needs_annotation(elem):
            return f"annotate({annotation(ListType(elem))}, {body})"
        return body
    if isinstance(value, tuple):
        elems = t.elems if isinstance(t, TupleType) and len(t.elems) == len(value) else \
            (NamedType("Any"),) * len(value)
        inner = ", ".join(_repr(x, e) for x, e in zip(value, elems))
        return "(" + inner + ("," if len(value) == 1 else "") + ")"
    return format_ivalue(value)


def _boxed(value: Any) -> Any:
    """Tensors inside a generic value as TensorData, so they print as ir.cpp prints them."""
    if isinstance(value, np.ndarray):
        return TensorData(value)
    if isinstance(value, list):
        return [_boxed(x) for x in value]
    if isinstance(value, tuple):
        return tuple(_boxed(x) for x in value)
    return value


def generic_attribute(value: Any, t: Type) -> Any:
    """The `ival` attribute for a list or tuple constant of type `t`: the value itself when
    PyTorch prints it plainly, else an AnnotatedValue holding the exact printed text."""
    boxed = _boxed(value)
    text = _repr(boxed, t)
    return boxed if text == format_ivalue(boxed) else AnnotatedValue(text, boxed)


def is_tensor_list(value: list, t: Optional[Type]) -> bool:
    """A list PyTorch stores as a `ts` attribute (`IValue::isTensorList`)."""
    if value:
        return all(isinstance(x, np.ndarray) for x in value)
    return isinstance(t, ListType) and isinstance(t.elem, TensorType)
