"""Running a test's work in several threads at once."""

from __future__ import annotations

import threading
from typing import Callable


def run_concurrently(work: Callable[[int], None], count: int) -> None:
    """Run `work(i)` for i in range(count), each in its own thread, all starting together;
    the first exception a thread raised is raised here once every thread ended."""
    errors: list = []
    barrier = threading.Barrier(count)

    def run(i: int) -> None:
        try:
            barrier.wait()
            work(i)
        except Exception as e:  # noqa: BLE001 - raised below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
