"""Device propagation, mirroring PyTorch's DeviceTypePropagation (device_type_analysis.cpp):
an aten op whose IR types match one of its schemas gets, on its tensor outputs, the device of
its `Device` argument if it has one, else the common device of its tensor inputs (CPU
zero-dim tensors give way to any other device)."""

from __future__ import annotations

from typing import Optional

from irjit.compiler.ir import Graph, Node
from irjit.ops.types import TensorType

from .peephole_helpers import _MISSING, const_value, has_side_effects, type_fits
from .registry import register_pass


def matching_schema(node: Node):
    """The registry schema the node's input types fit (PyTorch's `maybeSchema`), or None."""
    try:
        from irjit.ops.registry import NO_DEFAULT, overloads
    except Exception:  # noqa: BLE001 - no runtime, no schemas
        return None
    for entry in overloads(node.kind):
        s = entry.schema
        if s.variadic or len(node.inputs) > len(s.arguments):
            continue
        if any(a.default is NO_DEFAULT for a in s.arguments[len(node.inputs):]):
            continue
        if all(type_fits(v.type, a.type.replace("SymInt", "int")) for v, a in zip(node.inputs, s.arguments)):
            return s
    return None


def _zerodim_cpu(t: TensorType) -> bool:
    return t.sizes == () and t.device == "cpu"


def _set_device(node: Node, device: Optional[str]) -> bool:
    changed = False
    for o in node.outputs:
        if isinstance(o.type, TensorType) and o.type.device != device:
            o.type = o.type.with_(device=device)
            changed = True
    return changed


def _no_device_arg(node: Node) -> bool:
    tensors = [v.type for v in node.inputs if isinstance(v.type, TensorType)]
    if not tensors:
        return _set_device(node, None)
    device, only_zerodim = tensors[0].device, _zerodim_cpu(tensors[0])
    for t in tensors[1:]:
        if _zerodim_cpu(t):
            continue
        if t.device is None:
            return _set_device(node, None)
        if only_zerodim:
            device, only_zerodim = t.device, False
        elif t.device != device:
            return _set_device(node, None)
    return _set_device(node, device)


def _node(node: Node) -> bool:
    if node.kind == "prim::If":
        changed = any([_block(b) for b in node.blocks])
        for i, o in enumerate(node.outputs if len(node.blocks) == 2 else ()):
            a, b = (blk.outputs[i].type for blk in node.blocks)
            if isinstance(o.type, TensorType) and isinstance(a, TensorType) and isinstance(b, TensorType) \
                    and a.device is not None and a.device == b.device and o.type.device != a.device:
                o.type = o.type.with_(device=a.device)
                changed = True
        return changed
    if not node.kind.startswith("aten::") or has_side_effects(node) or \
            not any(isinstance(o.type, TensorType) for o in node.outputs):
        return False
    schema = matching_schema(node)
    if schema is None:
        return False
    for v, a in zip(node.inputs, schema.arguments):
        if a.type.rstrip("?") == "Device":
            value = const_value(v)
            if value is _MISSING:
                return False
            if value is None:
                continue
            return _set_device(node, str(value))
    return _no_device_arg(node)


def _block(block) -> bool:
    return any([_node(n) for n in block.nodes()])


@register_pass("propagate_device")
def run(graph: Graph) -> bool:
    """PyTorch's DeviceTypePropagation: set devices of tensor outputs from inputs and args."""
    return _block(graph.block)
