"""torch.nn's normalisation, embedding and recurrent-cell modules (the ones with running state
or several weights), initialised as torch does; forwards as torch.nn's Python forwards (see
layers.py)."""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

from irjit.ops.tensor import Tensor
from .. import eager
from . import functional as F
from . import init
from .module import Module, Parameter


def _param(*shape: int) -> Parameter:
    return Parameter(np.empty(shape, np.float32))


class BatchNorm2d(Module):
    """Batch normalisation over NCHW input; in training mode it normalises by the batch's
    statistics and updates the running ones (momentum, or a cumulative average when None)."""

    _torch_module = "torch.nn.modules.batchnorm"

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: Optional[float] = 0.1,
                 affine: bool = True, track_running_stats: bool = True, *, bias: bool = True):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self.register_parameter("weight", Parameter(np.ones(num_features, np.float32)) if affine else None)
        self.register_parameter("bias", Parameter(np.zeros(num_features, np.float32))
                                if affine and bias else None)
        if track_running_stats:
            self.register_buffer("running_mean", Tensor(np.zeros(num_features, np.float32)))
            self.register_buffer("running_var", Tensor(np.ones(num_features, np.float32)))
            self.register_buffer("num_batches_tracked", Tensor(np.array(0, np.int64)))
        else:
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                self.register_buffer(name, None)

    def forward(self, input):
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            factor = 1.0 / float(self.num_batches_tracked) if self.momentum is None else self.momentum
        training = self.training or (self.running_mean is None and self.running_var is None)
        keep = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if keep else None,
                            self.running_var if keep else None, self.weight, self.bias, training,
                            factor, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class LayerNorm(Module):
    _torch_module = "torch.nn.modules.normalization"

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True):
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.normalized_shape, self.eps, self.elementwise_affine = shape, eps, elementwise_affine
        self.register_parameter("weight", Parameter(np.ones(shape, np.float32)) if elementwise_affine else None)
        self.register_parameter("bias", Parameter(np.zeros(shape, np.float32))
                                if elementwise_affine and bias else None)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


class Embedding(Module):
    """A lookup table of `num_embeddings` vectors, initialised N(0, 1) with the padding row zero."""

    _torch_module = "torch.nn.modules.sparse"

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: Optional[int] = None):
        super().__init__()
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError("padding_idx must be within num_embeddings")
            padding_idx = padding_idx % num_embeddings
        self.num_embeddings, self.embedding_dim, self.padding_idx = num_embeddings, embedding_dim, padding_idx
        self.max_norm, self.scale_grad_by_freq, self.sparse = None, False, False
        self.weight = _param(num_embeddings, embedding_dim)
        init.normal_(self.weight)
        if padding_idx is not None:
            self.weight.data[padding_idx] = 0

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        return s + (f", padding_idx={self.padding_idx}" if self.padding_idx is not None else "")


class _Cell(Module):
    """torch's RNNCellBase: `gates * hidden_size` rows of input and hidden weights, all
    initialised uniform(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""

    _torch_module = "torch.nn.modules.rnn"
    gates = 1

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True):
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        rows = self.gates * hidden_size
        self.weight_ih = _param(rows, input_size)
        self.weight_hh = _param(rows, hidden_size)
        self.register_parameter("bias_ih", _param(rows) if bias else None)
        self.register_parameter("bias_hh", _param(rows) if bias else None)
        stdv = 1.0 / math.sqrt(hidden_size) if hidden_size > 0 else 0
        for p in self.parameters():
            init.uniform_(p, -stdv, stdv)

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}" + ("" if self.bias else ", bias=False")


class LSTMCell(_Cell):
    _torch_module = "torch.nn.modules.rnn"
    gates = 4

    def forward(self, input, hx=None):
        if input.dim() not in (1, 2):
            raise ValueError(f"LSTMCell: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None:
            for idx, value in enumerate(hx):
                if value.dim() not in (1, 2):
                    raise ValueError(f"LSTMCell: Expected hx[{idx}] to be 1D or 2D, got "
                                     f"{value.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            zeros = eager.run("zeros", input.size(0), self.hidden_size, dtype=input.dtype,
                              device=input.device)
            hx = (zeros, zeros)
        else:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0)) if not is_batched else hx
        ret = eager.run("lstm_cell", input, list(hx), self.weight_ih, self.weight_hh, self.bias_ih,
                        self.bias_hh)
        if not is_batched:
            ret = (ret[0].squeeze(0), ret[1].squeeze(0))
        return ret


class GRUCell(_Cell):
    _torch_module = "torch.nn.modules.rnn"
    gates = 3

    def forward(self, input, hx=None):
        if input.dim() not in (1, 2):
            raise ValueError(f"GRUCell: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None and hx.dim() not in (1, 2):
            raise ValueError(f"GRUCell: Expected hidden to be 1D or 2D, got {hx.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            hx = eager.run("zeros", input.size(0), self.hidden_size, dtype=input.dtype,
                           device=input.device)
        else:
            hx = hx.unsqueeze(0) if not is_batched else hx
        ret = eager.run("gru_cell", input, hx, self.weight_ih, self.weight_hh, self.bias_ih,
                        self.bias_hh)
        if not is_batched:
            ret = ret.squeeze(0)
        return ret
