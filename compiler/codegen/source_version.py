"""The version of the code generator's source: what every piece of cached object code depends
on besides the host and its own key."""

from __future__ import annotations

import hashlib
import os
from functools import lru_cache

import irjit.compiler
import irjit.ops


@lru_cache(maxsize=None)
def generator_version() -> str:
    """A digest of the source files that turn a group graph into code (the op layer, the IR
    and the code generator), by path, size and modification time (reading them all costs
    tens of ms per process): a changed lowering never reuses old object code."""
    files = []
    for folder in sorted({p for pkg in (irjit.ops, irjit.compiler) for p in pkg.__path__}):
        for root, _, names in os.walk(folder):
            files += [os.path.join(root, n) for n in names if n.endswith(".py")]
    digest = hashlib.sha256()
    for path in sorted(files):
        stat = os.stat(path)
        digest.update(f"{os.path.basename(path)}|{stat.st_size}|{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:16]


# Taken when the code generator is imported, not at the first disk lookup: a process that edits
# a source file after loading the old code must not store that code under the new digest.
generator_version()
