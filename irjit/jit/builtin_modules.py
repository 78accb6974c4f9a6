"""The forward graphs of built-in torch.nn modules as PyTorch's inlined graphs show them (the
optimized graph of torch.nn's TorchScript forward, with the module's constants folded):
`aten::linear` of the module's weight and bias, `aten::conv2d` with its hyper-parameters as
constants, one op for an activation, dropout reading `training`, a Sequential's calls in order.
A scripted model's inlined graph is then plain ops the executor can differentiate and compile. A
module this does not know (the recurrent cells, non-default configurations) stays a
`prim::CallMethod` that the runtime's built-in forwards run."""

from __future__ import annotations

from typing import Any, Callable, Optional

from irjit.compiler.ir import TENSOR, Graph, OptionalType, TupleType
from irjit.compiler.parser import parse_ir
from irjit.compiler.passes import get_pass
from irjit.runtime.module import Module as RuntimeModule

from .signature import Parameter, Signature

_ACTIVATIONS = {"ReLU": "relu", "Tanh": "tanh", "Sigmoid": "sigmoid"}


def _ints(value: Any, n: int) -> Optional[list[int]]:
    values = list(value) if isinstance(value, (list, tuple)) else [value] * n
    if len(values) != n or not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return None
    return values


def _int_list(name: str, values: list[int], lines: list[str]) -> str:
    items = []
    for i, v in enumerate(values):
        lines.append(f"  %{name}_{i} : int = prim::Constant[value={v}]()")
        items.append(f"%{name}_{i}")
    lines.append(f"  %{name} : int[] = prim::ListConstruct({', '.join(items)})")
    return f"%{name}"


def _get(name: str, type_: str = "Tensor") -> str:
    return f'  %{name} : {type_} = prim::GetAttr[name="{name}"](%self)'


def _bias_type(module: RuntimeModule) -> str:
    return "NoneType" if module.get("bias", None) is None else "Tensor"


def builtin_children(module: RuntimeModule) -> list[RuntimeModule]:
    """The modules a built-in container's forward calls, in order (a Sequential's)."""
    if module.class_name != "Sequential":
        return []
    return [v for v in module.attributes.values() if isinstance(v, RuntimeModule)]


def _sequential(m: RuntimeModule) -> Optional[list[str]]:
    """TorchScript unrolls the loop over the modules: their GetAttrs, then the calls."""
    names = [k for k, v in m.attributes.items() if isinstance(v, RuntimeModule)]
    lines = [f'  %_{k} : {m.get(k).qualified_name} = prim::GetAttr[name="{k}"](%self)'
             for k in names]
    value = "%input"
    for i, k in enumerate(names):
        lines.append(f'  %out{i} : Tensor = prim::CallMethod[name="forward"](%_{k}, {value})')
        value = f"%out{i}"
    return lines + [f"  return ({value})"]


def _activation(m: RuntimeModule) -> Optional[list[str]]:
    if m.get("inplace", False) is not False:
        return None
    return [f"  %out : Tensor = aten::{_ACTIVATIONS[m.class_name]}(%input)", "  return (%out)"]


def _linear(m: RuntimeModule) -> Optional[list[str]]:
    return [_get("weight"), _get("bias", _bias_type(m)),
            "  %out : Tensor = aten::linear(%input, %weight, %bias)", "  return (%out)"]


def _conv(m: RuntimeModule) -> Optional[list[str]]:
    if m.get("padding_mode", "zeros") != "zeros":
        return None
    nd = 1 if m.class_name == "Conv1d" else 2
    stride = _ints(m.get("stride", 1), nd)
    padding = _ints(m.get("padding", 0), nd)
    dilation = _ints(m.get("dilation", 1), nd)
    groups = m.get("groups", 1)
    if stride is None or padding is None or dilation is None or not isinstance(groups, int):
        return None
    lines = [f"  %groups : int = prim::Constant[value={groups}]()", _get("weight"),
             _get("bias", "Tensor?")]
    args = [_int_list(n, v, lines) for n, v in
            (("stride", stride), ("padding", padding), ("dilation", dilation))]
    return lines + [f"  %out : Tensor = aten::conv{nd}d(%input, %weight, %bias, "
                    f"{', '.join(args)}, %groups)", "  return (%out)"]


