"""Dtype propagation, mirroring PyTorch's DtypePropagation (dtype_analysis.cpp): an aten op
whose tensor inputs all have a known dtype and rank, and whose other inputs are constants, is
run on small dummy tensors (as PyTorch runs it on meta tensors, all sizes 1) to learn the
dtype of its tensor outputs; nothing else about the types changes."""

from __future__ import annotations

import numpy as np

from irjit.compiler.ir import Graph, Node
from irjit.ops.types import DTYPE_TO_SCALAR_TYPE, TensorType

from .peephole_helpers import _MISSING, const_value, has_side_effects
from .propagate_device import matching_schema
from .registry import register_pass
from .shape_rules import DATA_DEPENDENT, np_dtype


def _infer(node: Node):
    try:
        from irjit.runtime.autograd import no_grad, run_op
        from irjit.ops.tensor import Tensor
    except Exception:  # noqa: BLE001 - without a runtime nothing is inferred
        return None
    args = []
    for v in node.inputs:
        t = v.type
        if isinstance(t, TensorType):
            dt = np_dtype(t)
            if dt is None or t.sizes is None:
                return None
            args.append(Tensor(np.zeros((1,) * len(t.sizes), dt)))
        else:
            value = const_value(v)
            if value is _MISSING:
                return None
            args.append(value)
    try:
        with no_grad():
            out = run_op(node.kind, *args)
    except Exception:  # noqa: BLE001 - like a meta tensor that errors out
        return None
    outs = out if isinstance(out, tuple) else (out,)
    return [getattr(o, "data", None) for o in outs]


def _block(block) -> bool:
    changed = False
    for node in block.nodes():
        for b in node.blocks:
            changed |= _block(b)
        if not node.kind.startswith("aten::") or node.kind in DATA_DEPENDENT or has_side_effects(node):
            continue
        if not any(isinstance(o.type, TensorType) for o in node.outputs) or matching_schema(node) is None:
            continue
        results = _infer(node)
        if results is None:
            continue
        for o, r in zip(node.outputs, results):
            if isinstance(o.type, TensorType) and isinstance(r, np.ndarray):
                st = DTYPE_TO_SCALAR_TYPE.get(str(r.dtype))
                if st is not None and o.type.scalar_type != st:
                    o.type = o.type.with_(scalar_type=st)
                    changed = True
    return changed


@register_pass("propagate_dtype")
def run(graph: Graph) -> bool:
    """PyTorch's DtypePropagation: dtypes of op outputs from known input dtypes and ranks."""
    return _block(graph.block)
