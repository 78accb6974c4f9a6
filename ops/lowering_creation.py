"""Native lowering rules of tensor creation (constant fills and ranges over the node's output
shape, so they fuse into what reads them) and of the copies and identities: clone, contiguous,
dropout in eval mode (and native_dropout with its backward), the `aten::to` overloads."""

from __future__ import annotations

from . import conversion, creation, nn_dropout, views  # noqa: F401
from .dtypes import dtype_from_code
from .lowering_common import NotLowerable
from .registry import lowering


def _constant(value):
    if not isinstance(value, (bool, int, float)):
        raise NotLowerable("a fill value known only at run time")
    return value


@lowering("aten::zeros", "aten::empty.memory_format", "aten::zeros_like", "aten::empty_like",
          "aten::new_zeros", "aten::new_empty")
def _zeros(e, *args):
    return e.fill(0)


@lowering("aten::ones", "aten::ones_like", "aten::new_ones")
def _ones(e, *args):
    return e.fill(1)


@lowering("aten::full")
def _full(e, size, value, *options):
    return e.fill(_constant(value))


@lowering("aten::full_like")
def _full_like(e, x, value, *options):
    return e.fill(_constant(value))


@lowering("aten::new_full")
def _new_full(e, x, size, value, *options):
    return e.fill(_constant(value))


def _checked_length(e, end):
    """Zero, computed so that the kernel bails out unless the int `end` (a number argument of
    `arange(end)`) is the length the plan's output has: numbers are keyed by type only."""
    if isinstance(end, (bool, int, float)):
        return 0
    if end.dtype.kind not in "iu" or not e.node_sizes or e.node_sizes[0] == 0:
        raise NotLowerable("an arange length known only at run time")
    return e.checked_index(e.sub(end, e.node_sizes[0]), 1, False)


@lowering("aten::arange")
def _arange(e, end, *options):
    return e.add(e.arange(0, 1), _checked_length(e, end))


@lowering("aten::arange.start")
def _arange_start(e, start, end, *options):
    _constant(end)
    return e.arange(_constant(start), 1)


@lowering("aten::arange.start_step")
def _arange_start_step(e, start, end, step=1, *options):
    _constant(end)
    return e.arange(_constant(start), _constant(step))


# ---- copies and identities

@lowering("aten::clone")
def _clone(e, x, memory_format=None):
    return e.value(x)


@lowering("aten::contiguous")
def _contiguous(e, x, memory_format=0):
    return e.contiguous(x)


@lowering("aten::dropout", "aten::feature_dropout", "aten::alpha_dropout",
          "aten::feature_alpha_dropout")
def _dropout(e, x, p, train):
    if not isinstance(p, (int, float)) or not 0 <= p <= 1:
        raise NotLowerable("a dropout probability the interpreter checks at run time")
    if train is not False and p != 0:
        raise NotLowerable("dropout in training mode draws random numbers")
    return e.alias(x)


@lowering("aten::native_dropout")
def _native_dropout(e, x, p, train):
    """In eval mode (symbolic_script's dropout formula under a plan whose `training` is
    False): a copy of `x` and a mask that keeps every element."""
    if train is not False:
        raise NotLowerable("dropout in training mode draws random numbers")
    return e.value(x), True


@lowering("aten::native_dropout_backward")
def _native_dropout_backward(e, grad, mask, scale):
    """`grad * mask * scale`, the scale cast to the gradient's dtype first as the interpreter
    does (a dropped NaN stays NaN)."""
    return e.mul(e.mul(grad, e.cast(mask, grad.dtype)), e.cast(scale, grad.dtype))


def _to(e, x, copy):
    """A cast to the node's dtype; the same dtype aliases `x` unless a copy is asked for."""
    if e.node_dtype != x.dtype:
        return e.cast(x, e.node_dtype)
    if not isinstance(copy, bool):
        raise NotLowerable("whether `to` copies is known only at run time")
    return e.value(x) if copy else e.alias(x)


@lowering("aten::to.dtype", "aten::to.prim_dtype", "aten::to.other", "aten::type_as")
def _to_dtype(e, x, dtype_or_other=None, non_blocking=False, copy=False, *rest):
    return _to(e, x, copy)


@lowering("aten::to.device")
def _to_device(e, x, device, dtype, non_blocking=False, copy=False, *rest):
    return _to(e, x, copy)


@lowering("aten::to.dtype_layout")
def _to_dtype_layout(e, x, dtype=None, layout=None, device=None, pin_memory=None,
                     non_blocking=False, copy=False, *rest):
    return _to(e, x, copy)


@lowering("aten::_to_copy")
def _to_copy(e, x, *args):
    return _to(e, x, True)
