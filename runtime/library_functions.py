"""torch.nn.functional's script-compiled helpers, for `prim::CallFunction` nodes whose callee
graph is not supplied (a scripted module's `graph` calls `_max_pool2d`, `softmax`, ... rather
than inlining them).

Each entry takes the arguments in the order TorchScript passes them (the Python signature of
the function in torch/nn/functional.py) and computes what that function's compiled graph
computes, through the registry's ops (`run_op`), so autograd records it as usual.
"""

from __future__ import annotations

from typing import Any, Callable

from .autograd import run_op

LIBRARY_FUNCTIONS: dict[str, Callable[..., Any]] = {}


def library(*names: str):
    def wrap(fn):
        for n in names:
            LIBRARY_FUNCTIONS[n] = fn
        return fn
    return wrap


def _inplace(kind: str, x, inplace: bool, *args):
    return run_op(f"{kind}_" if inplace else kind, x, *args)


@library("relu")
def _relu(x, inplace=False):
    return _inplace("aten::relu", x, inplace)


@library("relu6")
def _relu6(x, inplace=False):
    return run_op("aten::hardtanh_" if inplace else "aten::relu6", x, *([0.0, 6.0] if inplace else []))


def _unary_with_inplace_flag(name: str):
    def fn(x, inplace=False):
        return _inplace(f"aten::{name}", x, inplace)
    return fn


for _name in ("silu", "hardswish", "hardsigmoid", "mish"):
    LIBRARY_FUNCTIONS[_name] = _unary_with_inplace_flag(_name)


@library("elu")
def _elu(x, alpha=1.0, inplace=False):
    return _inplace("aten::elu", x, inplace, alpha)


@library("leaky_relu")
def _leaky_relu(x, negative_slope=0.01, inplace=False):
    return _inplace("aten::leaky_relu", x, inplace, negative_slope)


@library("hardtanh")
def _hardtanh(x, min_val=-1.0, max_val=1.0, inplace=False):
    return _inplace("aten::hardtanh", x, inplace, min_val, max_val)


@library("_get_softmax_dim")
def _get_softmax_dim(name, ndim, stacklevel=0):
    return 0 if ndim in (0, 1, 3) else 1


def _softmax_like(kind: str):
    def fn(x, dim=None, _stacklevel=3, dtype=None):
        if dim is None:
            dim = _get_softmax_dim(kind, x.dim())
        return run_op(kind, x, dim, dtype)
    return fn


LIBRARY_FUNCTIONS["softmax"] = _softmax_like("aten::softmax")
LIBRARY_FUNCTIONS["log_softmax"] = _softmax_like("aten::log_softmax")


@library("dropout")
def _dropout(x, p=0.5, training=True, inplace=False):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    return _inplace("aten::dropout", x, inplace, p, training)


@library("layer_norm")
def _layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    return run_op("aten::layer_norm", x, list(normalized_shape), weight, bias, eps, True)


@library("group_norm")
def _group_norm(x, num_groups, weight=None, bias=None, eps=1e-5):
    return run_op("aten::group_norm", x, num_groups, weight, bias, eps, True)


def _max_pool(nd: int, with_indices: bool):
    def fn(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
           return_indices=False):
        stride = [] if stride is None else stride
        if with_indices or return_indices:
            return run_op(f"aten::max_pool{nd}d_with_indices", x, kernel_size, stride, padding,
                          dilation, ceil_mode)
        return run_op(f"aten::max_pool{nd}d", x, kernel_size, stride, padding, dilation,
                      ceil_mode)
    return fn


for _nd in (1, 2, 3):
    LIBRARY_FUNCTIONS[f"_max_pool{_nd}d"] = _max_pool(_nd, False)
    LIBRARY_FUNCTIONS[f"max_pool{_nd}d_with_indices"] = _max_pool(_nd, True)


def _output_size(x, output_size, nd: int) -> list[int]:
    """`_list_with_default`: a None entry keeps the input's size in that dimension."""
    sizes = list(output_size) if isinstance(output_size, (list, tuple)) else [output_size] * nd
    return [x.shape[x.dim() - nd + i] if s is None else int(s) for i, s in enumerate(sizes)]


def _adaptive_avg(nd: int):
    def fn(x, output_size):
        return run_op(f"aten::adaptive_avg_pool{nd}d", x, _output_size(x, output_size, nd))
    return fn


def _adaptive_max(nd: int, with_indices: bool):
    def fn(x, output_size, return_indices=False):
        out = run_op(f"aten::adaptive_max_pool{nd}d", x, _output_size(x, output_size, nd))
        return out if with_indices or return_indices else out[0]
    return fn


for _nd in (1, 2, 3):
    LIBRARY_FUNCTIONS[f"adaptive_avg_pool{_nd}d"] = _adaptive_avg(_nd)
for _nd in (1, 2):
    LIBRARY_FUNCTIONS[f"_adaptive_max_pool{_nd}d"] = _adaptive_max(_nd, False)
    LIBRARY_FUNCTIONS[f"adaptive_max_pool{_nd}d_with_indices"] = _adaptive_max(_nd, True)


# ---- symbolic_script's helpers (runtime/symbolic_script.cpp), which PyTorch's autodiff and
# ours call from `df` graphs (`prim::CallFunction` of `AD_...`) when ranks are not static

@library("AD_mat_transpose")
def _ad_mat_transpose(mat):
    dim = mat.dim()
    if dim == 1:
        return mat
    if dim == 2:
        return run_op("aten::t", mat)
    dims = list(range(dim))
    dims[-1], dims[-2] = dim - 2, dim - 1
    return run_op("aten::permute", mat, dims)


def _ad_matmul_bw_special_fold(mat1, mat2):
    mat1_t = _ad_mat_transpose(mat1)
    mat1_fold = run_op("aten::reshape", mat1_t, [-1, mat1_t.shape[-1]])
    mat2_fold = run_op("aten::reshape", mat2, [-1, mat2.shape[-1]])
    return run_op("aten::mm", run_op("aten::t", mat1_fold), mat2_fold)


@library("AD_matmul_bw_size")
def _ad_matmul_bw_size(mat1, mat2, out_size):
    dim1, dim2, dim_out = mat1.dim(), mat2.dim(), len(out_size)
    if dim1 == 0 or dim2 == 0:
        return run_op("aten::mul", mat1, mat2)
    if dim_out == 2 and dim1 == dim2 and dim1 >= 3:
        return _ad_matmul_bw_special_fold(mat1, mat2)
    if dim_out == 1 and dim1 - dim2 == 1 and dim1 >= 3:
        out = _ad_matmul_bw_special_fold(mat1, run_op("aten::unsqueeze", mat2, -1))
        return run_op("aten::squeeze", out, -1)
    if dim1 + dim2 == dim_out:
        target_dim2 = 0 if dim2 == 1 else -2
        return run_op("aten::matmul", run_op("aten::unsqueeze", mat1, dim1),
                      run_op("aten::unsqueeze", mat2, target_dim2))
    if dim_out == dim1 - dim2:
        return run_op("aten::squeeze", run_op("aten::matmul", mat1, run_op("aten::unsqueeze", mat2, dim2)), -1)
    if dim_out == dim2 - dim1:
        return run_op("aten::squeeze", run_op("aten::matmul", run_op("aten::unsqueeze", mat1, -2), mat2), -2)
    return run_op("aten::matmul", mat1, mat2)
