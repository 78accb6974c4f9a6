"""Reading the 2017 graph format (grammar/legacy.lark) into the same IR.

Kinds without a namespace become `prim::Constant` (for `Constant`) or `legacy::<Name>`;
Python ops (`^Add(False)`) become `prim::PythonOp` nodes with `name` and `scalar_args`;
`uses = [...]` lists are kept verbatim so the graph prints back byte-identical; scopes are
dot-separated (`Net$1.Sequential$2.Linear$3`).
"""

from __future__ import annotations

import re
from typing import Optional

from lark import Lark, Token, Transformer
from lark.exceptions import UnexpectedInput

from irjit.grammar import grammar_text

from irjit.ops.errors import IRParseError, SubParseError
from .ir.graph import Graph
from .ir.node import Node, Value
from irjit.ops.type_parser import parse_type_text

from .attribute_parser import parse_attributes_text
from .lark_errors import PARSE_LOCK, lark_error

_ARG_NAME = re.compile(r"%([A-Za-z0-9_.]+)")


class _LegacyBuilder(Transformer):
    def __init__(self, reader: "_LegacyReader"):
        super().__init__()
        self.r = reader

    def param(self, c):
        return (c[0], c[1])

    def start(self, c):
        return None

    def header(self, c):
        self.r.add_inputs(c)

    def stmt(self, c):
        self.r.add_node(c)

    def return_stmt(self, c):
        for tok in c[1:]:
            self.r.graph.register_output(self.r.resolve(tok))


class _LegacyReader:
    def __init__(self, text: str, filename: str):
        self.text = text
        self.filename = filename
        self.lines = text.splitlines()
        self.graph = Graph()
        self.graph.print_style = "legacy"
        self.graph.next_unique = max((int(m) for m in re.findall(r"%([0-9]+)\b", text)), default=-1) + 1
        self.env: dict[str, Value] = {}

    def error(self, reason: str, line: int, column: int) -> IRParseError:
        line_text = self.lines[line - 1] if 0 < line <= len(self.lines) else None
        return IRParseError(reason, self.filename, line, column, line_text)

    def error_at(self, tok: Token, reason: str, offset: int = 0) -> IRParseError:
        line_text = self.lines[tok.line - 1] if 0 < tok.line <= len(self.lines) else None
        return IRParseError(reason, self.filename, tok.line, tok.column + offset, line_text)

    def resolve(self, tok: Token) -> Value:
        name = str(tok)[1:]
        v = self.env.get(name)
        if v is None:
            raise self.error_at(tok, f"undefined value %{name}")
        return v

    def define(self, name_tok: Token, type_tok: Token, make) -> Value:
        name = str(name_tok)[1:]
        try:
            t = parse_type_text(str(type_tok), legacy=True)
        except SubParseError as e:
            raise self.error_at(type_tok, e.reason, e.offset) from None
        if name.isdigit():
            v = make(t, int(name))
        else:
            v = make(t, None)
            v.set_debug_name(name)
        self.env[name] = v
        return v

    def add_inputs(self, params) -> None:
        for name_tok, type_tok in params:
            self.define(name_tok, type_tok, lambda t, u: self.graph.block.add_input(t, unique=u))

    def add_node(self, c) -> None:
        i = 0
        while isinstance(c[i], tuple):
            i += 1
        outputs, kind_tok, rest = c[:i], c[i + 1], c[i + 2:]
        g = self.graph
        text = str(kind_tok)
        if kind_tok.type == "PYTHON_OP":
            paren = text.index("(")
            n = Node(g, "prim::PythonOp")
            n.python_op = (text[1:paren], text[paren:])
        elif "::" in text:
            n = Node(g, text)
        else:
            n = Node(g, "prim::Constant" if text == "Constant" else f"legacy::{text}")
        for tok in rest:
            if tok.type == "ATTRS":
                try:
                    for name, kind, value in parse_attributes_text(str(tok)):
                        n.attrs[name] = (kind, value)
                except SubParseError as e:
                    raise self.error_at(tok, e.reason, e.offset) from None
            elif tok.type == "VALUE":
                n.add_input(self.resolve(tok))
            elif tok.type == "USES":
                n.legacy_uses = str(tok)
            elif tok.type == "SCOPE":
                n.scope = g.scope_root.lookup(str(tok)[len(", scope: "):].rstrip(), ".")
        for name_tok, type_tok in outputs:
            self.define(name_tok, type_tok, lambda t, u: n.add_output(t, u))
        n.text_line = kind_tok.line
        g.block.append_node(n)


_PARSER: Optional[Lark] = None
_BUILDER = _LegacyBuilder(None)  # type: ignore[arg-type]


def parse_legacy_ir(text: str, filename: str = "<string>") -> Graph:
    """Read a graph in the 2017 format; raises IRParseError on malformed input."""
    global _PARSER
    reader = _LegacyReader(text, filename)
    with PARSE_LOCK:
        if _PARSER is None:
            _PARSER = Lark(grammar_text("legacy"), parser="lalr", transformer=_BUILDER,
                           maybe_placeholders=False)
        _BUILDER.r = reader
        try:
            _PARSER.parse(text)
        except UnexpectedInput as e:
            raise lark_error(reader, e) from None
        finally:
            _BUILDER.r = None
    return reader.graph
