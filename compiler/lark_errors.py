"""What both IR parsers share: one lock around the Lark parsers (their transformers hold the
state of the parse in progress) and Lark's syntax errors phrased for people."""

from __future__ import annotations

import threading

from lark.exceptions import UnexpectedInput

from irjit.ops.errors import IRParseError

PARSE_LOCK = threading.Lock()

_TOKEN_DESCRIPTIONS = {
    "VALUE": "a value (%name)", "DECL": "a declaration (%name : Type)",
    "ARGS": "an argument list (%a, %b)", "KIND": "an operator (ns::name)", "TYPE": "a type",
    "ATTRS": "attributes", "_NL": "a line break", "RPAR": "')'", "LPAR": "'('",
    "COMMA": "','", "COLON": "':'", "EQ": "'='", "ARROW": "'->'", "RETURN": "'return'",
    "BLOCK": "a block header", "SCOPE": "a scope", "COMMENT": "a comment", "$END": "end of input",
    "GRAPH": "'graph'", "WITH": "'with'", "LBRACE": "'{'", "RBRACE": "'}'", "SEMICOLON": "';'",
    "USES": "a uses list", "PYTHON_OP": "a Python op", "PY_SCALARS": "a Python op's arguments",
    "_LEADING_COMMENT": "a comment", "COMMENT_LINE": "a comment",
}


def lark_error(reader, e: UnexpectedInput) -> IRParseError:
    """An IRParseError for a Lark syntax error, phrased for people."""
    line, column = getattr(e, "line", 0) or 0, getattr(e, "column", 0) or 0
    token = getattr(e, "token", None)
    expected = getattr(e, "expected", None) or getattr(e, "allowed", None) or set()
    # terminals without a description (anonymous ones) are grammar internals: left unsaid
    want = ", ".join(sorted({_TOKEN_DESCRIPTIONS[x] for x in expected
                             if x in _TOKEN_DESCRIPTIONS}))
    if token is not None and token.type == "$END" or line in (0, -1) or (
            token is not None and token.type == "$END"):
        lines = reader.lines
        line = len(lines) if lines else 1
        column = len(lines[-1]) + 1 if lines else 1
        return reader.error(f"unexpected end of input; expected {want}" if want
                            else "unexpected end of input", line, column)
    if token is not None:
        text = str(token).replace("\n", "\\n")
        what = "line break" if token.type == "_NL" else repr(text)
        return reader.error(f"unexpected {what}; expected {want}", line, column)
    quote = unterminated_string_column(reader.lines[line - 1] if 0 < line <= len(reader.lines)
                                       else "", column)
    if quote is not None:
        return reader.error("unterminated string: '\"' without a closing quote on this line",
                            line, quote)
    ch = reader.text[e.pos_in_stream] if e.pos_in_stream < len(reader.text) else ""
    return reader.error(f"unexpected character {ch!r}" + (f"; expected {want}" if want else ""),
                        line, column)


def unterminated_string_column(line_text: str, column: int) -> int | None:
    """The 1-based column of a string opened at or after `column` and never closed on its
    line (strings in IR never span lines), or None."""
    i, opened = column - 1, None
    while i < len(line_text):
        ch = line_text[i]
        if opened is None and ch == '"':
            opened = i
        elif opened is not None and ch == "\\":
            i += 1
        elif opened is not None and ch == '"':
            opened = None
        i += 1
    return None if opened is None else opened + 1
