"""What every irtool command shares: reading an input file (or stdin) and the error for a
mistake in how irtool was called, which `main` prints as one line."""

from __future__ import annotations

import os
import sys
import tempfile


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


def check_output_path(path: str, flag: str = "-o") -> None:
    """Fail before any work if `path` cannot be written: its folder must exist, be a folder
    and be writable, and the path itself must not be a folder."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise UsageError(f"{flag} {path}: is a directory")
    if not os.path.exists(folder):
        raise UsageError(f"{flag} {path}: folder {folder} does not exist")
    if not os.path.isdir(folder):
        raise UsageError(f"{flag} {path}: {folder} is not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(f"{flag} {path}: folder {folder} is not writable")


def write_atomically(path: str, write) -> None:
    """All or nothing: `write(file)` fills a temporary file in the same folder, which then
    replaces `path`; on any failure the temporary file is removed and `path` is untouched."""
    folder = os.path.dirname(os.path.abspath(path)) or "."
    suffix = os.path.splitext(path)[1] or ".tmp"
    fd, tmp = tempfile.mkstemp(suffix=suffix, prefix=".irtool-", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # as open() would create it, not mkstemp's 0600
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
