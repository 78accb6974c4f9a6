"""`irjit.nn.Module` and `Parameter`, torch-shaped: attribute assignment registers parameters,
buffers and submodules; `parameters()`, `state_dict()`, `train()`/`eval()` and `repr` behave as
torch.nn's. A Module is a `runtime.module.Module` (what `%self` is when graphs run), so the
built-in forwards of `runtime.nn_modules` run on it and graphs can read its attributes."""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path
from typing import Any, Iterator, Optional, Union

import numpy as np

from irjit.ops.tensor import Tensor
from irjit.runtime import autograd
from irjit.runtime.module import Module as RuntimeModule

from .. import eager  # noqa: F401  (installs the tensor methods modules use)

_MISSING = object()


class Parameter(Tensor):
    """A tensor that a Module registers as a parameter when assigned to one of its attributes."""

    __slots__ = ()

    def __init__(self, data: Any = None, requires_grad: bool = True):
        if data is None:
            data = np.zeros((0,), np.float32)
        arr = data.data if isinstance(data, Tensor) else np.asarray(data)
        super().__init__(arr, requires_grad=requires_grad)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()


class Module(RuntimeModule):
    """Base class of models: subclasses set attributes in `__init__` and define `forward`."""

    # the module path torch gives a built-in class (`torch.nn.modules.linear`), for graphs
    _torch_module: Optional[str] = None

    def __init__(self) -> None:
        d = self.__dict__
        d["_parameters"], d["_buffers"], d["_modules"] = OrderedDict(), OrderedDict(), OrderedDict()
        d["_non_persistent"] = set()
        d["training"] = True
        d["path"] = ""

    # ---- naming, as graphs print it

    @property
    def qualified_name(self) -> str:
        """PyTorch's class name in graphs: `__torch__.torch.nn.modules.linear.Linear`, or
        `__torch__.<module>.<Class>` for user classes (`__main__` left out, as torch does)."""
        cls = type(self)
        module = cls.__dict__.get("_torch_module") or cls.__module__
        parts = ["__torch__"] + ([] if module == "__main__" else [module]) + [cls.__name__]
        return ".".join(parts)

    @property
    def attributes(self) -> dict:
        """Parameters, buffers and submodules by name (what graphs' `prim::GetAttr` reads)."""
        return {**self._parameters, **self._buffers, **self._modules}

    def get(self, name: str, default: Any = _MISSING) -> Any:
        for table in (self._parameters, self._buffers, self._modules):
            if name in table:
                return table[name]
        if name in self.__dict__:
            return self.__dict__[name]
        if default is not _MISSING:
            return default
        raise KeyError(f"{self.path}.{name}" if self.path else name)

    def set(self, name: str, value: Any) -> None:
        """What a graph's `prim::SetAttr` does: an attribute assignment."""
        setattr(self, name, value)

    # ---- attribute registration

    def __setattr__(self, name: str, value: Any) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign attributes before Module.__init__() call")
        params, buffers, modules = self._parameters, self._buffers, self._modules
        if isinstance(value, (Parameter, Module)):
            for table in (params, buffers, modules):
                table.pop(name, None)
            self.__dict__.pop(name, None)
            (params if isinstance(value, Parameter) else modules)[name] = value
            return
        for table, kind in ((params, "irjit.nn.Parameter"), (modules, "irjit.nn.Module"),
                            (buffers, "irjit.Tensor")):
            if name in table:
                if value is not None and not (table is buffers and isinstance(value, Tensor)):
                    raise TypeError(f"cannot assign '{type(value).__name__}' as {name!r} "
                                    f"({kind} or None expected)")
                table[name] = value
                return
        object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        for table in ("_parameters", "_buffers", "_modules"):
            if table in d and name in d[table]:
                return d[table][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        for table in (self._parameters, self._buffers, self._modules):
            if name in table:
                del table[name]
                return
        object.__delattr__(self, name)

    def register_buffer(self, name: str, tensor: Optional[Tensor], persistent: bool = True) -> None:
        """A tensor that is state but not a parameter (running statistics)."""
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' as buffer '{name}' "
                            "(irjit.Tensor or None expected)")
        self.__dict__.pop(name, None)
        self._buffers[name] = tensor
        if not persistent:
            self._non_persistent.add(name)

    def register_parameter(self, name: str, param: Optional[Parameter]) -> None:
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' as parameter '{name}' "
                            "(irjit.nn.Parameter or None expected)")
        self._parameters[name] = param

    def add_module(self, name: str, module: Optional["Module"]) -> None:
        self._modules[name] = module

    # ---- traversal

    def named_modules(self, prefix: str = "") -> Iterator[tuple[str, "Module"]]:
        seen = set()

        def walk(m: Module, p: str):
            if id(m) in seen:
                return
            seen.add(id(m))
            yield p, m
            for name, child in m._modules.items():
                if child is not None:
                    yield from walk(child, f"{p}.{name}" if p else name)
        yield from walk(self, prefix)

    def modules(self) -> Iterator["Module"]:
        for _, m in self.named_modules():
            yield m

    def named_children(self) -> Iterator[tuple[str, "Module"]]:
        for name, m in self._modules.items():
            if m is not None:
                yield name, m

    def children(self) -> Iterator["Module"]:
        for _, m in self.named_children():
            yield m

    def _named(self, table: str, prefix: str, recurse: bool) -> Iterator[tuple[str, Tensor]]:
        seen = set()
        mods = self.named_modules(prefix) if recurse else [(prefix, self)]
        for path, m in mods:
            for name, t in getattr(m, table).items():
                if t is not None and id(t) not in seen:
                    seen.add(id(t))
                    yield (f"{path}.{name}" if path else name), t

    def named_parameters(self, prefix: str = "", recurse: bool = True) -> Iterator[tuple[str, Parameter]]:
        return self._named("_parameters", prefix, recurse)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True) -> Iterator[tuple[str, Tensor]]:
        return self._named("_buffers", prefix, recurse)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def apply(self, fn) -> "Module":
        """Call `fn` on every submodule, then on this module (for custom initialisation)."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # ---- modes

    def train(self, mode: bool = True) -> "Module":
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for m in self.modules():
            m.__dict__["training"] = mode
        return self

    def eval(self) -> "Module":
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> "Module":
        for p in self.parameters():
            p.requires_grad = requires_grad
        return self

    def zero_grad(self) -> None:
        for p in self.parameters():
            p.grad = None

    # ---- state

    def state_dict(self) -> "OrderedDict[str, Tensor]":
        """Parameters and persistent buffers by dotted name, sharing the module's tensors."""
        out: OrderedDict[str, Tensor] = OrderedDict()
        for path, m in self.named_modules():
            pre = f"{path}." if path else ""
            for name, p in m._parameters.items():
                if p is not None:
                    out[pre + name] = p
            for name, b in m._buffers.items():
                if b is not None and name not in m._non_persistent:
                    out[pre + name] = b
        return out

    def load_state_dict(self, state: Union[dict, str, Path], strict: bool = True) -> tuple[list, list]:
        """Copy `state` (a dict of tensors or arrays, or a `.npz` file that `save_state_dict`
        wrote) into this module's tensors; returns (missing keys, unexpected keys)."""
        if isinstance(state, (str, Path)):
            state = load_state_dict_file(state)
        own = self.state_dict()
        missing = [k for k in own if k not in state]
        unexpected = [k for k in state if k not in own]
        if strict and (missing or unexpected):
            raise KeyError(f"error(s) in loading state_dict for {type(self).__name__}: "
                           f"missing keys {missing}, unexpected keys {unexpected}")
        for name, t in own.items():
            if name not in state:
                continue
            v = state[name]
            arr = np.asarray(v.data if isinstance(v, Tensor) else v)
            if arr.shape != t.shape:
                raise ValueError(f"size mismatch for {name}: copying a param with shape "
                                 f"{arr.shape}, the shape in the current model is {t.shape}")
            t.data[...] = arr
            t.bump_version()
        return missing, unexpected

    # ---- calling and printing

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if autograd.TRACER[0] is not None:
            return autograd.TRACER[0].call_module(self, args, kwargs)
        return self.forward(*args, **kwargs)

    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        lines = extra.split("\n") if extra else []
        children = [f"({name}): " + repr(m).replace("\n", "\n  ") for name, m in self._modules.items()]
        if not lines and not children:
            return f"{type(self).__name__}()"
        if len(lines) == 1 and not children:
            return f"{type(self).__name__}({extra})"
        return f"{type(self).__name__}(\n  " + "\n  ".join(lines + children) + "\n)"


def save_state_dict(state: Union[dict, Module], path: Union[str, Path]) -> None:
    """Write a state dict (or a module's) as a `.npz` of arrays keyed by dotted names."""
    if isinstance(state, Module):
        state = state.state_dict()
    arrays = {k: np.asarray(v.data if isinstance(v, Tensor) else v) for k, v in state.items()}
    with open(path, "wb") as f:
        np.savez(f, **arrays)


def load_state_dict_file(path: Union[str, Path]) -> "OrderedDict[str, Tensor]":
    """A state dict from a `.npz` file, as tensors in the file's order."""
    try:
        with np.load(path, allow_pickle=False) as npz:
            return OrderedDict((k, Tensor(npz[k])) for k in npz.files)
    except (OSError, ValueError) as e:
        raise ValueError(f"{path}: not a state dict .npz file ({e})") from None
