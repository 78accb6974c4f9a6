"""Eager tensors, torch-shaped: every registered op as a function (`irjit.tanh(x)`) and, where
its schema starts with `Tensor self`, as a Tensor method (`x.sum(1)`), plus Python's operators.

Each call binds its arguments to the op's schemas (`eager_binding`) and runs the registry entry
through `runtime.autograd.call_op`, so eager execution, the interpreter and codegen share one
definition and `.backward()` uses the interpreter's tape. The methods are installed on the
interpreter's own `ops.tensor.Tensor` (a layer-1 data holder that cannot import autograd) when
this front-end module is imported: graphs' outputs are then eager tensors too, and the
interpreter, which never calls a Tensor method or operator, runs exactly as before.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from irjit.ops import registry
from irjit.ops.dtypes import DEFAULT_FLOAT, is_floating
from irjit.ops.tensor import Tensor
from irjit.ops.types import Device
from irjit.runtime import autograd
from irjit.runtime.autograd import call_op

from .eager_dtypes import bool_, float16, float32, float64, int32, int64
from .eager_binding import ArgumentError, resolve, tensor_overloads
from .eager_indexing import getitem, setitem


def is_op(name: str) -> bool:
    """Whether `aten::<name>` has an overload a torch user can call (one taking or giving a tensor)."""
    return bool(tensor_overloads(f"aten::{name}"))


def op_function(name: str, method: bool = False) -> Callable[..., Any]:
    """The eager function (or, with `method`, Tensor method) of `aten::<name>`."""
    kind = f"aten::{name}"
    takes_requires_grad = any(a.name == "requires_grad" for e in tensor_overloads(kind)
                              for a in e.schema.arguments)

    def call(*args, **kwargs):
        requires_grad = None if takes_requires_grad else kwargs.pop("requires_grad", None)
        entry, values = resolve(kind, args, kwargs, method)
        out = call_op(entry, values)
        if requires_grad:
            out.requires_grad_()
        if isinstance(out, list) and out and isinstance(out[0], Tensor):
            return tuple(out)  # torch's bindings give Tensor[] results as tuples
        return out

    call.__name__ = call.__qualname__ = name
    call.__doc__ = "\n".join(e.schema.text for e in tensor_overloads(kind))
    return call


def run(name: str, *args: Any, **kwargs: Any) -> Any:
    """Call `aten::<name>` eagerly (what the operators below use)."""
    entry, values = resolve(f"aten::{name}", args, kwargs)
    return call_op(entry, values)


# ---- creating tensors

def tensor(data: Any, dtype: Any = None, requires_grad: bool = False, device: Any = None) -> Tensor:
    """A new leaf tensor holding a copy of `data` (nested lists, numbers, numpy arrays or
    tensors); dtypes are inferred as torch does (floats float32, ints int64)."""
    if device not in (None, "cpu"):
        raise ValueError(f"irjit tensors live on the CPU (got device={device!r})")
    if isinstance(data, Tensor):
        data = data.data
    tracer = autograd.TRACER[0]
    if tracer is not None:
        tracer.warn("irjit.tensor results are registered as constants in the trace. You can "
                    "safely ignore this warning if you use this function to create tensors out "
                    "of constant variables that would be the same every time you call this "
                    "function. In any other case, this might cause the trace to be incorrect.")
    if isinstance(data, (np.ndarray, np.generic)):
        arr = np.array(data, dtype=dtype, copy=True)
    else:
        autograd.TRACER[0] = None
        try:
            arr = run("tensor", data, dtype=dtype).data
        finally:
            autograd.TRACER[0] = tracer
    if tracer is not None:  # recorded as torch records it: a constant moved and detached
        moved = run("to", Tensor(arr), Device("cpu"), arr.dtype, False, False, None)
        return _requires_grad_(run("detach", moved), bool(requires_grad))
    if requires_grad and not is_floating(arr.dtype):
        raise RuntimeError("only tensors of floating point dtype can require gradients "
                           f"(got {arr.dtype})")
    return Tensor(arr, requires_grad=bool(requires_grad))


def as_tensor(data: Any, dtype: Any = None) -> Tensor:
    """`data` itself when it is a tensor of that dtype, else a new tensor (numpy arrays are
    shared, as torch.as_tensor shares them)."""
    if isinstance(data, Tensor) and (dtype is None or data.dtype == np.dtype(dtype)):
        return data
    if isinstance(data, np.ndarray) and (dtype is None or data.dtype == np.dtype(dtype)):
        return Tensor(data)
    return tensor(data, dtype=dtype)


def from_numpy(arr: np.ndarray) -> Tensor:
    """A tensor sharing `arr`'s memory."""
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(arr).__name__})")
    return Tensor(arr)


