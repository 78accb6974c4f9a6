"""torch.nn.functional on irjit tensors. Every registered op is here under its aten name
(`F.conv2d`, `F.linear`, `F.gelu`, ... generated from the schemas); the functions below are the
ones whose torch.nn.functional signature differs from the aten schema (an optional `dim`,
`training` and `inplace` flags, `reduction` as a string, another argument order), each a thin
adapter onto the aten op."""

from __future__ import annotations

from typing import Any, Optional

from irjit.ops.tensor import Tensor

from .. import eager

_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def _reduction(reduction: str) -> int:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction (none, mean or sum)")
    return _REDUCTIONS[reduction]


def _softmax_dim(x: Tensor, dim: Optional[int]) -> int:
    return (0 if x.dim() in (0, 1, 3) else 1) if dim is None else dim


def softmax(input: Tensor, dim: Optional[int] = None, dtype: Any = None) -> Tensor:
    return eager.run("softmax", input, _softmax_dim(input, dim), dtype)


def log_softmax(input: Tensor, dim: Optional[int] = None, dtype: Any = None) -> Tensor:
    return eager.run("log_softmax", input, _softmax_dim(input, dim), dtype)


def _inplace_or_not(name: str):
    def fn(input: Tensor, *args: Any, inplace: bool = False, **kwargs: Any) -> Tensor:
        return eager.run(name + "_" if inplace else name, input, *args, **kwargs)
    fn.__name__ = name
    return fn


relu = _inplace_or_not("relu")


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    return eager.run("leaky_relu_" if inplace else "leaky_relu", input, negative_slope)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Tensor:
    return eager.run("hardtanh_" if inplace else "hardtanh", input, min_val, max_val)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    return eager.run("elu_" if inplace else "elu", input, alpha)


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:
    """`input` divided by its p-norm along `dim` (at least `eps`)."""
    denom = eager.run("linalg_vector_norm", input, p, [dim], True).clamp_min(eps).expand_as(input)
    return input / denom


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    if p < 0 or p > 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    return eager.run("dropout_" if inplace else "dropout", input, p, training)


def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    name = "max_pool2d_with_indices" if return_indices else "max_pool2d"
    return eager.run(name, input, kernel_size, kernel_size if stride is None else stride, padding,
                     dilation, ceil_mode)


def max_pool1d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    name = "max_pool1d_with_indices" if return_indices else "max_pool1d"
    return eager.run(name, input, kernel_size, kernel_size if stride is None else stride, padding,
                     dilation, ceil_mode)


def avg_pool2d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: Optional[int] = None) -> Tensor:
    return eager.run("avg_pool2d", input, kernel_size, kernel_size if stride is None else stride,
                     padding, ceil_mode, count_include_pad, divisor_override)


def _verify_batch_size(size) -> None:
    size_prods = size[0]
    for i in range(len(size) - 2):
        size_prods *= size[i + 2]
    if size_prods == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                         f"{tuple(int(s) for s in size)}")


def batch_norm(input: Tensor, running_mean: Optional[Tensor], running_var: Optional[Tensor],
               weight: Optional[Tensor] = None, bias: Optional[Tensor] = None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    if training:
        _verify_batch_size(input.size())
    return eager.run("batch_norm", input, weight, bias, running_mean, running_var, training,
                     momentum, eps, True)


def layer_norm(input: Tensor, normalized_shape, weight: Optional[Tensor] = None,
               bias: Optional[Tensor] = None, eps: float = 1e-5) -> Tensor:
    return eager.run("layer_norm", input, normalized_shape, weight, bias, eps, True)


def embedding(input: Tensor, weight: Tensor, padding_idx: Optional[int] = None) -> Tensor:
    if padding_idx is not None:
        if padding_idx > 0:
            if not padding_idx < weight.size(0):
                raise ValueError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if not padding_idx >= -weight.size(0):
                raise ValueError("Padding_idx must be within num_embeddings")
            padding_idx = weight.size(0) + padding_idx
    else:
        padding_idx = -1
    return eager.run("embedding", weight, input, padding_idx)


def cross_entropy(input: Tensor, target: Tensor, weight: Optional[Tensor] = None, ignore_index: int = -100,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    return eager.run("cross_entropy_loss", input, target, weight, _reduction(reduction), ignore_index,
                     label_smoothing)


def nll_loss(input: Tensor, target: Tensor, weight: Optional[Tensor] = None, ignore_index: int = -100,
             reduction: str = "mean") -> Tensor:
    return eager.run("nll_loss", input, target, weight, _reduction(reduction), ignore_index)


def mse_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    input, target = eager.run("broadcast_tensors", [input, target])
    return eager.run("mse_loss", input, target, _reduction(reduction))


def l1_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    input, target = eager.run("broadcast_tensors", [input, target])
    return eager.run("l1_loss", input, target, _reduction(reduction))


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Optional[Tensor] = None,
                         reduction: str = "mean") -> Tensor:
    return eager.run("binary_cross_entropy", input, target, weight, _reduction(reduction))


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Optional[Tensor] = None,
                                     reduction: str = "mean", pos_weight: Optional[Tensor] = None) -> Tensor:
    return eager.run("binary_cross_entropy_with_logits", input, target, weight, pos_weight,
                     _reduction(reduction))


def __getattr__(name: str) -> Any:
    if name.startswith("__") or not eager.is_op(name):
        raise AttributeError(f"module 'irjit.nn.functional' has no attribute {name!r}")
    fn = eager.op_function(name)
    globals()[name] = fn
    return fn
