"""The error a user's scripted Python can cause: it names the file, line and column."""

from __future__ import annotations

from irjit.compiler.ir import SourceLocation


class ScriptError(Exception):
    """Python that `irjit.jit.script` cannot compile, with where it is (`file:line:col`)."""

    def __init__(self, message: str, location: SourceLocation):
        super().__init__(f"{location}: error: {message}")
        self.message = message
        self.location = location
