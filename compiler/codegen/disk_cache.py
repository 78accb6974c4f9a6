"""The on-disk cache of object code: per code library, its object file and optimized LLVM IR
(and for native units the metadata that rebuilds the unit without lowering it), keyed by the
unoptimized IR or by what the IR is made from, the host CPU and features, and the llvmlite
version, under the user cache directory. Files are written to a temporary name and renamed,
so concurrent processes only ever see complete entries."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Optional


def cache_root() -> Optional[Path]:
    """`IRJIT_CACHE_DIR`, else `$XDG_CACHE_HOME/irjit` or `~/.cache/irjit`; None when
    `IRJIT_CACHE=0` turns the disk cache off."""
    if os.environ.get("IRJIT_CACHE", "1") == "0":
        return None
    explicit = os.environ.get("IRJIT_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "irjit"


class DiskCache:
    """Object code and optimized IR of libraries, by digest, for one host key."""

    def __init__(self, root: Path, host_key: str):
        self.folder = root / hashlib.sha256(host_key.encode()).hexdigest()[:16]
        self.host_key = host_key

    def digest(self, ir_text: str) -> str:
        return hashlib.sha256((self.host_key + "\n" + ir_text).encode()).hexdigest()

    def load(self, digest: str) -> Optional[tuple[bytes, str]]:
        """(object code, optimized LLVM IR) stored under `digest`, or None."""
        try:
            return (self.folder / f"{digest}.o").read_bytes(), (self.folder / f"{digest}.ll").read_text()
        except OSError:
            return None

    def load_with_metadata(self, digest: str) -> Optional[tuple[bytes, str]]:
        """(object code, metadata) stored under `digest`, or None; the IR stays on disk
        (`ir_path`) until a dump asks for it."""
        try:
            return (self.folder / f"{digest}.o").read_bytes(), (self.folder / f"{digest}.json").read_text()
        except OSError:
            return None

    def recall(self, digest: str) -> Optional[str]:
        """The entry digest `remember` noted under `digest`, or None."""
        try:
            return (self.folder / f"{digest}.ref").read_text().strip() or None
        except OSError:
            return None

    def remember(self, digest: str, entry: str) -> None:
        """Note under `digest` (what an entry is made from) the digest of the entry itself (by its
        IR text), so a later process finds the entry without building that text."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            _write_atomically(self.folder / f"{digest}.ref", entry.encode())
        except OSError:
            pass

    def ir_path(self, digest: str) -> Path:
        return self.folder / f"{digest}.ll"

    def store(self, digest: str, obj: bytes, llvm_ir: str, metadata: Optional[str] = None) -> None:
        """Write the files atomically (the object file last: it means a whole entry)."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            _write_atomically(self.folder / f"{digest}.ll", llvm_ir.encode())
            if metadata is not None:
                _write_atomically(self.folder / f"{digest}.json", metadata.encode())
            _write_atomically(self.folder / f"{digest}.o", obj)
        except OSError:
            pass  # a read-only or full cache directory only costs compile time


def _write_atomically(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
