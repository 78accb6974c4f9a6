"""Running an irtool command on a thread with a large stack, so that passes and the
interpreter, which walk nested blocks recursively, handle graphs nested thousands of levels
deep; deeper still, the command ends with a clear error instead of a RecursionError."""

from __future__ import annotations

import sys
import threading
from typing import Callable

STACK_BYTES = 512 * 1024 * 1024  # reserved address space; pages are used only as needed
RECURSION_LIMIT = 60_000


class NestedTooDeeply(Exception):
    """The graph's blocks nest deeper than irtool can follow."""


def call_with_deep_stack(fn: Callable[[], int]) -> int:
    """`fn()` on a thread with STACK_BYTES of stack and RECURSION_LIMIT frames; its exception,
    if any, is raised here (a RecursionError as NestedTooDeeply)."""
    outcome: dict = {}

    def target() -> None:
        try:
            outcome["value"] = fn()
        except RecursionError:
            outcome["error"] = NestedTooDeeply(
                f"the input nests too deeply (more than about {RECURSION_LIMIT // 20} "
                "levels)")
        except BaseException as e:  # noqa: BLE001  (re-raised on the calling thread)
            outcome["error"] = e

    old_size, old_limit = threading.stack_size(), sys.getrecursionlimit()
    threading.stack_size(STACK_BYTES)
    sys.setrecursionlimit(RECURSION_LIMIT)
    try:
        worker = threading.Thread(target=target, name="irtool", daemon=True)
        worker.start()
    finally:
        threading.stack_size(old_size)
    try:
        worker.join()
    finally:
        sys.setrecursionlimit(old_limit)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]