def _max_pool2d(m: RuntimeModule) -> Optional[list[str]]:
    if m.get("return_indices", False):
        return None
    lists = [_ints(m.get(k, d), 2) for k, d in
             (("kernel_size", None), ("stride", None), ("padding", 0), ("dilation", 1))]
    if any(v is None for v in lists):
        return None
    lines = [f"  %ceil : bool = prim::Constant[value={int(bool(m.get('ceil_mode', False)))}]()"]
    args = [_int_list(n, v, lines) for n, v in zip(("kernel", "stride", "padding", "dilation"), lists)]
    return lines + [f"  %out : Tensor = aten::max_pool2d(%input, {', '.join(args)}, %ceil)",
                    "  return (%out)"]


def _dropout(m: RuntimeModule) -> Optional[list[str]]:
    if m.get("inplace", False):
        return None
    return [f"  %p : float = prim::Constant[value={float(m.get('p', 0.5))!r}]()",
            _get("training", "bool"), "  %out : Tensor = aten::dropout(%input, %p, %training)",
            "  return (%out)"]


def _layer_norm(m: RuntimeModule) -> Optional[list[str]]:
    shape = m.get("normalized_shape", None)
    shape = [shape] if isinstance(shape, int) else list(shape or [])
    if not shape or m.get("weight", None) is None or m.get("bias", None) is None:
        return None
    lines = ['  %fn : Function = prim::Constant[name="layer_norm"]()',  # left by the inliner
             f"  %eps : float = prim::Constant[value={float(m.get('eps', 1e-5))!r}]()",
             "  %cudnn : bool = prim::Constant[value=1]()", _get("weight"), _get("bias")]
    arg = _int_list("shape", shape, lines)
    return lines + [f"  %out : Tensor = aten::layer_norm(%input, {arg}, %weight, %bias, %eps, "
                    "%cudnn)", "  return (%out)"]


def _embedding(m: RuntimeModule) -> Optional[list[str]]:
    if m.get("padding_idx", None) is not None or m.get("max_norm", None) is not None:
        return None
    flags = [int(bool(m.get(k, False))) for k in ("scale_grad_by_freq", "sparse")]
    return ["  %pad : int = prim::Constant[value=-1]()",
            f"  %scale : bool = prim::Constant[value={flags[0]}]()",
            f"  %sparse : bool = prim::Constant[value={flags[1]}]()", _get("weight"),
            "  %out : Tensor = aten::embedding(%weight, %input, %pad, %scale, %sparse)",
            "  return (%out)"]


