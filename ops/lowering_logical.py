"""Native lowering rules of the logical reductions `all` and `any` of tensors: the minimum or
maximum of `x != 0` over the reduced dims (NaN is nonzero, as in PyTorch), cast by the caller
to the node's dtype."""

from __future__ import annotations

from . import reductions_extra  # noqa: F401
from .lowering_common import NotLowerable
from .lowering_reductions import _along_space
from .registry import lowering


def _nonzero_reduced(e, combine: str, x, dims, keepdim):
    if dims is not None and not isinstance(dims, int) and len(dims) == 0:
        raise NotLowerable("`all`/`any` over an empty dim list")
    dims = [dims] if isinstance(dims, int) else dims
    return e.reduce(combine, e.ne(_along_space(e, x, dims), 0), dims, keepdim)


@lowering("aten::all")
def _all(e, x):
    return _nonzero_reduced(e, "min", x, None, False)


@lowering("aten::all.dim", "aten::all.dims")
def _all_dims(e, x, dim=None, keepdim=False):
    return _nonzero_reduced(e, "min", x, dim, keepdim)


@lowering("aten::any")
def _any(e, x):
    return _nonzero_reduced(e, "max", x, None, False)


@lowering("aten::any.dim", "aten::any.dims")
def _any_dims(e, x, dim=None, keepdim=False):
    return _nonzero_reduced(e, "max", x, dim, keepdim)
