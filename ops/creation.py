"""Tensor creation: zeros/ones/full/empty (zero-filled, deterministic), arange, linspace, eye,
the *_like and new_* variants, tensor literals (`aten::tensor`, `as_tensor`, `scalar_tensor`)
and the random ops (drawn from `ops.random.generator()`). Layout, device and pin_memory
arguments are accepted and ignored (everything lives on the CPU)."""

from __future__ import annotations

import math

import numpy as np

from .dtypes import DEFAULT_FLOAT, DEFAULT_INT, dtype_from_code
from .random import generator
from .tensor import Tensor
from .registry import op
from .views import exact_op

_OPTS = "ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None"
_LIKE_OPTS = _OPTS + ", MemoryFormat? memory_format=None"


def _dt(dtype, default=DEFAULT_FLOAT) -> np.dtype:
    return np.dtype(default) if dtype is None else dtype_from_code(dtype)


def scalar_dtype(v) -> np.dtype:
    """The dtype PyTorch infers for a Python number (bool, int64, default float, complex64)."""
    if isinstance(v, (bool, np.bool_)):
        return np.dtype(np.bool_)
    if isinstance(v, (int, np.integer)):
        return DEFAULT_INT
    if isinstance(v, complex):
        return np.dtype(np.complex64)
    return DEFAULT_FLOAT


def _size(size) -> tuple:
    size = [size] if isinstance(size, int) else list(size)
    for s in size:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {size}")
    return tuple(size)


# ---- constant fills

@op(f"aten::zeros(SymInt[] size, *, {_OPTS}) -> Tensor")
def zeros(size, dtype=None, layout=None, device=None, pin_memory=None):
    return np.zeros(_size(size), dtype=_dt(dtype))


@op(f"aten::ones(SymInt[] size, *, {_OPTS}) -> Tensor")
def ones(size, dtype=None, layout=None, device=None, pin_memory=None):
    return np.ones(_size(size), dtype=_dt(dtype))


