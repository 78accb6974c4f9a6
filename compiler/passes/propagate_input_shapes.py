"""Shape and dtype propagation from the graph inputs' types, through nodes, `prim::If` (branch
types merged) and `prim::Loop` (iterated to a fixed point), mirroring PyTorch's
PropagateInputShapes (shape_analysis.cpp): tensor outputs get complete types
(`Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)`) computed by the explicit rules of
`shape_rules` or by running the op on zero-stride dummy arrays; what cannot be computed keeps
its type.

Option `symbolic=1` mirrors `_jit_pass_propagate_shapes_on_graph` instead: only sizes are
refined (from ranks and partial sizes, leaving dtype/device fields as they are).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from irjit.compiler.ir import Graph, Node
from irjit.compiler.ir.attributes import AnnotatedValue
from irjit.ops.types import DTYPE_TO_SCALAR_TYPE, TensorType, Type

from . import shape_rules as rules
from .peephole_helpers import LIST_MUTATORS, _MISSING, const_value
from .registry import register_pass

_UNKNOWN = _MISSING


def merge_types(a: Type, b: Type) -> Type:
    """What two types have in common (PyTorch's TensorType::merge for tensors)."""
    if a == b or not (isinstance(a, TensorType) and isinstance(b, TensorType)):
        return a

    def same(x, y):
        return x if x == y else None

    sizes = None
    if a.sizes is not None and b.sizes is not None and len(a.sizes) == len(b.sizes):
        sizes = tuple(same(x, y) for x, y in zip(a.sizes, b.sizes))
    strides = a.strides if a.strides == b.strides and sizes == a.sizes else None
    return TensorType(same(a.scalar_type, b.scalar_type), sizes, strides,
                      same(a.requires_grad, b.requires_grad), same(a.device, b.device))


def _complete_type(array: Any, requires_grad) -> TensorType:
    sizes = tuple(int(s) for s in array.shape)
    return TensorType(DTYPE_TO_SCALAR_TYPE.get(str(array.dtype)), sizes,
                      rules.contiguous_strides(sizes), requires_grad, "cpu")


class _Propagator:
    def __init__(self, graph: Graph, symbolic: bool):
        self.graph = graph
        self.symbolic = symbolic
        self.values: dict = {}
        self.changed = False

    def value(self, v) -> Any:
        if v in self.values:
            return self.values[v]
        x = const_value(v)
        # an empty container constant, `annotate(List[int], [])`: its plain value
        return x.value if isinstance(x, AnnotatedValue) else x

    def set_type(self, v, t: Type) -> None:
        if t != v.type:
            v.type = t
            self.changed = True

    def block(self, block) -> None:
        for n in block.nodes():
            if n.kind == "prim::If":
                self.if_node(n)
            elif n.kind == "prim::Loop":
                self.loop_node(n)
            else:
                self.node(n)

    def if_node(self, n: Node) -> None:
        for b in n.blocks:
            self.block(b)
        for i, out in enumerate(n.outputs if len(n.blocks) == 2 else ()):
            a, b = n.blocks[0].outputs[i].type, n.blocks[1].outputs[i].type
            if isinstance(out.type, TensorType) and isinstance(a, TensorType) and isinstance(b, TensorType):
                m = merge_types(a, b)
                self.set_type(out, out.type.with_(sizes=m.sizes) if self.symbolic else m)

    def loop_node(self, n: Node) -> None:
        body = n.blocks[0]
        saved = {o: o.type for m in body.walk() for o in m.outputs}
        carried = [v.type for v in n.inputs[2:]]
        for _ in range(8):
            for o, t in saved.items():
                o.type = t
            for p, t in zip(body.inputs[1:], carried):
                p.type = t
            self.block(body)
            new = [merge_types(t, o.type) for t, o in zip(carried, body.outputs[1:])]
            if new == carried:
                break
            carried = new
        for out, t in zip(n.outputs, carried):
            if isinstance(out.type, TensorType):
                self.set_type(out, t)

    # ---- ordinary nodes
    def node(self, n: Node) -> None:
        k = n.kind
        vals = [self.value(v) for v in n.inputs]
        if k in ("prim::ListConstruct", "prim::TupleConstruct"):
            if all(x is not _UNKNOWN for x in vals) and not any(isinstance(v.type, TensorType) for v in n.inputs):
                self.values[n.output] = list(vals) if k == "prim::ListConstruct" else tuple(vals)
            return
        if k in ("prim::ListUnpack", "prim::TupleUnpack") and isinstance(vals[0], (list, tuple)) \
                and len(vals[0]) == len(n.outputs):
            self.values.update(zip(n.outputs, vals[0]))
            return
        if k in ("prim::Constant", "prim::Param") or not n.outputs or k in LIST_MUTATORS:
            return
        if not (k.startswith("aten::") or k in rules.METADATA_OPS):
            return
        tensor_out = [o for o in n.outputs if isinstance(o.type, TensorType)]
        if tensor_out:
            self.tensor_node(n, vals, tensor_out)
        else:
            self.value_node(n, vals)

    def value_node(self, n: Node, vals: list) -> None:
        has_tensor = any(isinstance(v.type, TensorType) for v in n.inputs)
        if has_tensor and n.kind not in rules.METADATA_OPS:
            return
        if any(x is _UNKNOWN for x in vals) or n.kind in rules.DATA_DEPENDENT:
            return
        res = self.evaluate(n, vals)
        if res is _UNKNOWN:
            return
        outs = res if len(n.outputs) > 1 else [res]
        for o, r in zip(n.outputs, outs):
            if isinstance(r, (bool, int, float, str, list, tuple)) or r is None:
                self.values[o] = r

    def evaluate(self, n: Node, vals: list) -> Any:
        try:
            from irjit.runtime.autograd import no_grad, run_op
            from irjit.ops.tensor import Tensor
        except Exception:  # noqa: BLE001 - without a runtime nothing is evaluated
            return _UNKNOWN
        args = []
        for v, x in zip(n.inputs, vals):
            if isinstance(v.type, TensorType):
                d = rules.dummy(v.type)
                if d is None:
                    return _UNKNOWN
                args.append(Tensor(d))
            elif x is _UNKNOWN:
                return _UNKNOWN
            else:
                args.append(list(x) if isinstance(x, tuple) else x)
        try:
            with no_grad():
                out = run_op(n.kind, *args)
        except Exception:  # noqa: BLE001 - an op that cannot run on dummies stays unknown
            return _UNKNOWN
        return _from_runtime(out)

    def tensor_node(self, n: Node, vals: list, outs: list) -> None:
        ttypes = [v.type if isinstance(v.type, TensorType) else None for v in n.inputs]
        shapes = [t.sizes if t is not None else None for t in ttypes]
        plain = [None if x is _UNKNOWN else x for x in vals]
        tensor_args = [i for i, t in enumerate(ttypes) if t is not None]
        if self.symbolic:
            if len(outs) == 1:
                sizes = rules.symbolic_sizes(n.kind, shapes, plain, tensor_args)
                if sizes is not None:
                    self.set_type(outs[0], outs[0].type.with_(sizes=tuple(sizes)))
            return
        grads = [ttypes[i].requires_grad for i in tensor_args]
        rg = None if any(g is None for g in grads) else any(grads)
        if n.kind.endswith("_") and not n.kind.endswith("__") and tensor_args and tensor_args[0] == 0:
            self.set_type(outs[0], ttypes[0])  # in place: the result is `self`
            return
        if n.kind in rules.DATA_DEPENDENT:
            return
        complete = all(ttypes[i].complete_sizes() is not None and rules.np_dtype(ttypes[i]) is not None
                       for i in tensor_args)
        if complete and len(outs) == 1:
            sizes = rules.explicit_sizes(n.kind, shapes, plain)
            if sizes is not NotImplemented:
                if sizes is not None and all(s is not None for s in sizes):
                    dts = [rules.np_dtype(ttypes[i]) for i in tensor_args]
                    dt = np.result_type(*dts)
                    self.set_type(outs[0], _complete_type(
                        np.broadcast_to(np.zeros((), dt), sizes), _rg(rg, dt)))
                return
        if not complete:
            self.partial(n, ttypes, shapes, plain, tensor_args, outs, rg)
            return
        if any(vals[i] is _UNKNOWN for i, t in enumerate(ttypes) if t is None):
            return
        res = self.evaluate(n, vals)
        if res is _UNKNOWN:
            self.rule_fallback(n, ttypes, shapes, plain, tensor_args, outs, rg)
            return
        results = res if len(n.outputs) > 1 else [res]
        for o, r in zip(n.outputs, results):
            if isinstance(o.type, TensorType) and isinstance(r, np.ndarray):
                self.set_type(o, _complete_type(r, _rg(rg, r.dtype)))
            elif not isinstance(o.type, TensorType) and isinstance(r, (int, float, bool, list)):
                self.values[o] = r


    def partial(self, n, ttypes, shapes, plain, tensor_args, outs, rg) -> None:
        """Pointwise ops on partially known inputs: what the rules still give."""
        if len(outs) != 1 or n.kind not in rules.UNARY_POINTWISE | rules.BINARY_POINTWISE:
            return
        sizes = rules.symbolic_sizes(n.kind, shapes, plain, tensor_args)
        dts = [rules.np_dtype(ttypes[i]) for i in tensor_args]
        st = None
        if all(d is not None for d in dts):
            dt = np.result_type(*dts)
            if n.kind in _COMPARISONS:
                dt = np.dtype(np.bool_)
            elif n.kind in _FLOAT_OPS and dt.kind not in "fc":
                dt = np.dtype(np.float32)
            st = DTYPE_TO_SCALAR_TYPE.get(str(dt))
            rg = _rg(rg, dt)
        devices = {ttypes[i].device for i in tensor_args}
        device = devices.pop() if len(devices) == 1 else None
        if sizes is None and st is None and device is None:
            return
        strides = rules.contiguous_strides(sizes) if sizes is not None and all(
            s is not None for s in sizes) else None
        self.set_type(outs[0], TensorType(st, None if sizes is None else tuple(sizes), strides,
                                          rg, device))

    def rule_fallback(self, n, ttypes, shapes, plain, tensor_args, outs, rg) -> None:
        """Pointwise ops by rule when they cannot be evaluated (no registered implementation)."""
        if len(outs) != 1 or n.kind not in rules.UNARY_POINTWISE | rules.BINARY_POINTWISE:
            return
        sizes = rules.symbolic_sizes(n.kind, shapes, plain, tensor_args)
        if sizes is None or any(s is None for s in sizes):
            return
        dt = np.result_type(*[rules.np_dtype(ttypes[i]) for i in tensor_args])
        if n.kind in _COMPARISONS:
            dt = np.dtype(np.bool_)
        elif n.kind in _FLOAT_OPS and dt.kind not in "fc":
            dt = np.dtype(np.float32)
        self.set_type(outs[0], _complete_type(np.broadcast_to(np.zeros((), dt), sizes), _rg(rg, dt)))


_COMPARISONS = {"aten::gt", "aten::lt", "aten::ge", "aten::le", "aten::eq", "aten::ne",
                "aten::logical_and", "aten::logical_or"}
_FLOAT_OPS = {"aten::sigmoid", "aten::tanh", "aten::exp", "aten::log", "aten::sqrt", "aten::rsqrt",
              "aten::reciprocal", "aten::sin", "aten::cos", "aten::div", "aten::softmax",
              "aten::log_softmax", "aten::erf", "aten::log1p", "aten::expm1", "aten::gelu"}


def _rg(requires_grad, dtype):
    if requires_grad is None:
        return None
    return bool(requires_grad) and np.dtype(dtype).kind in "fc"


def _from_runtime(out: Any) -> Any:
    from irjit.ops.tensor import Tensor
    if isinstance(out, Tensor):
        return out.data
    if isinstance(out, tuple):
        return tuple(_from_runtime(o) for o in out)
    if isinstance(out, list):
        return [_from_runtime(o) for o in out]
    return out


@register_pass("propagate_input_shapes")
def run(graph: Graph, symbolic: bool = False) -> bool:
    """PyTorch's PropagateInputShapes (or, with symbolic=1, propagate_shapes_on_graph)."""
    p = _Propagator(graph, bool(int(symbolic)))
    p.block(graph.block)
    return p.changed
