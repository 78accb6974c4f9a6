"""Setting a graph's input types from a list of types, as an ArgumentSpec specializes a graph
for the arguments of one call (a helper for `irtool opt --input-types` and pipelines)."""

from __future__ import annotations

from typing import Sequence

from irjit.compiler.ir import ClassType, Graph, OptionalType, TensorType, Type, Value
from irjit.ops.types import NamedType, is_subtype


class InputTypeError(Exception):
    """The given types do not fit the graph's inputs (count or kind)."""


def parse_input_types(text: str) -> list[Type]:
    """`"Float(1, 3, requires_grad=1), int"` -> types (commas inside brackets do not split)."""
    from irjit.ops.errors import SubParseError
    from irjit.ops.type_parser import parse_type_text, split_top_level
    parts = split_top_level(text)
    if not parts:
        return []
    types = []
    for p in parts:
        if not p:
            raise InputTypeError(f"empty type in input types {text!r}")
        try:
            types.append(parse_type_text(p))
        except SubParseError as e:
            raise InputTypeError(f"{e.reason}") from None
    return types


def specializable_inputs(graph: Graph) -> list[Value]:
    """The inputs that take argument types: all of them but a leading module `%self`."""
    inputs = list(graph.inputs)
    if inputs and isinstance(inputs[0].type, ClassType):
        inputs = inputs[1:]
    return inputs


def _fits(declared: Type, given: Type) -> bool:
    if isinstance(declared, OptionalType):
        return given == NamedType("NoneType") or _fits(declared.elem, given)
    if isinstance(declared, TensorType) or isinstance(given, TensorType):
        return isinstance(declared, TensorType) and isinstance(given, TensorType)
    if isinstance(declared, NamedType) and declared.name in ("Scalar", "number", "Any"):
        return True
    return declared == given or is_subtype(given, declared)


def specialize_input_types(graph: Graph, types: Sequence[Type]) -> None:
    """Set the types of the graph's inputs (after a module `%self`) to `types`, one per input;
    a tensor type may refine a tensor input, other types must match the declared kind."""
    inputs = specializable_inputs(graph)
    if len(types) != len(inputs):
        names = ", ".join("%" + v.name for v in inputs)
        raise InputTypeError(f"{len(types)} input types given but the graph takes "
                             f"{len(inputs)} inputs ({names})")
    for v, t in zip(inputs, types):
        if not _fits(v.type, t):
            raise InputTypeError(f"input %{v.name} is declared {v.type} and cannot take type {t}")
    for v, t in zip(inputs, types):
        v.type = t
