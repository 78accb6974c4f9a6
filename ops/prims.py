"""Pure evaluation of the `prim::` nodes whose result is a function of their inputs and
attributes alone: tuples, lists and dicts, tensor metadata queries, number/tensor conversions.
Constant propagation folds with these and the interpreter runs them; prims that need the
interpreter (calls, control flow, attributes, guards, profiling, the tape) live in `runtime.prims`.

An evaluator is `fn(node, args) -> outputs` (one value, or a sequence for several outputs);
`node` is the IR node, read for its kind, attributes and outputs. Tensor arguments may be numpy
arrays (folding) or run-time Tensors (interpreter): evaluators read them through `_array`.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .dtypes import CODE_OF_DTYPE
from .evaluate import evaluate
from .tensor import Tensor
from .types import Device, ListType, NamedType, TensorType

PURE_PRIMS: dict[str, Callable] = {}


def pure_prim(*kinds: str):
    """Decorator: register the function as the pure evaluator of each prim kind."""
    def wrap(fn):
        for k in kinds:
            assert k not in PURE_PRIMS, f"{k} has two pure evaluators"
            PURE_PRIMS[k] = fn
        return fn
    return wrap


def _array(x: Any) -> np.ndarray:
    return x.data if isinstance(x, Tensor) else np.asarray(x)


def _results(node, outs):
    return outs[0] if len(node.outputs) == 1 else list(outs)


@pure_prim("prim::TupleConstruct")
def _tuple_construct(node, args):
    return tuple(args)


@pure_prim("prim::TupleUnpack", "prim::ListUnpack")
def _unpack(node, args):
    seq = args[0]
    if len(seq) != len(node.outputs):
        raise ValueError(f"expected {len(node.outputs)} elements to unpack, got {len(seq)}")
    return _results(node, seq)


@pure_prim("prim::TupleIndex")
def _tuple_index(node, args):
    return args[0][args[1]]


@pure_prim("prim::TupleSlice")
def _tuple_slice(node, args):
    return tuple(args[0][node.attr("beg"):node.attr("end")])


@pure_prim("prim::ListConstruct")
def _list_construct(node, args):
    return list(args)


@pure_prim("prim::DictConstruct")
def _dict_construct(node, args):
    return {_key(args[i]): args[i + 1] for i in range(0, len(args), 2)}


def _key(k):
    return k.data.item() if isinstance(k, Tensor) else k.item() if isinstance(k, np.ndarray) else k


@pure_prim("prim::unchecked_cast", "prim::annotate", "prim::unchecked_unwrap_optional")
def _identity(node, args):
    return args[0] if args else None


@pure_prim("prim::NumToTensor", "aten::scalar_tensor_from_number")
def _num_to_tensor(node, args):
    x = args[0]
    if isinstance(x, bool):
        return np.array(x, dtype=np.bool_)
    if isinstance(x, int):
        return np.array(x, dtype=np.int64)
    return np.array(x, dtype=np.float64)


@pure_prim("prim::ImplicitTensorToNum")
def _tensor_to_num(node, args):
    t = node.outputs[0].type
    v = _array(args[0]).item()
    if t == NamedType("int"):
        return int(v)
    if t == NamedType("float"):
        return float(v)
    if t == NamedType("bool"):
        return bool(v)
    return v


@pure_prim("prim::device")
def _device(node, args):
    return Device("cpu")


@pure_prim("prim::dtype")
def _dtype(node, args):
    return CODE_OF_DTYPE[np.dtype(args[0].dtype)]


@pure_prim("prim::type")
def _device_type(node, args):
    return "cpu"


@pure_prim("prim::layout")
def _layout(node, args):
    return 0


@pure_prim("prim::is_cuda", "prim::is_mkldnn", "prim::is_sparse", "prim::is_quantized",
           "prim::is_meta", "prim::is_xpu", "prim::is_mps", "prim::is_nested", "prim::is_vulkan",
           "prim::is_ipu")
def _false(node, args):
    return False


@pure_prim("prim::requires_grad")
def _requires_grad(node, args):
    return bool(getattr(args[0], "requires_grad", False))


@pure_prim("prim::data")
def _data(node, args):
    x = args[0]
    return x.detach() if isinstance(x, Tensor) else x


@pure_prim("prim::shape")
def _shape(node, args):
    return list(args[0].shape)


@pure_prim("prim::min", "prim::max")
def _min_max(node, args):
    """The registry's overloads (ops/scalar.py), so the result has the schema's type:
    `max(0, 0.0)` is the float 0.0 (prim::max.int_float), as in TorchScript."""
    return evaluate(node.kind, *args)


@pure_prim("prim::abs")
def _abs(node, args):
    return abs(args[0])


@pure_prim("prim::ConstantChunk")
def _constant_chunk(node, args):
    return _results(node, evaluate("aten::chunk", args[0], node.attr("chunks"), node.attr("dim")))


@pure_prim("prim::BroadcastSizes")
def _broadcast_sizes(node, args):
    return list(np.broadcast_shapes(*[tuple(a) for a in args]))


@pure_prim("prim::AutogradAnyNonZero")
def _any_nonzero(node, args):
    return any(a is not None for a in args)


@pure_prim("prim::AutogradAllZero")
def _all_zero(node, args):
    return all(a is None for a in args)


@pure_prim("prim::AutogradAllNonZero")
def _all_nonzero(node, args):
    return all(a is not None for a in args)


@pure_prim("prim::isinstance")
def _isinstance(node, args):
    return is_instance_of(args[0], node.attr("types"))


def is_instance_of(x: Any, types) -> bool:
    """`isinstance(x, types)` for the TorchScript types a value carries by itself (class types
    need the interpreter's objects: see `runtime.prims`)."""
    for t in types or ():
        if isinstance(t, TensorType) and isinstance(x, (Tensor, np.ndarray)):
            return True
        if isinstance(t, ListType) and isinstance(x, list):
            return True
        if isinstance(t, NamedType) and (
                (t.name == "int" and isinstance(x, int) and not isinstance(x, bool)) or
                (t.name == "float" and isinstance(x, float)) or
                (t.name == "bool" and isinstance(x, bool)) or
                (t.name == "str" and isinstance(x, str)) or
                (t.name == "NoneType" and x is None)):
            return True
    return False
