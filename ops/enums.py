"""TorchScript enums: members as run-time values, and the ops on them (`==`, `.name`, `.value`).

PyTorch prints an enum constant by name only (`prim::Constant[value=__torch__.Color.RED]()`), so
a member's value is known only when the user gives the enum's values: `register_enum` (the
`irtool run --attributes` sidecar's `"$enums"` entry does it), the counterpart of the class
registry that holds PyTorch's enum types.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .errors import IRRuntimeError
from .registry import op

_VALUES: dict[str, dict[str, Any]] = {}


@dataclass(frozen=True)
class EnumMember:
    """One member of an enum class, by qualified class name and member name."""
    enum: str
    name: str
    is_enum_member = True  # what the op registry's `AnyEnumType` accepts

    def __str__(self) -> str:
        return f"{self.enum}.{self.name}"


def register_enum(qualified_name: str, values: dict[str, Any]) -> None:
    """Make the values of enum class `qualified_name` (member name -> int, float or str) known."""
    _VALUES[qualified_name] = dict(values)


def enum_value(member: EnumMember) -> Any:
    try:
        return _VALUES[member.enum][member.name]
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
