"""A scripted function's signature: its parameters (with types and defaults) and return type."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from irjit.compiler.ir import Type
from irjit.ops.registry import NO_DEFAULT


@dataclass
class Parameter:
    """One argument of a scripted function's signature."""

    name: str
    type: Type
    default: Any = NO_DEFAULT


@dataclass
class Signature:
    name: str
    params: list[Parameter]
    return_type: Type
