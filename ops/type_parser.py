"""Parsing the text of one type (grammar/types.lark), and the helpers every text parser shares.

The main grammar hands over whole TYPE tokens; this parser turns them into types. It is
memoized: a graph repeats the same few types many times. Schemas are written in these types,
so the parser sits at the bottom with the ops.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import numpy as np
from lark import Lark, Token, Transformer
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from irjit.grammar import grammar_text

from .errors import SubParseError
from .types import (NONE, ClassType, GenericType, ListType, NamedType, OptionalType,
                    SCALAR_TYPES, TensorType, TupleType, Type)

_GENERIC_ARITY = {"Dict": 2, "Future": 1, "RRef": 1, "Await": 1, "List": 1, "Optional": 1}
_TERMINAL_NAMES = {
    "LPAR": "'('", "RPAR": "')'", "COMMA": "','", "COLON": "':'", "LSQB": "'['", "RSQB": "']'",
    "EQUAL": "'='", "QMARK": "'?'", "INT": "an integer", "NAME": "a name", "DIM": "a size",
    "DEVICE": "a device", "FLOAT": "a number", "STRING": "a string", "TYPE": "a type",
    "$END": "the end", "LIST_SUFFIX": "'[]'", "STAR": "'*'", "ENUM": "a type",
    "SCALAR_TYPE": "a type", "SCALAR_TENSOR": "a type", "TENSOR": "a type",
    "UNDEFINED_SUFFIX": "'[Undefined]'", "NAMEDTUPLE": "a type", "COMPLEX": "a number",
    "PRINTED_TENSOR": "a tensor", "ANNOTATED": "a value", "PARENTHESIZED": "a value",
    "LESSTHAN": "a value", "MORETHAN": "a value", "DEFAULT": "a default value",
}
# How PyTorch spells the types Python writes with brackets (`Optional[int]` is not IR).
_BRACKET_SPELLINGS = {"Optional": "T?", "List": "T[]", "Dict": "Dict(K, V)",
                      "Tuple": "(T1, T2)", "Union": "Union(T1, T2)"}
# c10::DeviceType names (c10/core/DeviceType.cpp) that a device string may start with.
DEVICE_KINDS = frozenset((
    "cpu", "cuda", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia", "xla",
    "lazy", "vulkan", "metal", "xpu", "mps", "meta", "hpu", "mtia", "ipu", "privateuseone"))


def split_top_level(text: str) -> list[str]:
    """`text` split at the commas outside brackets, stripped; `""` gives `[]`."""
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    last = "".join(cur).strip()
    if last or parts:
        parts.append(last)
    return parts


def describe_expected(expected) -> str:
    """The expected terminals in words; grammar-internal names (anonymous tokens) are left out."""
    names = sorted({_TERMINAL_NAMES[e] if e in _TERMINAL_NAMES else "a value"
                    for e in expected if e in _TERMINAL_NAMES or e.startswith("__ANON")})
    return ", ".join(names[:6]) + (", ..." if len(names) > 6 else "")


def describe_lark_error(e: UnexpectedInput, text: str) -> tuple[str, int]:
    """A one-line reason and a character offset for a Lark error in `text`."""
    if isinstance(e, UnexpectedCharacters):
        ch = text[e.pos_in_stream] if e.pos_in_stream < len(text) else "end of input"
        return f"unexpected {ch!r}", e.pos_in_stream
    if isinstance(e, UnexpectedToken):
        tok = e.token
        if tok.type == "$END":
            return f"unexpected end of input; expected {describe_expected(e.expected)}", len(text)
        return (f"unexpected {str(tok)!r}; expected {describe_expected(e.expected)}",
                tok.start_pos or 0)
    if isinstance(e, UnexpectedEOF):
        return "unexpected end of input", len(text)
    return str(e).splitlines()[0], 0


class _TypeBuilder(Transformer):
    def __init__(self, legacy: bool):
        super().__init__()
        self.legacy = legacy

    def start(self, c):
        return c[0]

    def list_type(self, c):
        return ListType(c[0])

    def optional_type(self, c):
        return OptionalType(c[0])

    def undefined_type(self, c):
        t = c[0]
        if not isinstance(t, TensorType):
            raise SubParseError("[Undefined] applies only to tensor types")
        return t.with_(undefined=True)

    def scalar_tensor(self, c):
        name = str(c[0])
        dims, kwargs = c[1] if len(c) > 1 else ([], [])
        return self._tensor(name, dims, kwargs)

    def scalar_tensor_unranked(self, c):
        kwargs = c[1] if len(c) > 1 else []
        return self._tensor(str(c[0])[: -len("Tensor")], None, kwargs)

    def plain_tensor(self, c):
        return self._tensor(None, None, [])

    def plain_tensor_args(self, c):
        dims, kwargs = c[0] if c else ([], [])
        return self._tensor(None, dims if dims or not kwargs else None, kwargs)

    def enum_type(self, c):
        return NamedType(str(c[0]))

    def _tensor(self, scalar_type, dims, kwargs) -> TensorType:
        sizes = marks = None
        if dims is not None:
            sizes, marks = [], []
            for tok in dims:
                text = str(tok)
                mark = text.endswith("!")
                if mark and not self.legacy:
                    raise SubParseError("'!' after a size is only valid in the 2017 format",
                                        tok.start_pos + len(text) - 1)
                marks.append(mark)
                text = text.rstrip("!")
                if text.startswith("-"):
                    raise SubParseError(f"a size cannot be negative ({text})", tok.start_pos)
                sizes.append(None if text == "*" else int(text))
            sizes = tuple(sizes)
            marks = tuple(marks) if any(marks) else None
        fields: dict[str, Any] = {}
        for name_tok, value in kwargs:
            name = str(name_tok)
            if name in fields:
                raise SubParseError(f"'{name}' is given twice", name_tok.start_pos)
            if name == "strides":
                if not isinstance(value, tuple):
                    raise SubParseError("strides must be a list of integers", name_tok.start_pos)
                if sizes is None or len(value) != len(sizes):
                    raise SubParseError("strides must have one entry per size", name_tok.start_pos)
                if any(s < 0 for s in value):
                    raise SubParseError("a stride cannot be negative", name_tok.start_pos)
                fields["strides"] = value
            elif name == "requires_grad":
                if not isinstance(value, Token) or str(value) not in ("0", "1"):
                    raise SubParseError("requires_grad must be 0 or 1", name_tok.start_pos)
                fields["requires_grad"] = str(value) == "1"
            elif name == "device":
                if not isinstance(value, Token) or not re.fullmatch(r"[a-z]+(:[0-9]+)?", str(value)):
                    raise SubParseError("device must look like cpu or cuda:0", name_tok.start_pos)
                kind = str(value).partition(":")[0]
                if kind not in DEVICE_KINDS:
                    raise SubParseError(f"unknown device type '{kind}' (expected cpu, cuda, "
                                        "mps, meta, xpu, ...)", value.start_pos)
                fields["device"] = str(value)
            else:
                raise SubParseError(f"unexpected tensor type specifier '{name}' (expected "
                                    "strides, requires_grad or device)", name_tok.start_pos)
        return TensorType(scalar_type, sizes, fields.get("strides"), fields.get("requires_grad"),
                          fields.get("device"), None, marks)

    def tensor_args(self, c):
        dims = [x for x in c if isinstance(x, Token)]
        kwargs = [x for x in c if isinstance(x, tuple)]
        return (dims, kwargs)

    def tensor_kwargs(self, c):
        return list(c)

    def dim(self, c):
        return c[0]

    def kwarg(self, c):
        return (c[0], c[1])

    def int_list(self, c):
        return tuple(int(x) for x in c)

    def tuple_type(self, c):
        return TupleType(tuple(c))

    def named_tuple(self, c):
        names = tuple(f[0] for f in c)
        defaults = tuple(f[2] for f in c)
        return TupleType(tuple(f[1] for f in c), names, defaults if any(d is not None for d in defaults) else None)

    def field(self, c):
        return (str(c[0]), c[1], str(c[2]).strip() if len(c) > 2 else None)

    def generic_paren(self, c):
        return self._generic(c, "()")

    def generic_bracket(self, c):
        name = str(c[0])
        if name in _BRACKET_SPELLINGS:
            raise SubParseError(f"'{name}[...]' is Python's spelling; TorchScript IR writes "
                                f"{_BRACKET_SPELLINGS[name]}", c[0].start_pos)
        return self._generic(c, "[]")

    def _generic(self, c, brackets):
        name, args = str(c[0]), tuple(c[1:])
        want = _GENERIC_ARITY.get(name)
        if want is not None and len(args) != want:
            raise SubParseError(f"{name} takes {want} type argument{'s' if want > 1 else ''}, "
                                f"got {len(args)}", c[0].start_pos)
        return GenericType(name, args, brackets)

    def named_type(self, c):
        name = str(c[0])
        if "." in name:
            return ClassType(name)
        if name in SCALAR_TYPES:
            raise SubParseError(f"{name} needs a size list, as in {name}(2, 3)", c[0].start_pos)
        if name == "None":  # PyTorch's tests write `None`; it is the type PyTorch prints NoneType
            return NONE
        return NamedType(name)


def _make_type_parser(legacy: bool) -> Lark:
    return Lark(grammar_text("types"), parser="lalr", transformer=_TypeBuilder(legacy),
                maybe_placeholders=False)


_type_parsers: dict[bool, Lark] = {}


@lru_cache(maxsize=4096)
def parse_type_text(text: str, legacy: bool = False) -> Type:
    """The type a TYPE token spells; raises SubParseError with an offset into `text`."""
    parser = _type_parsers.get(legacy)
    if parser is None:
        parser = _type_parsers[legacy] = _make_type_parser(legacy)
    try:
        return parser.parse(text)
    except UnexpectedInput as e:
        reason, offset = describe_lark_error(e, text)
        raise SubParseError(f"bad type {text!r}: {reason}", offset) from None
