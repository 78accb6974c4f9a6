"""Built-in forwards of standard torch.nn modules, for modules whose method graphs are not in
the program (e.g. a params file with a `Conv2d` but no TorchScript for it).

`BUILTIN_FORWARDS[class_name](module, *args)` computes the module's forward through
`runtime.autograd.run_op`, so the registry's implementations and autograd are used. The
module's attributes hold its tensors and hyper-parameters under PyTorch's names (`weight`,
`bias`, `stride`, `padding`, `eps`, `running_mean`, `weight_ih_l0`, ...). A hyper-parameter
missing from the module falls back to PyTorch's constructor default (stride 1, padding 0,
eps 1e-5, momentum 0.1, training False, ...), since params files may hold only tensors;
recurrent layers infer their layer count, direction and bias use from the weights present.
`call_module` dispatches on the class name; an unknown class raises `KeyError(class_name)`
unless a fallback (the interpreter's own method-graph call) is installed with `set_fallback`.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from .autograd import run_op
from .module import Module
from irjit.ops.tensor import Tensor

BUILTIN_FORWARDS: dict[str, Callable[..., Any]] = {}
_fallback: list[Optional[Callable[..., Any]]] = [None]


def set_fallback(fn: Optional[Callable[..., Any]]) -> None:
    """Install the callable used for modules that have no built-in forward."""
    _fallback[0] = fn


def call_module(module: Module, *args: Any) -> Any:
    """Call `module` like `module(*args)`: the built-in forward of its class, else the fallback."""
    fwd = BUILTIN_FORWARDS.get(module.class_name)
    if fwd is None:
        if _fallback[0] is not None:
            return _fallback[0](module, *args)
        raise KeyError(module.class_name)
    return fwd(module, *args)


def builtin(*names: str):
    def wrap(fn):
        for n in names:
            BUILTIN_FORWARDS[n] = fn
        return fn
    return wrap


def _tuple(v: Any, n: int) -> list:
    if isinstance(v, (list, tuple)):
        return list(v) * n if len(v) == 1 and n > 1 else list(v)
    return [v] * n


def _training(m: Module) -> bool:
    return bool(m.get("training", False))


# ---- linear and convolutions

@builtin("Linear")
def linear_forward(m: Module, x):
    return run_op("aten::linear", x, m.get("weight"), m.get("bias", None))


def _conv_forward(m: Module, x, nd: int):
    w, b = m.get("weight"), m.get("bias", None)
    stride = _tuple(m.get("stride", 1), nd)
    dilation = _tuple(m.get("dilation", 1), nd)
    groups = int(m.get("groups", 1))
    padding = m.get("padding", 0)
    mode = m.get("padding_mode", "zeros")
    kind = f"aten::conv{nd}d"
    if mode != "zeros":
        if isinstance(padding, str):
            if padding == "valid":
                pads = [0] * (2 * nd)
            else:
                k = list(w.shape[2:])
                pads = []
                for d, kk in zip(reversed(dilation), reversed(k)):
                    total = d * (kk - 1)
                    pads += [total // 2, total - total // 2]
        else:
            pads = [p for p in reversed(_tuple(padding, nd)) for _ in range(2)]
        x = run_op("aten::pad", x, pads, mode, None)
        return run_op(kind, x, w, b, stride, [0] * nd, dilation, groups)
    if isinstance(padding, str):
        return run_op(kind, x, w, b, stride, padding, dilation, groups)
    return run_op(kind, x, w, b, stride, _tuple(padding, nd), dilation, groups)


@builtin("Conv1d")
def conv1d_forward(m: Module, x):
    return _conv_forward(m, x, 1)


@builtin("Conv2d")
def conv2d_forward(m: Module, x):
    return _conv_forward(m, x, 2)


@builtin("Conv3d")
def conv3d_forward(m: Module, x):
    return _conv_forward(m, x, 3)


def _conv_transpose_forward(m: Module, x, nd: int, output_size=None):
    w, b = m.get("weight"), m.get("bias", None)
    stride = _tuple(m.get("stride", 1), nd)
    padding = _tuple(m.get("padding", 0), nd)
    dilation = _tuple(m.get("dilation", 1), nd)
    output_padding = _tuple(m.get("output_padding", 0), nd)
    groups = int(m.get("groups", 1))
    if m.get("padding_mode", "zeros") != "zeros":
        raise ValueError(f'Only "zeros" padding mode is supported for {m.class_name}')
    if output_size is not None:
        output_size = list(output_size)[-nd:]
        sp = x.shape[-nd:]
        k = w.shape[2:]
        output_padding = [int(output_size[i]) - ((sp[i] - 1) * stride[i] - 2 * padding[i]
                                                 + dilation[i] * (k[i] - 1) + 1) for i in range(nd)]
    kind = "aten::conv_transpose1d" if nd == 1 else f"aten::conv_transpose{nd}d"
    return run_op(kind, x, w, b, stride, padding, output_padding, groups, dilation)


@builtin("ConvTranspose1d")
def conv_transpose1d_forward(m: Module, x, output_size=None):
    return _conv_transpose_forward(m, x, 1, output_size)


@builtin("ConvTranspose2d")
def conv_transpose2d_forward(m: Module, x, output_size=None):
    return _conv_transpose_forward(m, x, 2, output_size)


@builtin("ConvTranspose3d")
def conv_transpose3d_forward(m: Module, x, output_size=None):
    return _conv_transpose_forward(m, x, 3, output_size)


# ---- activations and shape modules

def _unary(kind: str, inplace_kind: Optional[str] = None):
    def fwd(m: Module, x):
        if inplace_kind is not None and m.get("inplace", False):
            return run_op(inplace_kind, x)
        return run_op(kind, x)
    return fwd


BUILTIN_FORWARDS.update({
    "ReLU": _unary("aten::relu", "aten::relu_"),
    "Tanh": _unary("aten::tanh"),
    "Sigmoid": _unary("aten::sigmoid"),
    "SiLU": _unary("aten::silu", "aten::silu_"),
    "Mish": _unary("aten::mish"),
    "Hardswish": _unary("aten::hardswish"),
    "Hardsigmoid": _unary("aten::hardsigmoid"),
    "Softplus": lambda m, x: run_op("aten::softplus", x, m.get("beta", 1.0), m.get("threshold", 20.0)),
})


@builtin("GELU")
def gelu_forward(m: Module, x):
    return run_op("aten::gelu", x, m.get("approximate", "none"))


@builtin("LeakyReLU")
def leaky_relu_forward(m: Module, x):
    kind = "aten::leaky_relu_" if m.get("inplace", False) else "aten::leaky_relu"
    return run_op(kind, x, m.get("negative_slope", 0.01))


@builtin("ELU")
def elu_forward(m: Module, x):
    kind = "aten::elu_" if m.get("inplace", False) else "aten::elu"
    return run_op(kind, x, m.get("alpha", 1.0), 1, 1)


@builtin("Hardtanh", "ReLU6")
def hardtanh_forward(m: Module, x):
    lo, hi = (0.0, 6.0) if m.class_name == "ReLU6" else (-1.0, 1.0)
    kind = "aten::hardtanh_" if m.get("inplace", False) else "aten::hardtanh"
    return run_op(kind, x, m.get("min_val", lo), m.get("max_val", hi))


def _softmax_dim(m: Module, x) -> int:
    dim = m.get("dim", None)
    if dim is None:  # torch.nn.functional._get_softmax_dim
        return 0 if x.dim() in (0, 1, 3) else 1
    return int(dim)


@builtin("Softmax")
def softmax_forward(m: Module, x):
    return run_op("aten::softmax", x, _softmax_dim(m, x), None)


@builtin("LogSoftmax")
def log_softmax_forward(m: Module, x):
    return run_op("aten::log_softmax", x, _softmax_dim(m, x), None)


@builtin("Identity")
def identity_forward(m: Module, x, *rest):
    return x


@builtin("Flatten")
def flatten_forward(m: Module, x):
    return run_op("aten::flatten", x, int(m.get("start_dim", 1)), int(m.get("end_dim", -1)))


def _children(m: Module) -> list:
    kids = [(k, v) for k, v in m.attributes.items() if isinstance(v, Module) and str(k).isdigit()]
    return [v for _, v in sorted(kids, key=lambda kv: int(kv[0]))]


@builtin("Sequential")
def sequential_forward(m: Module, x):
    for child in _children(m):
        x = call_module(child, x)
    return x


@builtin("ModuleList", "ModuleDict", "ParameterList", "ParameterDict")
def not_callable(m: Module, *args):
    raise TypeError(f"{m.class_name} is not callable: it has no forward() (index it and call the modules in it)")


# ---- normalization, embedding, dropout

@builtin("BatchNorm1d", "BatchNorm2d", "BatchNorm3d")
def batch_norm_forward(m: Module, x):
    want = {"BatchNorm1d": (2, 3), "BatchNorm2d": (4,), "BatchNorm3d": (5,)}[m.class_name]
    if x.dim() not in want:
        raise ValueError(f"expected {' or '.join(f'{d}D' for d in want)} input (got {x.dim()}D input)")
    training = _training(m)
    momentum = m.get("momentum", 0.1)
    track = m.get("track_running_stats", True)
    factor = 0.0 if momentum is None else momentum
    nbt = m.get("num_batches_tracked", None)
    if training and track and nbt is not None:
        run_op("aten::add_", nbt, 1)
        if momentum is None:
            factor = 1.0 / float(nbt.data)
    rm, rv = m.get("running_mean", None), m.get("running_var", None)
    bn_training = True if training else (rm is None and rv is None)
    use_stats = not training or track
    return run_op("aten::batch_norm", x, m.get("weight", None), m.get("bias", None),
                  rm if use_stats else None, rv if use_stats else None, bn_training, float(factor),
                  float(m.get("eps", 1e-5)), True)


@builtin("InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d")
def instance_norm_forward(m: Module, x):
    rm, rv = m.get("running_mean", None), m.get("running_var", None)
    use_input_stats = _training(m) or not m.get("track_running_stats", False) or rm is None
    return run_op("aten::instance_norm", x, m.get("weight", None), m.get("bias", None), rm, rv,
                  use_input_stats, float(m.get("momentum", 0.1) or 0.0), float(m.get("eps", 1e-5)), True)


@builtin("LayerNorm")
def layer_norm_forward(m: Module, x):
    w = m.get("weight", None)
    shape = m.get("normalized_shape", None)
    if shape is None:
        if w is None:
            raise KeyError(f"{m.path or m.class_name}.normalized_shape")
        shape = list(w.shape)
    return run_op("aten::layer_norm", x, _tuple(shape, 1), w, m.get("bias", None), float(m.get("eps", 1e-5)), True)


@builtin("GroupNorm")
def group_norm_forward(m: Module, x):
    return run_op("aten::group_norm", x, int(m.get("num_groups")), m.get("weight", None), m.get("bias", None),
                  float(m.get("eps", 1e-5)), True)


@builtin("Embedding")
def embedding_forward(m: Module, idx):
    if m.get("max_norm", None) is not None:
        raise NotImplementedError("Embedding with max_norm is not supported")
    w = m.get("weight")
    pad = m.get("padding_idx", None)
    pad = -1 if pad is None else (pad + w.shape[0] if pad < 0 else pad)
    return run_op("aten::embedding", w, idx, pad, bool(m.get("scale_grad_by_freq", False)),
                  bool(m.get("sparse", False)))


def _dropout_kind(base: str):
    def fwd(m: Module, x):
        p = float(m.get("p", 0.5))
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        kind = f"aten::{base}_" if m.get("inplace", False) else f"aten::{base}"
        return run_op(kind, x, p, _training(m))
    return fwd


BUILTIN_FORWARDS.update({
    "Dropout": _dropout_kind("dropout"),
    "Dropout1d": _dropout_kind("feature_dropout"),
    "Dropout2d": _dropout_kind("feature_dropout"),
    "Dropout3d": _dropout_kind("feature_dropout"),
    "AlphaDropout": _dropout_kind("alpha_dropout"),
})


# ---- pooling

def _max_pool(nd: int):
    def fwd(m: Module, x):
        k = _tuple(m.get("kernel_size"), nd)
        stride = m.get("stride", None)
        stride = k if stride is None else _tuple(stride, nd)
        args = [k, stride, _tuple(m.get("padding", 0), nd), _tuple(m.get("dilation", 1), nd),
                bool(m.get("ceil_mode", False))]
        if m.get("return_indices", False):
            return run_op(f"aten::max_pool{nd}d_with_indices", x, *args)
        return run_op(f"aten::max_pool{nd}d", x, *args)
    return fwd


def _avg_pool(nd: int):
    def fwd(m: Module, x):
        k = _tuple(m.get("kernel_size"), nd)
        stride = m.get("stride", None)
        stride = k if stride is None else _tuple(stride, nd)
        args = [k, stride, _tuple(m.get("padding", 0), nd), bool(m.get("ceil_mode", False)),
                bool(m.get("count_include_pad", True))]
        if nd > 1:
            args.append(m.get("divisor_override", None))
        return run_op(f"aten::avg_pool{nd}d", x, *args)
    return fwd


def _adaptive(kind: str, nd: int):
    def fwd(m: Module, x):
        size = _tuple(m.get("output_size"), nd)
        size = [x.shape[x.dim() - nd + i] if s is None else int(s) for i, s in enumerate(size)]
        out = run_op(kind, x, size)
        if isinstance(out, tuple) and not m.get("return_indices", False):
            return out[0]
        return out
    return fwd


BUILTIN_FORWARDS.update({
    "MaxPool1d": _max_pool(1), "MaxPool2d": _max_pool(2), "MaxPool3d": _max_pool(3),
    "AvgPool1d": _avg_pool(1), "AvgPool2d": _avg_pool(2), "AvgPool3d": _avg_pool(3),
    "AdaptiveAvgPool1d": _adaptive("aten::adaptive_avg_pool1d", 1),
    "AdaptiveAvgPool2d": _adaptive("aten::adaptive_avg_pool2d", 2),
    "AdaptiveAvgPool3d": _adaptive("aten::adaptive_avg_pool3d", 3),
    "AdaptiveMaxPool1d": _adaptive("aten::adaptive_max_pool1d", 1),
    "AdaptiveMaxPool2d": _adaptive("aten::adaptive_max_pool2d", 2),
})


@builtin("Upsample")
def upsample_forward(m: Module, x):
    mode = m.get("mode", "nearest")
    size, sf = m.get("size", None), m.get("scale_factor", None)
    nd = x.dim() - 2
    size = None if size is None else _tuple(size, nd)
    sf = None if sf is None else [float(s) for s in _tuple(sf, nd)]
    if mode in ("nearest", "nearest-exact"):
        prefix = "upsample_nearest" if mode == "nearest" else "_upsample_nearest_exact"
        return run_op(f"aten::{prefix}{nd}d", x, size, sf)
    kind = {1: "aten::upsample_linear1d", 2: "aten::upsample_bilinear2d", 3: "aten::upsample_trilinear3d"}[nd]
    return run_op(kind, x, size, bool(m.get("align_corners", False) or False), sf)


@builtin("PixelShuffle")
def pixel_shuffle_forward(m: Module, x):
    return run_op("aten::pixel_shuffle", x, int(m.get("upscale_factor")))


# ---- recurrent layers

def _rnn_layout(m: Module):
    """(num_layers, bidirectional, has_biases, hidden_size, flat params) from the weights present."""
    layers = 0
    while f"weight_ih_l{layers}" in m.attributes:
        layers += 1
    if not layers:
        raise KeyError(f"{m.path or m.class_name}.weight_ih_l0")
    if int(m.get("proj_size", 0) or 0):
        raise NotImplementedError("LSTM with proj_size > 0 is not supported")
    bidir = "weight_ih_l0_reverse" in m.attributes
    has_b = m.get("bias_ih_l0", None) is not None
    params = []
    for l in range(layers):
        for sfx in ([""] + (["_reverse"] if bidir else [])):
            names = ["weight_ih", "weight_hh"] + (["bias_ih", "bias_hh"] if has_b else [])
            params += [m.get(f"{n}_l{l}{sfx}") for n in names]
    hidden = m.get("weight_hh_l0").shape[1]
    return layers, bidir, has_b, hidden, params


def _zeros_state(x, m: Module, layers: int, dirs: int, hidden: int):
    batch_first = bool(m.get("batch_first", False))
    if x.dim() == 2:
        shape = (layers * dirs, hidden)
    else:
        shape = (layers * dirs, x.shape[0] if batch_first else x.shape[1], hidden)
    return Tensor(np.zeros(shape, dtype=x.dtype))


@builtin("LSTM")
def lstm_forward(m: Module, x, hx=None):
    layers, bidir, has_b, hidden, params = _rnn_layout(m)
    if hx is None:
        hx = (_zeros_state(x, m, layers, 2 if bidir else 1, hidden),) * 2
    out, h, c = run_op("aten::lstm", x, list(hx), params, has_b, layers, float(m.get("dropout", 0.0)),
                       _training(m), bidir, bool(m.get("batch_first", False)))
    return out, (h, c)


@builtin("GRU", "RNN")
def gru_forward(m: Module, x, hx=None):
    layers, bidir, has_b, hidden, params = _rnn_layout(m)
    if hx is None:
        hx = _zeros_state(x, m, layers, 2 if bidir else 1, hidden)
    kind = "aten::gru" if m.class_name == "GRU" else \
        ("aten::rnn_relu" if m.get("nonlinearity", "tanh") == "relu" else "aten::rnn_tanh")
    return run_op(kind, x, hx, params, has_b, layers, float(m.get("dropout", 0.0)), _training(m), bidir,
                  bool(m.get("batch_first", False)))


def _cell_state(m: Module, x):
    hidden = m.get("weight_hh").shape[1]
    shape = (hidden,) if x.dim() == 1 else (x.shape[0], hidden)
    return Tensor(np.zeros(shape, dtype=x.dtype))


@builtin("LSTMCell")
def lstm_cell_forward(m: Module, x, hx=None):
    if hx is None:
        hx = (_cell_state(m, x),) * 2
    return run_op("aten::lstm_cell", x, list(hx), m.get("weight_ih"), m.get("weight_hh"),
                  m.get("bias_ih", None), m.get("bias_hh", None))


@builtin("GRUCell", "RNNCell")
def gru_cell_forward(m: Module, x, hx=None):
    if hx is None:
        hx = _cell_state(m, x)
    kind = "aten::gru_cell" if m.class_name == "GRUCell" else \
        ("aten::rnn_relu_cell" if m.get("nonlinearity", "tanh") == "relu" else "aten::rnn_tanh_cell")
    return run_op(kind, x, hx, m.get("weight_ih"), m.get("weight_hh"), m.get("bias_ih", None),
                  m.get("bias_hh", None))