@op(f"aten::empty.memory_format(SymInt[] size, *, {_OPTS}, MemoryFormat? memory_format=None) -> Tensor")
def empty(size, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return np.zeros(_size(size), dtype=_dt(dtype))


@op(f"aten::full(SymInt[] size, Scalar fill_value, *, {_OPTS}) -> Tensor")
def full(size, fill_value, dtype=None, layout=None, device=None, pin_memory=None):
    return np.full(_size(size), fill_value, dtype=_dt(dtype, scalar_dtype(fill_value)))


@op(f"aten::zeros_like(Tensor self, *, {_LIKE_OPTS}) -> Tensor",
    f"aten::empty_like(Tensor self, *, {_LIKE_OPTS}) -> Tensor")
def zeros_like(self, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return np.zeros(self.shape, dtype=_dt(dtype, self.dtype))


@op(f"aten::ones_like(Tensor self, *, {_LIKE_OPTS}) -> Tensor")
def ones_like(self, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return np.ones(self.shape, dtype=_dt(dtype, self.dtype))


@op(f"aten::full_like(Tensor self, Scalar fill_value, *, {_LIKE_OPTS}) -> Tensor")
def full_like(self, fill_value, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return np.full(self.shape, fill_value, dtype=_dt(dtype, self.dtype))


@op(f"aten::new_zeros(Tensor self, SymInt[] size, *, {_OPTS}) -> Tensor",
    f"aten::new_empty(Tensor self, SymInt[] size, *, {_OPTS}) -> Tensor")
def new_zeros(self, size, dtype=None, layout=None, device=None, pin_memory=None):
    return np.zeros(_size(size), dtype=_dt(dtype, self.dtype))


@op(f"aten::new_ones(Tensor self, SymInt[] size, *, {_OPTS}) -> Tensor")
def new_ones(self, size, dtype=None, layout=None, device=None, pin_memory=None):
    return np.ones(_size(size), dtype=_dt(dtype, self.dtype))


@op(f"aten::new_full(Tensor self, SymInt[] size, Scalar fill_value, *, {_OPTS}) -> Tensor")
def new_full(self, size, fill_value, dtype=None, layout=None, device=None, pin_memory=None):
    return np.full(_size(size), fill_value, dtype=_dt(dtype, self.dtype))


# ---- ranges

def _range_dtype(dtype, *values) -> np.dtype:
    if dtype is not None:
        return dtype_from_code(dtype)
    return DEFAULT_FLOAT if any(isinstance(v, float) for v in values) else DEFAULT_INT


def _arange(start, end, step, dtype):
    dt = _range_dtype(dtype, start, end, step)
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if all(isinstance(v, int) for v in (start, end, step)):
        n = max(0, -((start - end) // step))
        return (start + np.arange(n, dtype=np.int64) * step).astype(dt)
    n = max(0, math.ceil((end - start) / step))
    return (start + np.arange(n, dtype=np.float64) * step).astype(dt)


@op(f"aten::arange(Scalar end, *, {_OPTS}) -> Tensor")
def arange(end, dtype=None, layout=None, device=None, pin_memory=None):
    return _arange(0, end, 1, dtype)


@op(f"aten::arange.start(Scalar start, Scalar end, *, {_OPTS}) -> Tensor")
def arange_start(start, end, dtype=None, layout=None, device=None, pin_memory=None):
    return _arange(start, end, 1, dtype)


@op(f"aten::arange.start_step(Scalar start, Scalar end, Scalar step=1, *, {_OPTS}) -> Tensor")
def arange_start_step(start, end, step=1, dtype=None, layout=None, device=None, pin_memory=None):
    return _arange(start, end, step, dtype)


def _item(v):
    return v.item() if isinstance(v, np.ndarray) else v


@op(f"aten::linspace(Scalar start, Scalar end, int steps, *, {_OPTS}) -> Tensor",
    f"aten::linspace.Tensor_Tensor(Tensor start, Tensor end, int steps, *, {_OPTS}) -> Tensor",
    f"aten::linspace.Tensor_Scalar(Tensor start, Scalar end, int steps, *, {_OPTS}) -> Tensor",
    f"aten::linspace.Scalar_Tensor(Scalar start, Tensor end, int steps, *, {_OPTS}) -> Tensor")
def linspace(start, end, steps, dtype=None, layout=None, device=None, pin_memory=None):
    start, end = _item(start), _item(end)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dt = _dt(dtype)
    work = dt if dt.kind == "f" else np.dtype(np.float64)
    if steps == 1:
        return np.full((1,), start, dtype=work).astype(dt)
    i = np.arange(steps)
    step = (work.type(end) - work.type(start)) / work.type(max(steps - 1, 1))
    half = steps // 2
    out = np.where(i < half, work.type(start) + step * i.astype(work),
                   work.type(end) - step * (steps - 1 - i).astype(work))
    return out.astype(dt)


@op(f"aten::eye(SymInt n, *, {_OPTS}) -> Tensor")
def eye(n, dtype=None, layout=None, device=None, pin_memory=None):
    return eye_m(n, n, dtype)


@op(f"aten::eye.m(SymInt n, SymInt m, *, {_OPTS}) -> Tensor")
def eye_m(n, m, dtype=None, layout=None, device=None, pin_memory=None):
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    return np.eye(n, m, dtype=_dt(dtype))


# ---- tensor literals

def _infer_list_dtype(data) -> np.dtype:
    kinds = set()

    def walk(x):
        if isinstance(x, (list, tuple)):
            for y in x:
                walk(y)
        elif isinstance(x, np.ndarray):
            kinds.add(x.dtype.kind)
        else:
            kinds.add(scalar_dtype(x).kind)
    walk(data)
    for kind, dt in (("c", np.complex64), ("f", DEFAULT_FLOAT), ("i", DEFAULT_INT), ("u", DEFAULT_INT)):
        if kind in kinds:
            return np.dtype(dt)
    return np.dtype(np.bool_) if kinds else DEFAULT_FLOAT


def _check_ragged(data, depth=0):
    if not isinstance(data, (list, tuple)) or not data:
        return
    lens = [len(x) if isinstance(x, (list, tuple)) else None for x in data]
    first = lens[0]
    for n in lens[1:]:
        if n != first:
            raise ValueError(f"expected sequence of length {first} at dim {depth + 1} (got {n})")
    for x in data:
        _check_ragged(x, depth + 1)


def _literal(arr: np.ndarray, requires_grad: bool):
    if requires_grad:
        if arr.dtype.kind not in "fc":
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        return Tensor(arr, requires_grad=True)
    return arr


@op("aten::tensor.float(float t, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False) -> Tensor",
    "aten::tensor.int(int t, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False) -> Tensor",
    "aten::tensor.bool(bool t, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False) -> Tensor",
    "aten::tensor.complex(complex t, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False) -> Tensor")
def tensor_scalar(t, dtype=None, device=None, requires_grad=False):
    return _literal(np.asarray(t, dtype=_dt(dtype, scalar_dtype(t))), requires_grad)


@op("aten::tensor(t[] data, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False) -> Tensor")
def tensor(data, dtype=None, device=None, requires_grad=False):
    _check_ragged(data)
    dt = _dt(dtype, _infer_list_dtype(data))
    return _literal(np.array(data, dtype=dt).reshape(np.shape(data)) if data else np.zeros((0,), dt),
                    requires_grad)


@exact_op("aten::as_tensor(Tensor(a) data, *, ScalarType? dtype=None, Device? device=None) -> Tensor(b|a)")
def as_tensor(data, dtype=None, device=None):
    dt = _dt(dtype, data.dtype)
    return data if dt == data.dtype else data.astype(dt)


@op("aten::as_tensor.float(float t, *, ScalarType? dtype=None, Device? device=None) -> Tensor",
    "aten::as_tensor.int(int t, *, ScalarType? dtype=None, Device? device=None) -> Tensor",
    "aten::as_tensor.bool(bool t, *, ScalarType? dtype=None, Device? device=None) -> Tensor",
    "aten::as_tensor.complex(complex t, *, ScalarType? dtype=None, Device? device=None) -> Tensor")
def as_tensor_scalar(t, dtype=None, device=None):
    return np.asarray(t, dtype=_dt(dtype, scalar_dtype(t)))


@op("aten::as_tensor.list(t[] data, *, ScalarType? dtype=None, Device? device=None) -> Tensor")
def as_tensor_list(data, dtype=None, device=None):
    return tensor(data, dtype)


@op(f"aten::scalar_tensor(Scalar s, *, {_OPTS}) -> Tensor")
def scalar_tensor(s, dtype=None, layout=None, device=None, pin_memory=None):
    return np.asarray(s, dtype=_dt(dtype))


# ---- random (seeded by ops.random)

def _float_dt(dtype, default=DEFAULT_FLOAT):
    dt = _dt(dtype, default)
    if dt.kind not in "fc":
        raise RuntimeError(f"expected a floating point dtype, got {dt.name}")
    return dt


@op(f"aten::rand(SymInt[] size, *, {_OPTS}) -> Tensor",
    f"aten::rand.generator(SymInt[] size, *, Generator? generator, {_OPTS}) -> Tensor", nondeterministic=True)
def rand(size, *args):
    dtype = args[1] if len(args) == 5 else (args[0] if args else None)
    return generator().random(_size(size)).astype(_float_dt(dtype))


@op(f"aten::randn(SymInt[] size, *, {_OPTS}) -> Tensor",
    f"aten::randn.generator(SymInt[] size, *, Generator? generator, {_OPTS}) -> Tensor", nondeterministic=True)
def randn(size, *args):
    dtype = args[1] if len(args) == 5 else (args[0] if args else None)
    return generator().standard_normal(_size(size)).astype(_float_dt(dtype))


@op(f"aten::rand_like(Tensor self, *, {_LIKE_OPTS}) -> Tensor", nondeterministic=True)
def rand_like(self, dtype=None, *rest):
    return generator().random(self.shape).astype(_float_dt(dtype, self.dtype))


@op(f"aten::randn_like(Tensor self, *, {_LIKE_OPTS}) -> Tensor", nondeterministic=True)
def randn_like(self, dtype=None, *rest):
    return generator().standard_normal(self.shape).astype(_float_dt(dtype, self.dtype))


def _randint(low, high, size, dtype):
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    return generator().integers(low, high, _size(size)).astype(_dt(dtype, DEFAULT_INT))


@op("aten::randint(SymInt high, SymInt[] size, *, ScalarType? dtype=4, Layout? layout=None, Device? device=None, "
    "bool? pin_memory=None) -> Tensor", nondeterministic=True)
def randint(high, size, dtype=4, *rest):
    return _randint(0, high, size, dtype)


@op("aten::randint.low(SymInt low, SymInt high, SymInt[] size, *, ScalarType? dtype=4, Layout? layout=None, "
    "Device? device=None, bool? pin_memory=None) -> Tensor", nondeterministic=True)
def randint_low(low, high, size, dtype=4, *rest):
    return _randint(low, high, size, dtype)


@op(f"aten::randint_like(Tensor self, SymInt high, *, {_LIKE_OPTS}) -> Tensor", nondeterministic=True)
def randint_like(self, high, dtype=None, *rest):
    return _randint(0, high, self.shape, dtype).astype(_dt(dtype, self.dtype))


@op(f"aten::randint_like.low_dtype(Tensor self, SymInt low, SymInt high, *, {_LIKE_OPTS}) -> Tensor",
    nondeterministic=True)
def randint_like_low(self, low, high, dtype=None, *rest):
    return _randint(low, high, self.shape, dtype).astype(_dt(dtype, self.dtype))


@op("aten::normal.Tensor_float(Tensor mean, float std=1., *, Generator? generator=None) -> Tensor",
    "aten::normal.float_Tensor(float mean, Tensor std, *, Generator? generator=None) -> Tensor",
    "aten::normal.Tensor_Tensor(Tensor mean, Tensor std, *, Generator? generator=None) -> Tensor",
    nondeterministic=True)
def normal(mean, std=1.0, gen=None):
    like = mean if isinstance(mean, np.ndarray) else std
    if isinstance(std, np.ndarray) and (std < 0).any() or not isinstance(std, np.ndarray) and std < 0:
        raise RuntimeError("normal expects all elements of std >= 0.0")
    shape = np.broadcast_shapes(np.shape(mean), np.shape(std))
    return np.asarray(mean + std * generator().standard_normal(shape)).astype(like.dtype)


@op(f"aten::normal.float_float(float mean, float std, SymInt[] size, *, Generator? generator=None, {_OPTS}) -> Tensor",
    nondeterministic=True)
def normal_float_float(mean, std, size, gen=None, dtype=None, *rest):
    return (mean + std * generator().standard_normal(_size(size))).astype(_float_dt(dtype))


@op("aten::bernoulli(Tensor self, *, Generator? generator=None) -> Tensor",
    "aten::bernoulli.p(Tensor self, float p, *, Generator? generator=None) -> Tensor",
    nondeterministic=True)
def bernoulli(self, p=None, gen=None):
    prob = self if p is None else p
    if np.any((np.asarray(prob) < 0) | (np.asarray(prob) > 1)):
        raise RuntimeError("bernoulli expects p to be in [0, 1]")
    return (generator().random(self.shape) < prob).astype(self.dtype)
