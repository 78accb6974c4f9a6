"""Node attributes: their kinds (as PyTorch's `AttributeKind`) and how each prints.

An attribute is stored on a node as `(kind, value)`. The kinds are PyTorch's: `i`, `f`, `s`,
`c`, `is`, `fs`, `ss`, `t`, `ts`, `g`, `gs`, `ty`, `tys`, `ival`. Values are plain Python
data (lists are tuples, so nodes can share them safely); tensors are `TensorData`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

ATTRIBUTE_KINDS = ("i", "f", "c", "s", "is", "fs", "cs", "ss", "t", "ts", "g", "gs", "ty", "tys", "ival")


@dataclass(eq=False, slots=True)
class TensorData:
    """A tensor-valued attribute (e.g. the value of a tensor `prim::Constant`).

    `array` is the data when known (None for `<Tensor>`, whose data PyTorch does not print);
    `text` is the exact printed form when the tensor came from parsed text, so that
    printing reproduces it byte for byte even where PyTorch's printout is lossy.
    """

    array: Optional[np.ndarray]
    text: Optional[str] = None

    def print_form(self) -> str:
        if self.text is not None:
            return self.text
        return format_tensor(self.array)


@dataclass(frozen=True, slots=True, eq=False)
class AnnotatedValue:
    """A generic value printed with its type, as PyTorch prints empty containers:
    `annotate(List[int], [])`. Compared and hashed by its text."""

    text: str
    value: Any

    def __eq__(self, other) -> bool:
        return isinstance(other, AnnotatedValue) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)

    def __str__(self) -> str:
        return self.text


def format_cpp_general(x: float) -> str:
    """A double printed by a default C++ ostream (`%g`, six significant digits)."""
    if math.isnan(x):
        return "nan" if math.copysign(1, x) > 0 else "-nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return "%g" % x


def format_double(d: float) -> str:
    """A double as PyTorch prints an IValue: `1.`, `0.10000000000000001`, `1.0000000000000001e-05`."""
    if math.isnan(d):
        return "nan"
    if math.isinf(d):
        return "inf" if d > 0 else "-inf"
    if abs(d) < 1e10 and float(int(d)) == d:
        if d == 0 and math.copysign(1.0, d) < 0:
            return "-0."
        return f"{int(d)}."
    return "%.17g" % d


def format_complex(c: complex) -> str:
    """`1.+2.j`: the real part, the imaginary part's sign, then its magnitude."""
    sign = "-" if c.imag < 0 else "+"
    return f"{format_double(c.real)}{sign}{format_double(abs(c.imag))}j"


_ESCAPES = {"\\": "\\\\", "'": "\\'", '"': '\\"', "\a": "\\a", "\b": "\\b", "\f": "\\f",
            "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}


def _char_escape(byte: int) -> str:
    """`\\ddd` as PyTorch computes it from a signed char: bytes above 127 give digits below
    '0' (`é` prints as `\\0)+\\/.)`), which the parser decodes back."""
    s = byte - 256 if byte > 127 else byte
    digits = []
    for _ in range(2):
        digits.append(int(math.fmod(s, 8)))
        s = int(s / 8)
    digits.append(s)
    return "\\" + "".join(chr(48 + d) for d in reversed(digits))


def quote_string(s: str) -> str:
    """A string quoted as PyTorch's `printQuotedString` does (octal escapes for other bytes)."""
    out = ['"']
    for ch in s:
        esc = _ESCAPES.get(ch)
        if esc is not None:
            out.append(esc)
        elif " " <= ch <= "~":
            out.append(ch)
        else:
            for byte in ch.encode("utf-8", errors="surrogateescape"):
                out.append(_char_escape(byte))
    out.append('"')
    return "".join(out)


# ir.cpp prints the data of tensors up to this many elements
MAX_TENSOR_DISPLAY_SIZE = 10


def format_tensor(array: Optional[np.ndarray]) -> str:
    """A tensor attribute as PyTorch prints it: `{0.5}` for one element, at::Tensor's printout
    (newlines as spaces) up to ten, else `<Tensor>`."""
    if array is None:
        return "<Tensor>"
    if array.size == 1:
        v = array.reshape(()).item()
        if isinstance(v, bool):
            return "{%d}" % int(v)
        if isinstance(v, float):
            return "{" + format_cpp_general(v) + "}"
        if isinstance(v, complex):
            return "{(" + format_cpp_general(v.real) + "," + format_cpp_general(v.imag) + ")}"
        return "{%d}" % v
    if array.size <= MAX_TENSOR_DISPLAY_SIZE:
        from irjit.compiler.printed_tensor import format_printed_tensor
        return format_printed_tensor(array)
    return "<Tensor>"


def format_ivalue(v: Any) -> str:
    """A generic (`ival`) attribute value, as PyTorch prints an IValue."""
    if v is None:
        return "None"
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return format_double(v)
    if isinstance(v, str):
        return quote_string(v)
    if isinstance(v, list):
        return "[" + ", ".join(format_ivalue(x) for x in v) + "]"
    if isinstance(v, tuple):
        inner = ", ".join(format_ivalue(x) for x in v)
        return "(" + inner + ("," if len(v) == 1 else "") + ")"
    if isinstance(v, TensorData):
        return v.print_form()
    return str(v)


def format_attribute(kind: str, value: Any) -> str:
    """The text after `name=` in an attribute list."""
    if kind == "i":
        return str(int(value))
    if kind == "f":
        return format_double(value)
    if kind == "c":
        return format_complex(value)
    if kind == "s":
        return quote_string(value)
    if kind == "is":
        return "[" + ", ".join(str(int(x)) for x in value) + "]"
    if kind == "fs":
        return "[" + ", ".join(format_double(x) for x in value) + "]"
    if kind == "cs":
        return "[" + ", ".join(format_complex(x) for x in value) + "]"
    if kind == "ss":
        return "[" + ", ".join(quote_string(x) for x in value) + "]"
    if kind == "t":
        return value.print_form()
    if kind == "ts":
        return "[<Tensors>]"
    if kind == "g":
        return "<Graph>"
    if kind == "gs":
        return "[<Graphs>]"
    if kind == "ty":
        return str(value)
    if kind == "tys":
        return "[" + ", ".join(str(t) for t in value) + "]"
    if kind == "ival":
        return format_ivalue(value)
    raise AssertionError(f"unknown attribute kind {kind!r}")
