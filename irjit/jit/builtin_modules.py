"""The forward graphs of built-in torch.nn modules, as PyTorch's inlined graphs show them
(`aten::linear` of the module's weight and bias, `aten::conv2d` with its hyper-parameters as
constants, one op for an activation), so a scripted model's inlined graph is plain ops the
executor can differentiate and compile. A module this does not know stays a
`prim::CallMethod` that the runtime's built-in forwards run."""

from __future__ import annotations

from typing import Any, Optional

from irjit.compiler.ir import Graph
from irjit.compiler.parser import parse_ir
from irjit.compiler.passes import get_pass
from irjit.runtime.module import Module as RuntimeModule

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


def _bias_type(module: RuntimeModule) -> str:
    return "NoneType" if module.get("bias", None) is None else "Tensor"


def _text(module: RuntimeModule) -> Optional[str]:
    q, cls = module.qualified_name, module.class_name
    head = f"graph(%self : {q},\n      %input : Tensor):\n"
    if cls in _ACTIVATIONS and module.get("inplace", False) is False:
        return head + f"  %out : Tensor = aten::{_ACTIVATIONS[cls]}(%input)\n  return (%out)\n"
    if cls == "Linear":
        return head + ('  %weight : Tensor = prim::GetAttr[name="weight"](%self)\n'
                       f'  %bias : {_bias_type(module)} = prim::GetAttr[name="bias"](%self)\n'
                       "  %out : Tensor = aten::linear(%input, %weight, %bias)\n"
                       "  return (%out)\n")
    if cls in ("Conv1d", "Conv2d") and module.get("padding_mode", "zeros") == "zeros":
        nd = 1 if cls == "Conv1d" else 2
        stride = _ints(module.get("stride", 1), nd)
        padding = _ints(module.get("padding", 0), nd)
        dilation = _ints(module.get("dilation", 1), nd)
        groups = module.get("groups", 1)
        if stride is None or padding is None or dilation is None or not isinstance(groups, int):
            return None
        lines = [f"  %groups : int = prim::Constant[value={groups}]()",
                 '  %weight : Tensor = prim::GetAttr[name="weight"](%self)',
                 '  %bias : Tensor? = prim::GetAttr[name="bias"](%self)']
        args = [_int_list(n, v, lines) for n, v in
                (("stride", stride), ("padding", padding), ("dilation", dilation))]
        lines.append(f"  %out : Tensor = aten::conv{nd}d(%input, %weight, %bias, "
                     f"{', '.join(args)}, %groups)")
        return head + "\n".join(lines) + "\n  return (%out)\n"
    return None


def builtin_forward(module: RuntimeModule) -> Optional[Graph]:
    """The inlined forward graph of a built-in torch.nn module, or None when not known here."""
    text = _text(module)
    if text is None:
        return None
    graph = parse_ir(text)
    get_pass("constant_pooling").run(graph)
    return graph