def get_default_dtype() -> np.dtype:
    return DEFAULT_FLOAT


# ---- Tensor methods that are not single ops

def _size(self: Tensor, dim: Optional[int] = None):
    """Sizes as ints; while tracing, as the traced 0-dim tensors PyTorch's tracer gives
    (`aten::size` + `prim::NumToTensor`), so arithmetic on them is recorded."""
    tracer = autograd.TRACER[0]
    if dim is None:
        if tracer is not None:
            return tuple(tracer.size(self, d) for d in range(self.data.ndim))
        return tuple(self.data.shape)
    if tracer is not None:
        ndim = self.data.ndim
        if not -ndim <= int(dim) < max(ndim, 1):
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-ndim}, {ndim - 1}], but got {dim})")
        return tracer.size(self, int(dim))
    return run("size", self, dim)


def _shape(self: Tensor):
    if autograd.TRACER[0] is not None:
        return _size(self)
    return self.data.shape


def _requires_grad_(self: Tensor, requires_grad: bool = True) -> Tensor:
    if requires_grad and not is_floating(self.dtype):
        raise RuntimeError("only tensors of floating point dtype can require gradients "
                           f"(got {self.dtype})")
    if not requires_grad and self.grad_fn is not None:
        raise RuntimeError("you can only change requires_grad flags of leaf variables")
    self.requires_grad = bool(requires_grad)
    return self


def _backward(self: Tensor, gradient: Any = None) -> None:
    if not self.requires_grad:
        raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
    if gradient is None:
        if self.numel() != 1:
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
        gradient = np.ones_like(self.data)
    elif isinstance(gradient, Tensor):
        gradient = gradient.data
    autograd.backward([self], [np.asarray(gradient, dtype=self.dtype)])


_plain_detach = Tensor.detach


def _detach(self: Tensor) -> Tensor:
    """A tensor sharing the data without gradient history (`aten::detach` while tracing)."""
    if autograd.TRACER[0] is not None:
        return run("detach", self)
    return _plain_detach(self)


def _to_dtype(dtype: np.dtype) -> Callable[[Tensor], Tensor]:
    def convert(self: Tensor) -> Tensor:
        return run("to", self, dtype)
    return convert


def _bool(self: Tensor) -> bool:
    if autograd.TRACER[0] is not None:
        autograd.TRACER[0].data_dependent("boolean")
    if self.numel() != 1:
        raise RuntimeError(f"Boolean value of Tensor with {self.numel()} values is ambiguous")
    return bool(self.data.reshape(()).item())


def _len(self: Tensor) -> int:
    if self.dim() == 0:
        raise TypeError("len() of a 0-d tensor")
    if autograd.TRACER[0] is not None:
        autograd.TRACER[0].warn("Using len to get tensor shape might cause the trace to be "
                                "incorrect. Recommended usage would be tensor.shape[0]. Passing "
                                "a tensor of different shape might lead to errors or silently "
                                "give incorrect results.")
    return self.data.shape[0]


def _iter(self: Tensor):
    if self.dim() == 0:
        raise TypeError("iteration over a 0-d tensor")
    return iter(run("unbind", self, 0))


def _scalar(kind: type) -> Callable[[Tensor], Any]:
    def convert(self: Tensor):
        if autograd.TRACER[0] is not None:
            autograd.TRACER[0].data_dependent(kind.__name__)
        if self.numel() != 1:
            raise ValueError(f"only one element tensors can be converted to Python scalars "
                             f"(this one has {self.numel()})")
        return kind(self.data.reshape(()).item())
    return convert


def _index(self: Tensor) -> int:
    if self.dtype.kind not in "iu" or self.numel() != 1:
        raise TypeError("only integer tensors of a single element can be converted to an index")
    return int(self.data.reshape(()).item())


def _binary(name: str, reflected: bool = False) -> Callable[[Tensor, Any], Any]:
    if reflected:
        return lambda self, other: run(name, _as_operand(other, self), self)
    return lambda self, other: run(name, self, other)


