"""ArgumentSpec: the key of the legacy executor's plan cache, as in PyTorch's argument_spec.h.

Per tensor input: defined, dtype, rank, device and (only when grad mode is on) requires_grad;
non-tensor inputs do not take part. The spec also gives the input types a plan is compiled for.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from irjit.ops.types import DTYPE_TO_SCALAR_TYPE, TensorType, Type

from irjit.ops.tensor import Tensor
from irjit.runtime.values import from_array

TensorSpec = tuple[bool, Optional[str], Optional[int], bool]  # defined, dtype, rank, requires_grad


def executor_inputs(graph, inputs: Sequence[Any]) -> list:
    """The inputs as an executor runs them: numpy arrays and scalars become the values the
    graph's input types say (a Tensor for a tensor input), as `load`ed functions take them;
    everything else is passed as it is."""
    for x in inputs:  # (Tensors only, the usual call: as they are)
        if x.__class__ is not Tensor:
            break
    else:
        return list(inputs)
    values = list(inputs)
    for i, x in enumerate(values):
        if isinstance(x, _ARRAYS) and i < len(graph.inputs):
            values[i] = from_array(np.asarray(x), graph.inputs[i].type)
    return values


_ARRAYS = (np.ndarray, np.generic)


def argument_spec(inputs: Sequence[Any], grad_enabled: bool) -> tuple:
    """The cache key of these inputs. A module attribute still held as the params file's
    array has the spec of the Tensor its first `prim::GetAttr` turns it into (one that does
    not require grad), so the second identical call hits the plan the first one compiled."""
    specs = []
    for x in inputs:
        if isinstance(x, Tensor):
            specs.append((True, str(x.dtype), x.dim(), grad_enabled and bool(x.requires_grad)))
        elif isinstance(x, np.ndarray):
            specs.append((True, str(x.dtype), x.ndim, False))
        elif x is None:
            specs.append((False, None, None, False))
        else:
            specs.append(None)
    return (grad_enabled, tuple(specs))


def specialized_type(declared: Type, spec: Optional[TensorSpec]) -> Type:
    """The input type a plan is compiled for: `Float(*, *, requires_grad=1, device=cpu)`."""
    if spec is None or not spec[0]:
        return declared
    _, dtype, rank, requires_grad = spec
    return TensorType(DTYPE_TO_SCALAR_TYPE.get(dtype), (None,) * rank, None, requires_grad, "cpu")


def needs_gradient(spec: tuple) -> bool:
    """Whether any input requires grad under grad mode (PyTorch's `needsGradient`)."""
    grad_enabled, specs = spec
    return grad_enabled and any(s is not None and s[3] for s in specs)


def module_attribute_paths(graph) -> list[tuple[int, tuple[str, ...]]]:
    """Tensor attributes read through `prim::GetAttr` chains from module inputs, as
    (input index, attribute names): PyTorch's ArgumentSpecCreator specializes these too."""
    from irjit.ops.types import ClassType, OptionalType
    roots = {v: (i, ()) for i, v in enumerate(graph.inputs) if isinstance(v.type, ClassType)}
    paths: list[tuple[int, tuple[str, ...]]] = []
    for n in graph.walk():
        if n.kind == "prim::GetAttr" and n.inputs[0] in roots:
            i, names = roots[n.inputs[0]]
            path = (i, names + (n.attr("name"),))
            out = n.outputs[0]
            t = out.type.elem if isinstance(out.type, OptionalType) else out.type
            if isinstance(t, ClassType):
                roots[out] = path
            elif isinstance(t, TensorType) and path not in paths:
                paths.append(path)
    return paths


def attribute_nodes(graph, path: tuple[int, tuple[str, ...]]) -> list:
    """The `prim::GetAttr` nodes of `graph` that read the attribute at `path`."""
    i, names = path
    frontier = {graph.inputs[i]}
    found = []
    for depth, name in enumerate(names):
        nxt = set()
        for n in graph.walk():
            if n.kind == "prim::GetAttr" and n.inputs[0] in frontier and n.attr("name") == name:
                if depth == len(names) - 1:
                    found.append(n)
                else:
                    nxt.add(n.outputs[0])
        frontier = nxt
    return found


def attribute_values(inputs: Sequence[Any], paths) -> list[Any]:
    """The current values of the attributes at `paths` (None where missing)."""
    values = []
    for i, names in paths:
        obj = inputs[i]
        for name in names:
            attrs = getattr(obj, "attributes", None)
            obj = attrs.get(name) if attrs is not None else None
        values.append(obj)
    return values
