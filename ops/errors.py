"""Errors a user can cause, each able to say where in the input it happened."""

from __future__ import annotations

from typing import Optional


class IRParseError(Exception):
    """Malformed IR text: carries file, line, column, a one-line reason and the offending line."""

    def __init__(self, reason: str, filename: str = "<string>", line: int = 0, column: int = 0,
                 line_text: Optional[str] = None):
        self.reason = reason
        self.filename = filename
        self.line = line
        self.column = column
        self.line_text = line_text
        super().__init__(self.__str__())

    def location(self) -> str:
        return f"{self.filename}:{self.line}:{self.column}"

    def __str__(self) -> str:
        text = f"{self.location()}: error: {self.reason}"
        if self.line_text is not None:
            caret = " " * (max(self.column, 1) - 1) + "^"
            text += f"\n{self.line_text}\n{caret}"
        return text


class SubParseError(Exception):
    """An error inside a type or attribute text, at `offset` characters into it."""

    def __init__(self, reason: str, offset: int = 0):
        super().__init__(reason)
        self.reason = reason
        self.offset = offset


class IRTypeError(Exception):
    """A value of the wrong type reached an operation (wrong inputs, bad schema match)."""


class IRRuntimeError(Exception):
    """A graph failed while running; names the node and its place in the source when known."""
