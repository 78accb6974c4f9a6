"""Native lowering rules of the joins: cat and stack as index arithmetic on their pieces (each
piece read in its own range, a select on the output index picks it), never a copy per piece."""

from __future__ import annotations

from . import joins  # noqa: F401
from .registry import lowering


@lowering("aten::cat", "aten::concat", "aten::concatenate")
def _cat(e, tensors, dim=0):
    return e.cat(tensors, dim)


@lowering("aten::stack")
def _stack(e, tensors, dim=0):
    return e.stack(tensors, dim)
