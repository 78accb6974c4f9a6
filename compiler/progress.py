"""Progress of long work — parsing a big file, a pipeline of passes, compiling native units —
reported by the code that does it and shown by whoever listens: `irtool` draws bars on a
terminal (tools/progress.py). With no listener (the default) every call is a no-op, so the
layers report progress without knowing how, or whether, it is shown."""

from __future__ import annotations

from typing import Optional, Protocol


class Task(Protocol):
    def update(self, n: int = 1, note: Optional[str] = None) -> None: ...
    def __enter__(self) -> "Task": ...
    def __exit__(self, *exc) -> None: ...


class Listener(Protocol):
    def task(self, description: str, total: Optional[int], unit: str) -> Task: ...
    def tick(self, description: str, unit: str, note: Optional[str]) -> None: ...


class _Silent:
    """The task handed out when nobody listens."""

    def update(self, n: int = 1, note: Optional[str] = None) -> None:
        pass

    def __enter__(self) -> "_Silent":
        return self

    def __exit__(self, *exc) -> None:
        return None


SILENT = _Silent()
_listener: Optional[Listener] = None


def set_listener(listener: Optional[Listener]) -> Optional[Listener]:
    """Install `listener` (None: nobody); returns the one it replaces."""
    global _listener
    previous, _listener = _listener, listener
    return previous


def listening() -> bool:
    return _listener is not None


def task(description: str, total: Optional[int] = None, unit: str = "it") -> Task:
    """A context manager for one piece of long work of `total` steps (None: unknown), advanced
    with `update(n, note)`."""
    listener = _listener
    return SILENT if listener is None else listener.task(description, total, unit)


def tick(description: str, unit: str = "it", note: Optional[str] = None) -> None:
    """One more step of work counted under `description` wherever it happens (a native
    unit compiled on first use), with no enclosing loop to hold a task."""
    listener = _listener
    if listener is not None:
        listener.tick(description, unit, note)
