"""Progress bars for irtool (tqdm, on stderr), shown only when stderr is a terminal and the
work takes longer than DELAY seconds; otherwise nothing is printed. The layers report
progress through `irjit.compiler.progress`; this module listens."""

from __future__ import annotations

import io
import os
import sys
import threading
from contextlib import contextmanager
from typing import Iterator, Optional

from irjit.compiler import progress

DELAY = 0.5  # seconds of work before a bar appears


class _Bar:
    """One tqdm bar as a progress task."""

    def __init__(self, bar):
        self.bar = bar

    def update(self, n: int = 1, note: Optional[str] = None) -> None:
        if note is not None:
            self.bar.set_postfix_str(note, refresh=False)
        self.bar.update(n)

    def __enter__(self) -> "_Bar":
        return self

    def __exit__(self, *exc) -> None:
        self.bar.close()


class TerminalProgress:
    """A progress listener drawing tqdm bars on `stream`."""

    def __init__(self, stream):
        self.stream = stream
        self.counters: dict[str, object] = {}
        self.lock = threading.Lock()

    def _tqdm(self, description: str, total: Optional[int], unit: str,
              note: Optional[str] = None):
        from tqdm import tqdm
        scale = unit == "B"
        sized = self.columns() > 0  # a terminal that reports no size gets 80 columns
        return tqdm(total=total, desc=description, unit=unit, unit_scale=scale,
                    unit_divisor=1024 if scale else 1000, file=self.stream, delay=DELAY,
                    leave=False, dynamic_ncols=sized, ncols=None if sized else 80,
                    mininterval=0.1, postfix=note)

    def columns(self) -> int:
        try:
            return os.get_terminal_size(self.stream.fileno()).columns
        except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
            return 0

    def task(self, description: str, total: Optional[int], unit: str) -> _Bar:
        return _Bar(self._tqdm(description, total, unit))

    def tick(self, description: str, unit: str, note: Optional[str]) -> None:
        with self.lock:
            bar = self.counters.get(description)
            if bar is None:
                bar = self.counters[description] = self._tqdm(description, None, unit, note)
        if note is not None:
            bar.set_postfix_str(note, refresh=False)
        bar.update(1)

    def close(self) -> None:
        with self.lock:
            for bar in self.counters.values():
                bar.close()
            self.counters.clear()


@contextmanager
def showing_progress(stream=None) -> Iterator[None]:
    """Draw the progress the layers report while the body runs, when `stream` (stderr) is a
    terminal; silent otherwise."""
    stream = stream if stream is not None else sys.stderr
    if not stream.isatty():
        yield
        return
    listener = TerminalProgress(stream)
    previous = progress.set_listener(listener)
    try:
        yield
    finally:
        progress.set_listener(previous)
        listener.close()


@contextmanager
def activity(description: str) -> Iterator[None]:
    """A bar with a running clock for one step that reports nothing while it works (a
    Graphviz layout); it appears after DELAY seconds, like the others."""
    if not progress.listening():
        yield
        return
    with progress.task(description, None, "s") as bar:
        done = threading.Event()

        def refresh() -> None:
            while not done.wait(0.2):
                if isinstance(bar, _Bar):
                    bar.bar.refresh()
        ticker = threading.Thread(target=refresh, daemon=True)
        ticker.start()
        try:
            yield
        finally:
            done.set()
            ticker.join()
