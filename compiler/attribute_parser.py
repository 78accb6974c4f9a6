"""Parsing the text of one attribute list (grammar/attributes.lark) into `(name, kind, value)`.

The main grammar hands over whole ATTRS tokens; this parser is memoized, since a graph repeats
the same few attribute lists many times.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import numpy as np
from lark import Lark, Transformer
from lark.exceptions import UnexpectedInput

from irjit.grammar import grammar_text
from irjit.ops.errors import SubParseError
from irjit.ops.type_parser import describe_lark_error, parse_type_text

from .ir.attributes import AnnotatedValue, TensorData
from .printed_tensor import parse_printed_tensor

# ---- attributes

_UNESCAPES = {"\\": "\\", "'": "'", '"': '"', "a": "\a", "b": "\b", "f": "\f", "n": "\n",
              "r": "\r", "t": "\t", "v": "\v"}


def unquote_string(text: str) -> str:
    """The string a PyTorch-quoted literal stands for (inverse of `quote_string`)."""
    body = text[1:-1]
    if "\\" not in body:
        return body
    out = bytearray()
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            if nxt in _UNESCAPES:
                out += _UNESCAPES[nxt].encode()
                i += 2
                continue
            digits = body[i + 1:i + 4]
            if len(digits) == 3 and all("(" <= d <= "7" for d in digits):
                # PyTorch writes `\ddd` from a (signed) char; digits below '0' are negative
                d0, d1, d2 = (ord(d) - 48 for d in digits)
                out.append((d0 * 64 + d1 * 8 + d2) & 0xFF)
                i += 4
                continue
        out += ch.encode("utf-8")
        i += 1
    return out.decode("utf-8", errors="surrogateescape")



class _AttrBuilder(Transformer):
    def start(self, c):
        return tuple(c)

    def attr(self, c):
        kind, value = c[1]
        name = str(c[0])
        if kind == "?":  # a constant's value is a tuple; other attributes hold types
            kind, value = ("ival", value[0]) if name == "value" else ("ty", value[1])
        if kind == "is" and not value and name == "types":
            kind = "tys"
        return (name, kind, value)

    def int_value(self, c):
        return ("i", int(c[0]))

    def float_value(self, c):
        return ("f", float(c[0]))

    def complex_value(self, c):
        return ("c", complex(str(c[0])))

    def string_value(self, c):
        return ("s", unquote_string(str(c[0])))

    def opaque_tensor(self, c):
        return ("t", TensorData(None, "<Tensor>"))

    def opaque_graph(self, c):
        return ("g", None)

    def opaque_tensors(self, c):
        return ("ts", None)  # `[<Tensors>]`: PyTorch prints no data, not even the length

    def opaque_graphs(self, c):
        return ("gs", ())

    def scalar_tensor(self, c):
        text = str(c[0])
        data = _scalar_tensor(text)
        if data is None:
            raise SubParseError(f"bad tensor value {text}", c[0].start_pos)
        return ("t", data)

    def printed_tensor(self, c):
        text = str(c[0])
        return ("t", TensorData(parse_printed_tensor(text), text))

    def parenthesized_value(self, c):
        """`(...)`: a tuple constant, or else a tuple type (`types=[(int, int)]`)."""
        tok = c[0]
        literal = _tuple_literal(str(tok))
        try:
            type_ = parse_type_text(str(tok))
        except SubParseError as e:
            if literal is None:
                raise SubParseError(e.reason, tok.start_pos + e.offset) from None
            type_ = None
        if literal is None:
            return ("ty", type_)
        if type_ is None:
            return ("ival", literal)
        return ("?", (literal, type_))  # `()` or `(None, None)`: decided by the context

    def annotated_value(self, c):
        text = str(c[0])
        return ("ival", AnnotatedValue(text, _annotated_literal(text)))

    def type_value(self, c):
        tok = c[0]
        text = str(tok).strip()
        if text == "None":  # the value None (an IValue), not the type `None` reads as
            return ("ival", None)
        if text in ("True", "False"):  # an element of a printed bool list
            return ("ival", text == "True")
        try:
            return ("ty", parse_type_text(text))
        except SubParseError as e:
            literal = _tuple_literal(text)
            if literal is not None:
                return ("ival", literal)
            raise SubParseError(e.reason, tok.start_pos + e.offset) from None

    def list_value(self, c):
        if any(k == "?" for k, _ in c):
            as_types = any(k == "ty" for k, _ in c) or all(k == "?" for k, _ in c)
            c = [(("ty", v[1]) if as_types else ("ival", v[0])) if k == "?" else (k, v)
                 for k, v in c]
        kinds = {k for k, _ in c}
        if not c:
            return ("is", ())
        if kinds <= {"is", "fs", "ss", "ival"}:  # nested lists are generic values (IValues)
            return ("ival", [_as_ivalue(k, v) for k, v in c])
        if len(kinds) != 1 or next(iter(kinds)) not in ("i", "f", "s", "ty", "t", "c"):
            if kinds <= {"i", "f"}:
                return ("fs", tuple(float(v) for _, v in c))
            raise SubParseError("attribute lists must not mix numbers, strings, types and lists")
        kind = next(iter(kinds))
        return ({"i": "is", "f": "fs", "s": "ss", "ty": "tys", "t": "ts", "c": "cs"}[kind],
                tuple(v for _, v in c))


def _scalar_tensor(text: str) -> TensorData | None:
    """A one-element tensor as PyTorch prints it (`{2}`, `{0.5}`), or None."""
    inner = text[1:-1].strip()
    try:
        return TensorData(np.array(int(inner), dtype=np.int64), text)
    except ValueError:
        pass
    try:
        return TensorData(np.array(float(inner), dtype=np.float64), text)
    except ValueError:
        return None


def _annotated_literal(text: str) -> Any:
    """The value of `annotate(List[Optional[int]], [1, None])` (None when it is not a literal
    this reader understands, e.g. a dict)."""
    inner = text[len("annotate("):-1]
    depth = 0
    for i, ch in enumerate(inner):
        depth += ch in "[(" and 1 or (-1 if ch in "])" else 0)
        if ch == "," and depth == 0:
            body = inner[i + 1:].strip()
            break
    else:
        return None
    if body == "{}":
        return {}
    value = _tuple_literal("(" + body + ",)")
    return value[0] if value is not None else None


def _as_ivalue(kind: str, value: Any) -> Any:
    return list(value) if kind in ("is", "fs", "ss") else value


_LITERAL_TOKEN = re.compile(r'\s*("(?:[^"\\]|\\.)*"|\{[^{}]*\}|-?inf|nan|None|True|False|'
                            r'-?[0-9]+\.[0-9]*(?:e[-+]?[0-9]+)?|-?[0-9]+e[-+]?[0-9]+|-?[0-9]+|[(),\[\]])')


_PRINTED_TENSOR_ITEM = re.compile(r'(?:[^(),\[\]"]|\((?:[0-9]+,)+\.,\.\) =)+\[ [A-Za-z0-9]+Type\{[0-9,]*\} \]')


def _tuple_literal(text: str):
    """A tuple constant printed as an IValue (`("a", "b")`, `(None, inf)`), or None."""
    if not text.startswith("("):
        return None
    tokens, pos = [], 0
    while pos < len(text):
        # a tensor's printout starts right after `(` or after the `, ` separator
        start = pos + 1 if tokens and tokens[-1] == "," and text.startswith(" ", pos) else pos
        m = _PRINTED_TENSOR_ITEM.match(text, start)
        if m is not None:
            tokens.append(TensorData(parse_printed_tensor(m.group(0)), m.group(0)))
            pos = m.end()
            continue
        m = _LITERAL_TOKEN.match(text, pos)
        if m is None:
            return None
        tokens.append(m.group(1))
        pos = m.end()
        if text[pos:].strip() == "":
            break
    value, i = _literal(tokens, 0)
    return value if i == len(tokens) and isinstance(value, tuple) else None


def _literal(tokens: list, i: int):
    tok = tokens[i] if i < len(tokens) else None
    if isinstance(tok, TensorData):
        return tok, i + 1
    if tok in ("(", "["):
        close = ")" if tok == "(" else "]"
        items, i = [], i + 1
        while i < len(tokens) and tokens[i] != close:
            item, i = _literal(tokens, i)
            items.append(item)
            if i < len(tokens) and tokens[i] == ",":
                i += 1
        return (tuple(items) if tok == "(" else items), i + 1
    if tok is None or tok in (")", "]", ","):
        return None, len(tokens) + 1  # malformed: makes the caller's length check fail
    if tok.startswith('"'):
        return unquote_string(tok), i + 1
    if tok.startswith("{"):
        data = _scalar_tensor(tok)
        return (data, i + 1) if data is not None else (None, len(tokens) + 1)
    consts = {"None": None, "True": True, "False": False, "inf": float("inf"),
              "-inf": float("-inf"), "nan": float("nan")}
    if tok in consts:
        return consts[tok], i + 1
    return (float(tok) if any(c in tok for c in ".e") else int(tok)), i + 1


_attr_parser: Lark | None = None


@lru_cache(maxsize=8192)
def parse_attributes_text(text: str) -> tuple[tuple[str, str, Any], ...]:
    """The `(name, kind, value)` triples of an ATTRS token such as `[value=1, name="x"]`."""
    global _attr_parser
    if _attr_parser is None:
        _attr_parser = Lark(grammar_text("attributes"), parser="lalr", transformer=_AttrBuilder(),
                            maybe_placeholders=False)
    try:
        attrs = _attr_parser.parse(text)
    except UnexpectedInput as e:
        reason, offset = describe_lark_error(e, text)
        raise SubParseError(f"bad attribute list: {reason}", offset) from None
    names = [a[0] for a in attrs]
    if len(set(names)) != len(names):
        raise SubParseError("an attribute is given twice")
    return attrs