def _as_operand(v: Any, like: Tensor) -> Any:
    """A Python number on the left of an operator, as the 0-dim tensor torch makes of it."""
    if isinstance(v, Tensor):
        return v
    return tensor(v)


def _rtruediv(self: Tensor, other: Any) -> Tensor:
    return run("mul", run("reciprocal", self), other)


_OPERATORS = {
    "__add__": _binary("add"), "__radd__": _binary("add"),
    "__sub__": _binary("sub"), "__rsub__": _binary("rsub"),
    "__mul__": _binary("mul"), "__rmul__": _binary("mul"),
    "__truediv__": _binary("div"), "__rtruediv__": _rtruediv,
    "__floordiv__": _binary("floor_divide"), "__rfloordiv__": _binary("floor_divide", True),
    "__mod__": _binary("remainder"), "__rmod__": _binary("remainder", True),
    "__pow__": _binary("pow"), "__rpow__": lambda self, other: run("pow", other, self),
    "__matmul__": _binary("matmul"), "__rmatmul__": _binary("matmul", True),
    "__and__": _binary("__and__"), "__rand__": _binary("__and__"),
    "__or__": _binary("__or__"), "__ror__": _binary("__or__"),
    "__xor__": _binary("__xor__"), "__rxor__": _binary("__xor__"),
    "__iadd__": _binary("add_"), "__isub__": _binary("sub_"), "__imul__": _binary("mul_"),
    "__itruediv__": _binary("div_"), "__iand__": _binary("__iand__"),
    "__ior__": _binary("__ior__"), "__ixor__": _binary("__ixor__"),
    "__eq__": _binary("eq"), "__ne__": _binary("ne"), "__lt__": _binary("lt"),
    "__le__": _binary("le"), "__gt__": _binary("gt"), "__ge__": _binary("ge"),
    "__neg__": lambda self: run("neg", self), "__pos__": lambda self: self,
    "__abs__": lambda self: run("abs", self), "__invert__": lambda self: run("bitwise_not", self),
    "__getitem__": getitem, "__setitem__": setitem,
    "__bool__": _bool, "__len__": _len, "__iter__": _iter,
    "__float__": _scalar(float), "__int__": _scalar(int), "__index__": _index,
    "__hash__": object.__hash__,
    "__contains__": lambda self, v: bool(run("any", run("eq", self, v))),
}

_METHODS = {
    "size": _size, "requires_grad_": _requires_grad_, "backward": _backward,
    "float": _to_dtype(float32), "double": _to_dtype(float64), "half": _to_dtype(float16),
    "long": _to_dtype(int64), "int": _to_dtype(int32), "bool": _to_dtype(bool_),
    "cpu": lambda self: self, "type_as": lambda self, other: run("type_as", self, other),
    "ndimension": lambda self: self.dim(), "nelement": lambda self: self.numel(),
    "detach": _detach,
}

_PROPERTIES = {
    "shape": _shape,
    "T": lambda self: run("numpy_T", self), "mT": lambda self: run("mT", self),
    "ndim": lambda self: self.dim(), "device": lambda self: Device("cpu"),
}


def _method_names() -> list[str]:
    """Ops whose schema starts with `Tensor self`: torch's Tensor methods."""
    names = set()
    for entry in registry.all_entries():
        s = entry.schema
        if (s.name.startswith("aten::") and s.arguments and s.arguments[0].name == "self"
                and s.arguments[0].type == "Tensor" and not s.name.startswith("aten::__")):
            names.add(s.name.split("::", 1)[1])
    return sorted(names)


def _install() -> None:
    """Give the interpreter's Tensor class torch's operators and methods (once)."""
    if getattr(Tensor, "_eager_installed", False):
        return
    registry._register_tensor_type()
    existing = set(dir(Tensor))
    for name in _method_names():
        if name not in existing and name not in _METHODS:
            setattr(Tensor, name, op_function(name, method=True))
    for name, fn in {**_OPERATORS, **_METHODS}.items():
        setattr(Tensor, name, fn)
    for name, fn in _PROPERTIES.items():
        setattr(Tensor, name, property(fn))
    Tensor._eager_installed = True


_install()

__all__ = ["ArgumentError", "tensor", "as_tensor", "from_numpy", "op_function", "is_op", "run",
           "get_default_dtype"]
