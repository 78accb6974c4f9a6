"""A minimal `nn` for script_cases.py while irjit has no `irjit.nn`: `Module` (attributes set
in `__init__` become the runtime module's attributes, class names as torch prints them) and
`Linear` initialised as torch does (uniform in +-1/sqrt(in_features), from numpy's generator)."""

from __future__ import annotations

import math

import numpy as np

from irjit.ops.tensor import Tensor
from irjit.runtime.module import Module as RuntimeModule

_RNG = np.random.default_rng(0)


class Module(RuntimeModule):
    _torch_module = None

    def __init__(self):
        self.__dict__["attributes"] = {}
        self.__dict__["path"] = ""

    @property
    def qualified_name(self) -> str:
        cls = type(self)
        module = cls.__dict__.get("_torch_module") or cls.__module__
        return ".".join(["__torch__"] + ([] if module == "__main__" else [module]) +
                        [cls.__qualname__])

    def __setattr__(self, name, value):
        self.attributes[name] = value

    def __getattr__(self, name):
        try:
            return self.__dict__["attributes"][name]
        except KeyError:
            raise AttributeError(name) from None


class Linear(Module):
    _torch_module = "torch.nn.modules.linear"

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        k = 1.0 / math.sqrt(in_features)
        self.weight = Tensor(_RNG.uniform(-k, k, (out_features, in_features)).astype(np.float32),
                             requires_grad=True)
        self.bias = Tensor(_RNG.uniform(-k, k, (out_features,)).astype(np.float32),
                           requires_grad=True)


class Conv2d(Module):
    _torch_module = "torch.nn.modules.conv"

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, bias: bool = True):
        super().__init__()
        k = 1.0 / math.sqrt(in_channels * kernel_size * kernel_size)
        shape = (out_channels, in_channels, kernel_size, kernel_size)
        self.weight = Tensor(_RNG.uniform(-k, k, shape).astype(np.float32), requires_grad=True)
        self.bias = Tensor(_RNG.uniform(-k, k, (out_channels,)).astype(np.float32),
                           requires_grad=True) if bias else None
        self.stride, self.padding, self.dilation, self.groups = (1, 1), (0, 0), (1, 1), 1


class ReLU(Module):
    _torch_module = "torch.nn.modules.activation"
