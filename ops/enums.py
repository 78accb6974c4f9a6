"""TorchScript enums: members as run-time values, and the ops on them (`==`, `.name`, `.value`).

PyTorch prints an enum constant by name only (`prim::Constant[value=__torch__.Color.RED]()`), so
a member's value is known only when the user gives the enum's values. They belong to the program
that is running, not to the process (two graphs may define the same enum name differently): a
Function holds its table (the `"$enums"` entry of its attributes, from `irtool run`'s sidecar)
and runs with it active (`enum_values`), the counterpart of the compilation unit that holds
PyTorch's enum types.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Mapping

from .errors import IRRuntimeError
from .registry import op

# enum class name -> member name -> value, of the program running in this thread (or task)
_ACTIVE: ContextVar[Mapping[str, Mapping[str, Any]]] = ContextVar("enum_values", default={})


@dataclass(frozen=True)
class EnumMember:
    """One member of an enum class, by qualified class name and member name."""
    enum: str
    name: str
    is_enum_member = True  # what the op registry's `AnyEnumType` accepts

    def __str__(self) -> str:
        return f"{self.enum}.{self.name}"


def set_enum_values(table: Mapping[str, Mapping[str, Any]]):
    """Make `table` (enum class name -> member name -> int, float or str) the enum values of
    what runs next in this thread; returns the token `reset_enum_values` takes to bring the
    previous table back (a context manager costs more than a small graph's native call)."""
    return _ACTIVE.set(table)


def reset_enum_values(token) -> None:
    _ACTIVE.reset(token)


@contextmanager
def enum_values(table: Mapping[str, Mapping[str, Any]]):
    """`table` as the enum values of what runs inside the block, in this thread."""
    token = set_enum_values(table)
    try:
        yield
    finally:
        reset_enum_values(token)


def enum_value(member: EnumMember) -> Any:
    try:
        return _ACTIVE.get()[member.enum][member.name]
    except KeyError:
        raise IRRuntimeError(
            f"prim::EnumValue: the value of {member} is not printed in the graph; give the enum's "
            f"values in the attributes file as {{\"$enums\": {{\"{member.enum}\": {{\"{member.name}\": ...}}}}}}"
        ) from None


@op("aten::eq.enum(AnyEnumType a, AnyEnumType b) -> bool")
def eq_enum(a, b):
    return a == b


@op("aten::ne.enum(AnyEnumType a, AnyEnumType b) -> bool")
def ne_enum(a, b):
    return a != b


@op("prim::EnumName(AnyEnumType enum) -> str")
def enum_name(enum):
    return enum.name


@op("prim::EnumValue(AnyEnumType enum) -> Any")
def enum_value_op(enum):
    return enum_value(enum)
