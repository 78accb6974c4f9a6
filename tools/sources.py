"""What every irtool command shares: reading an input file (or stdin) and the error for a
mistake in how irtool was called, which `main` prints as one line."""

from __future__ import annotations

import sys


class UsageError(Exception):
    """A mistake in how irtool was called (missing file, bad option value)."""


def read_source(path: str) -> tuple[str, str]:
    """The text of `path` (or stdin for `-`) and the name to report it by."""
    if path == "-":
        return sys.stdin.read(), "<stdin>"
    try:
        with open(path, encoding="utf-8", newline="") as f:  # keep \r\n: fmt --check sees it
            return f.read(), path
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"{path}: is a directory") from None
    except UnicodeDecodeError as e:
        raise UsageError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    except OSError as e:
        raise UsageError(f"{path}: {e.strerror}") from None


def lint_parsed(graph, name: str) -> None:
    """Check a graph just read from `name` is well formed (`prim::If` blocks yield as many
    values as the node has outputs, ...) before anything runs or rewrites it."""
    from irjit.compiler.ir import IRVerificationError
    try:
        graph.lint()
    except IRVerificationError as e:
        raise UsageError(f"{name}: invalid graph: {e}") from None
