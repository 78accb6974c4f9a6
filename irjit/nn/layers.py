"""torch.nn's linear, convolution, activation, dropout, pooling and container modules, with
torch's constructor arguments, initialisation and repr. Their forwards are torch.nn's Python
forwards, calling the same functional ops with the same arguments, so a trace records what
PyTorch's tracer records (`aten::linear`, `aten::_convolution`, ...); every op itself is the
registry's one definition."""

from __future__ import annotations

import math
from collections import OrderedDict
from typing import Any, Iterator, Union

import numpy as np

from .. import eager
from . import functional as F
from . import init
from .module import Module, Parameter


def _pair(v: Any) -> tuple:
    return tuple(v) if isinstance(v, (list, tuple)) else (v, v)


def _empty(*shape: int) -> Parameter:
    return Parameter(np.empty(shape, np.float32))


def _init_bias(bias: Parameter, fan_in: int) -> None:
    if fan_in != 0:
        bound = 1 / math.sqrt(fan_in)
        init.uniform_(bias, -bound, bound)


class Linear(Module):
    """y = x W^T + b, weights initialised kaiming_uniform_(a=sqrt(5)) as torch does."""

    _torch_module = "torch.nn.modules.linear"

    def __init__(self, in_features: int, out_features: int, bias: bool = True):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = _empty(out_features, in_features)
        self.register_parameter("bias", _empty(out_features) if bias else None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            _init_bias(self.bias, init.calculate_fan_in_and_fan_out(self.weight)[0])

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Conv2d(Module):
    """2-d convolution over NCHW input, initialised as torch's _ConvNd.reset_parameters."""

    _torch_module = "torch.nn.modules.conv"

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros"):
        super().__init__()
        if in_channels % groups or out_channels % groups:
            raise ValueError("in_channels and out_channels must be divisible by groups")
        if padding_mode not in ("zeros", "reflect", "replicate", "circular"):
            raise ValueError(f"padding_mode must be one of 'zeros', 'reflect', 'replicate', "
                             f"'circular' (got {padding_mode!r})")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size, self.stride, self.dilation = _pair(kernel_size), _pair(stride), _pair(dilation)
        self.padding = padding if isinstance(padding, str) else _pair(padding)
        self.padding_mode = padding_mode
        if padding == "same":  # what F.pad is given for a padding_mode other than zeros
            self._reversed_padding_repeated_twice = []
            for d, k in zip(reversed(self.dilation), reversed(self.kernel_size)):
                total = d * (k - 1)
                self._reversed_padding_repeated_twice += [total // 2, total - total // 2]
        elif padding == "valid":
            self._reversed_padding_repeated_twice = [0, 0, 0, 0]
        else:
            self._reversed_padding_repeated_twice = [p for p in reversed(self.padding) for _ in (0, 1)]
        self.weight = _empty(out_channels, in_channels // groups, *self.kernel_size)
        self.register_parameter("bias", _empty(out_channels) if bias else None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            _init_bias(self.bias, init.calculate_fan_in_and_fan_out(self.weight)[0])

    def forward(self, input):
        if self.padding_mode != "zeros":
            return F.conv2d(F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode),
                            self.weight, self.bias, self.stride, (0, 0), self.dilation, self.groups)
        return F.conv2d(input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                        self.groups)

    def extra_repr(self) -> str:
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0, 0):
            s += f", padding={self.padding!r}"
        if self.dilation != (1, 1):
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class ReLU(Module):
    _torch_module = "torch.nn.modules.activation"

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Tanh(Module):
    _torch_module = "torch.nn.modules.activation"

    def forward(self, input):
        return eager.run("tanh", input)


class Sigmoid(Module):
    _torch_module = "torch.nn.modules.activation"

    def forward(self, input):
        return eager.run("sigmoid", input)


class Dropout(Module):
    """Zeroes elements with probability p in training mode and scales the rest by 1/(1-p)."""

    _torch_module = "torch.nn.modules.dropout"

    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class MaxPool2d(Module):
    _torch_module = "torch.nn.modules.pooling"

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices: bool = False,
                 ceil_mode: bool = False):
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class Sequential(Module):
    """Modules called in order, each on the previous one's output."""

    _torch_module = "torch.nn.modules.container"

    def __init__(self, *args: Module):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, m in args[0].items():
                self.add_module(name, m)
        else:
            for i, m in enumerate(args):
                self.add_module(str(i), m)

    def forward(self, input):
        for module in self:
            input = module(input)
        return input

    def __getitem__(self, idx: Union[int, slice]) -> Union[Module, "Sequential"]:
        items = list(self._modules.items())
        if isinstance(idx, slice):
            return Sequential(OrderedDict(items[idx]))
        if not -len(items) <= idx < len(items):
            raise IndexError(f"index {idx} is out of range")
        return items[idx][1]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def append(self, module: Module) -> "Sequential":
        self.add_module(str(len(self)), module)
        return self
