"""IR types, immutable and hashable, printing exactly as PyTorch's `operator<<(Type)` does.

Types are values: two structurally equal types compare equal, so parsers can memoize them
and passes can compare them cheaply.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional

from .dtypes import SCALAR_TYPE_TABLE

# PyTorch's ScalarType names as printed in tensor types, with the numpy dtype each maps to.
SCALAR_TYPES: dict[str, Optional[str]] = {t.name: t.numpy for t in SCALAR_TYPE_TABLE}
DTYPE_TO_SCALAR_TYPE = {v: k for k, v in SCALAR_TYPES.items() if v is not None}


class Device(str):
    """A device value (`cpu`, `cuda:0`), distinct from a plain string."""


class Type:
    """Base of all IR types."""

    __slots__ = ()

    def is_tensor(self) -> bool:
        return False

    def contained(self) -> tuple["Type", ...]:
        return ()


@dataclass(frozen=True, slots=True)
class TensorType(Type):
    """A tensor type with whatever is known about it: `Tensor`, `Float(2, *, strides=[..])`.

    `sizes is None` means the rank is unknown; an entry of None is an unknown size (`*`).
    `legacy_marks` records the 2017 format's per-dimension `!` (non-contiguous) flags.
    """

    scalar_type: Optional[str] = None
    sizes: Optional[tuple[Optional[int], ...]] = None
    strides: Optional[tuple[Optional[int], ...]] = None
    requires_grad: Optional[bool] = None
    device: Optional[str] = None
    undefined: Optional[bool] = None
    legacy_marks: Optional[tuple[bool, ...]] = None

    def is_tensor(self) -> bool:
        return True

    @property
    def rank(self) -> Optional[int]:
        return None if self.sizes is None else len(self.sizes)

    def complete_sizes(self) -> Optional[tuple[int, ...]]:
        """The concrete shape when every dimension is known, else None."""
        if self.sizes is None or any(s is None for s in self.sizes):
            return None
        return self.sizes  # type: ignore[return-value]

    def with_(self, **changes) -> "TensorType":
        return replace(self, **changes)

    def __str__(self) -> str:
        out = []
        if self.scalar_type is not None:
            out.append(self.scalar_type)
            if self.sizes is None:
                out.append("Tensor")
        else:
            out.append("Tensor")
        if self.sizes is not None:
            parts = []
            marks = self.legacy_marks
            for i, s in enumerate(self.sizes):
                text = "*" if s is None else str(s)
                if marks is not None and marks[i]:
                    text += "!"
                parts.append(text)
            if self.sizes and self.strides is not None and len(self.strides) == len(self.sizes) \
                    and all(s is not None for s in self.strides):
                parts.append("strides=[" + ", ".join(str(s) for s in self.strides) + "]")
            if self.requires_grad is not None:
                parts.append(f"requires_grad={int(self.requires_grad)}")
            if self.device is not None:
                parts.append(f"device={self.device}")
            out.append("(" + ", ".join(parts) + ")")
        else:
            parts = []
            if self.requires_grad is not None:
                parts.append(f"requires_grad={int(self.requires_grad)}")
            if self.device is not None:
                parts.append(f"device={self.device}")
            if parts:
                out.append("(" + ", ".join(parts) + ")")
        if self.undefined:
            out.append("[Undefined]")
        return "".join(out)


@dataclass(frozen=True, slots=True)
class NamedType(Type):
    """A type known by its name alone: int, float, bool, str, NoneType, Device, Function, ..."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class ClassType(Type):
    """A TorchScript class or module type, by qualified name (`__torch__.models.MyModule`)."""

    qualified_name: str

    @property
    def name(self) -> str:
        """The unmangled class name: `Linear` for `__torch__.x.___torch_mangle_3.Linear`."""
        return self.qualified_name.rsplit(".", 1)[-1]

    @property
    def unmangled_name(self) -> str:
        parts = [p for p in self.qualified_name.split(".") if not p.startswith("___torch_mangle_")]
        return ".".join(parts)

    def __str__(self) -> str:
        return self.qualified_name


@dataclass(frozen=True, slots=True)
class ListType(Type):
    elem: Type

    def contained(self):
        return (self.elem,)

    def __str__(self) -> str:
        return f"{self.elem}[]"


@dataclass(frozen=True, slots=True)
class OptionalType(Type):
    elem: Type

    def contained(self):
        return (self.elem,)

    def __str__(self) -> str:
        return f"{self.elem}?"