def _batch_norm(m: RuntimeModule) -> Optional[list[str]]:
    """torch.nn.BatchNorm2d's compiled forward with momentum, affine weights and running
    statistics (its defaults): the input check, the `num_batches_tracked` update and the batch
    size check while training, then `aten::batch_norm` reading `training`."""
    if m.get("momentum", 0.1) is None or not m.get("track_running_stats", True) or \
            m.get("weight", None) is None or m.get("bias", None) is None:
        return None
    return [
        "  %true : bool = prim::Constant[value=1]()",
        "  %two : int = prim::Constant[value=2]()",
        "  %zero : int = prim::Constant[value=0]()",
        '  %size_msg : str = prim::Constant[value="Expected more than 1 value per channel when '
        'training, got input size {}"]()',
        '  %error : str = prim::Constant[value="builtins.ValueError"]()',
        '  %dim_msg : str = prim::Constant[value="expected 4D input (got {}D input)"]()',
        "  %four : int = prim::Constant[value=4]()",
        "  %one : int = prim::Constant[value=1]()",
        f"  %momentum : float = prim::Constant[value={float(m.get('momentum', 0.1))!r}]()",
        f"  %eps : float = prim::Constant[value={float(m.get('eps', 1e-5))!r}]()",
        "  %dim : int = aten::dim(%input)",
        "  %bad_dim : bool = aten::ne(%dim, %four)",
        "   = prim::If(%bad_dim)",
        "    block0():",
        "      %dim2 : int = aten::dim(%input)",
        "      %message : str = aten::format(%dim_msg, %dim2)",
        "       = prim::RaiseException(%message, %error)",
        "      -> ()",
        "    block1():",
        "      -> ()",
        _get("training", "bool").replace("%training", "%training.1"),
        "   = prim::If(%training.1)",
        "    block0():",
        '      %num_batches_tracked : Tensor = prim::GetAttr[name="num_batches_tracked"](%self)',
        "      %counted : Tensor = aten::add_(%num_batches_tracked, %one, %one)",
        "      -> ()",
        "    block1():",
        "      -> ()",
        _get("training", "bool"), _get("running_mean"), _get("running_var"), _get("weight"),
        _get("bias"),
        "   = prim::If(%training)",
        "    block0():",
        "      %sizes : int[] = aten::size(%input)",
        "      %first : int = aten::__getitem__(%sizes, %zero)",
        "      %rank : int = aten::len(%sizes)",
        "      %trips : int = aten::sub(%rank, %two)",
        "      %prods : int = prim::Loop(%trips, %true, %first)",
        "        block0(%i : int, %acc : int):",
        "          %k : int = aten::add(%i, %two)",
        "          %size : int = aten::__getitem__(%sizes, %k)",
        "          %acc2 : int = aten::mul(%acc, %size)",
        "          -> (%true, %acc2)",
        "      %single : bool = aten::eq(%prods, %one)",
        "       = prim::If(%single)",
        "        block0():",
        "          %message2 : str = aten::format(%size_msg, %sizes)",
        "           = prim::RaiseException(%message2, %error)",
        "          -> ()",
        "        block1():",
        "          -> ()",
        "      -> ()",
        "    block1():",
        "      -> ()",
        "  %out : Tensor = aten::batch_norm(%input, %weight, %bias, %running_mean, %running_var, "
        "%training, %momentum, %eps, %true)",
        "  return (%out)"]


_FORWARDS: dict[str, Callable[[RuntimeModule], Optional[list[str]]]] = {
    "Sequential": _sequential, "Linear": _linear, "Conv1d": _conv, "Conv2d": _conv,
    "MaxPool2d": _max_pool2d, "Dropout": _dropout, "LayerNorm": _layer_norm,
    "Embedding": _embedding, "BatchNorm2d": _batch_norm,
    **{name: _activation for name in _ACTIVATIONS}}


def builtin_forward(module: RuntimeModule) -> Optional[Graph]:
    """The inlined forward graph of a built-in torch.nn module, or None when not known here."""
    make = _FORWARDS.get(module.class_name)
    lines = make(module) if make is not None else None
    if lines is None:
        return None
    graph = parse_ir(f"graph(%self : {module.qualified_name},\n      %input : Tensor):\n" +
                     "\n".join(lines) + "\n")
    get_pass("constant_pooling").run(graph)
    return graph


_HIDDEN = {"LSTMCell": TupleType((TENSOR, TENSOR)), "GRUCell": TENSOR, "RNNCell": TENSOR}


def builtin_signature(module: RuntimeModule) -> Signature:
    """The `forward` signature torch.nn declares for a built-in module: `(input) -> Tensor`,
    or for a recurrent cell `(input, hx=None)` returning the new state."""
    hidden = _HIDDEN.get(module.class_name)
    params = [Parameter("input", TENSOR)]
    if hidden is None:
        return Signature("forward", params, TENSOR)
    params.append(Parameter("hx", OptionalType(hidden), None))
    return Signature("forward", params, hidden)
