"""Source locations attached to nodes: the `# file:line:col` comments PyTorch prints."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SourceLocation:
    """Where a node came from in the user's (or the library's) Python source."""

    filename: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.filename}:{self.line}:{self.col}"

    @staticmethod
    def from_text(text: str) -> "SourceLocation | None":
        """Parse `file:line:col`; None when the text does not end in two numbers."""
        parts = text.rsplit(":", 2)
        if len(parts) != 3 or not parts[1].isdigit() or not parts[2].isdigit():
            return None
        return SourceLocation(parts[0], int(parts[1]), int(parts[2]))