@dataclass(frozen=True, slots=True)
class TupleType(Type):
    """A tuple; with `names` a NamedTuple (`NamedTuple(value : Tensor, index : Tensor)`)."""

    elems: tuple[Type, ...]
    names: Optional[tuple[str, ...]] = None
    defaults: Optional[tuple[Optional[str], ...]] = None

    def contained(self):
        return self.elems

    def __str__(self) -> str:
        if self.names is None:
            return "(" + ", ".join(str(e) for e in self.elems) + ")"
        parts = []
        for i, (n, e) in enumerate(zip(self.names, self.elems)):
            text = f"{n} : {e}"
            if self.defaults is not None and self.defaults[i] is not None:
                text += f" = {self.defaults[i]}"
            parts.append(text)
        return "NamedTuple(" + ", ".join(parts) + ")"


@dataclass(frozen=True, slots=True)
class GenericType(Type):
    """A parameterized type printed as `Name(A, B)` or `Name[A]`: Dict, Future, RRef, Union..."""

    name: str
    args: tuple[Type, ...]
    brackets: str = "()"

    def contained(self):
        return self.args

    def __str__(self) -> str:
        open_, close = self.brackets
        return f"{self.name}{open_}" + ", ".join(str(a) for a in self.args) + close


def DictType(key: Type, value: Type) -> GenericType:
    return GenericType("Dict", (key, value))


def FutureType(elem: Type) -> GenericType:
    return GenericType("Future", (elem,), "[]")


TENSOR = TensorType()
INT = NamedType("int")
FLOAT = NamedType("float")
BOOL = NamedType("bool")
STR = NamedType("str")
NONE = NamedType("NoneType")
DEVICE = NamedType("Device")
NUMBER = NamedType("Scalar")
FUNCTION = NamedType("Function")
COMPLEX = NamedType("complex")
ANY = NamedType("Any")


def annotation(t: Type) -> str:
    """A type as TorchScript source spells it (`Type::annotation_str`): `List[Optional[int]]`."""
    if isinstance(t, TensorType):
        return "Tensor"
    if isinstance(t, ListType):
        return f"List[{annotation(t.elem)}]"
    if isinstance(t, OptionalType):
        return f"Optional[{annotation(t.elem)}]"
    if isinstance(t, TupleType) and t.names is None:
        return "Tuple[" + ", ".join(annotation(e) for e in t.elems) + "]"
    if isinstance(t, GenericType):
        return f"{t.name}[" + ", ".join(annotation(a) for a in t.args) + "]"
    return str(t)


def is_subtype(sub: Type, sup: Type) -> bool:
    """A conservative version of PyTorch's `isSubtypeOf`, enough for verification and specialization."""
    if sub == sup:
        return True
    if isinstance(sup, NamedType) and sup.name == "Any":
        return True
    if isinstance(sup, OptionalType):
        return sub == NONE or is_subtype(sub, sup.elem) or (
            isinstance(sub, OptionalType) and is_subtype(sub.elem, sup.elem))
    if isinstance(sub, TensorType) and isinstance(sup, TensorType):
        for field in ("scalar_type", "sizes", "strides", "requires_grad", "device"):
            want = getattr(sup, field)
            if want is not None and getattr(sub, field) != want:
                return False
        return True
    if isinstance(sup, NamedType) and sup.name in ("Scalar", "number"):
        return sub in (INT, FLOAT, COMPLEX, BOOL)
    if isinstance(sub, ListType) and isinstance(sup, ListType):
        return sub.elem == sup.elem or (sub.elem.is_tensor() and sup.elem.is_tensor())
    if isinstance(sub, TupleType) and isinstance(sup, TupleType):
        return len(sub.elems) == len(sup.elems) and all(
            is_subtype(a, b) for a, b in zip(sub.elems, sup.elems))
    return False


def merge_profiled(a: TensorType, b: TensorType) -> TensorType:
    """PyTorch's TensorType::merge of two observations (what they have in common)."""
    def same(x, y):
        return x if x == y else None

    sizes = strides = None
    if a.sizes is not None and b.sizes is not None and len(a.sizes) == len(b.sizes):
        sizes = tuple(same(x, y) for x, y in zip(a.sizes, b.sizes))
        if a.strides is not None and b.strides is not None:
            strides = tuple(same(x, y) for x, y in zip(a.strides, b.strides))
    return TensorType(same(a.scalar_type, b.scalar_type), sizes, strides,
                      same(a.requires_grad, b.requires_grad), same(a.device, b.device),
                      same(a.undefined, b.undefined))
