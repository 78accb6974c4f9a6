"""ONNX export of inference graphs: `export_onnx(graph, params=..., inputs=...)` gives an
`onnx.ModelProto` (opset 17) checked by `onnx.checker` (the `onnx` extra:
`pip install 'irjit[onnx]'`).

As `torch.onnx.export` traces, the export runs the graph once on example inputs (given, or
made from complete input types) with irjit's interpreter. Everything that does not depend on
the inputs' data is then known: numbers, lists, the conditions of `prim::If`s (the branch taken
is exported, a failed check's `RaiseException` branch is not), sizes of tensors (the model's
input shapes are fixed to the examples'), and tensors computed from parameters alone, which
become initializers (constant folding). Nodes that compute on the inputs' data become ONNX
nodes, through one conversion per supported op. Each ONNX node is named
`<scope>/<kind>_<n>` and carries the IR node's scope, source location, kind and line in its
`metadata_props` (and its printed line as `doc_string`).

An op with no conversion, data-dependent control flow or numbers computed from tensor data
end the export with `OnnxExportError` naming the op and its `file:line`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence, Union

import numpy as np

from irjit.compiler.ir import (ClassType, Graph, ListType, Node, OptionalType, TensorType,
                               TupleType, Value)
from irjit.compiler.printer import print_node
from irjit.ops import facts
from irjit.ops.errors import IRTypeError
from irjit.ops.tensor import Tensor

OPSET = 17
IR_VERSION = 10  # the first with NodeProto.metadata_props


class OnnxExportError(IRTypeError):
    """The graph cannot be exported: an unsupported op, data-dependent control flow, a
    missing value. The message names the op and its `file:line`."""


# ---- values during the export

@dataclass
class T:
    """A tensor computed by the ONNX graph: its name there, dtype and shape."""
    name: str
    dtype: np.dtype
    shape: tuple[int, ...]


@dataclass
class Const:
    """A tensor known at export time (a parameter, or computed from parameters and numbers
    alone); an initializer once an ONNX node reads it."""
    array: np.ndarray
    name: Optional[str] = None  # the initializer's name, once made
    hint: str = ""  # a name to give it (`conv.weight`)


@dataclass
class Shape:
    """What the recording run saw of a tensor that depends on the inputs."""
    dtype: np.dtype
    shape: tuple[int, ...]


class ModuleRef:
    """`%self` or one of its submodules (an attribute path)."""

    def __init__(self, path: str):
        self.path = path


def _is_dynamic(x: Any) -> bool:
    if isinstance(x, T):
        return True
    if isinstance(x, (list, tuple)):
        return any(_is_dynamic(e) for e in x)
    return False


# ---- the recording run

# tensors made from another's shape and dtype alone (the fill value aside)
_SHAPE_ONLY = frozenset({"aten::zeros_like", "aten::ones_like", "aten::full_like",
                         "aten::empty_like"})

def _snapshot(x: Any, keep_data: bool) -> Any:
    """What to remember of a run-time value: tensors by dtype and shape (their data too when
    they do not depend on the inputs), containers element by element."""
    if isinstance(x, Tensor):
        return x.data.copy() if keep_data else Shape(x.data.dtype, tuple(x.data.shape))
    if isinstance(x, np.ndarray):
        return x.copy() if keep_data else Shape(x.dtype, tuple(x.shape))
    if isinstance(x, list):
        return [_snapshot(e, keep_data) for e in x]
    if isinstance(x, tuple):
        return tuple(_snapshot(e, keep_data) for e in x)
    if isinstance(x, np.generic):
        return x.item()
    return x


def _tainted(graph: Graph) -> set:
    """The values that depend on the graph's input tensors' data (or on random ops)."""
    tainted = {v for v in graph.inputs if not isinstance(v.type, ClassType)}

    def block(b) -> None:
        for n in b.nodes():
            node(n)

    def node(n: Node) -> None:
        reads = any(v in tainted for v in n.inputs)
        if n.blocks:
            if n.kind == "prim::Loop":
                for b in n.blocks:
                    for v, init in zip(b.inputs[1:], n.inputs[2:]):
                        if init in tainted:
                            tainted.add(v)
            for b in n.blocks:
                block(b)
            reads = reads or any(v in tainted for m in n.walk() for v in m.inputs) or \
                any(v in tainted for b in n.blocks for v in b.outputs)
            if n.kind == "prim::Loop" and reads:  # carried values may take tainted ones
                for b in n.blocks:
                    tainted.update(b.inputs)
                for b in n.blocks:
                    block(b)
        if n.kind in SHAPE_QUERIES and not any(isinstance(v.type, TensorType)
                                               for v in n.outputs):
            return  # sizes are fixed by the example inputs
        if n.kind in _SHAPE_ONLY and not any(v in tainted for v in n.inputs[1:]):
            return
        if reads or facts.has_tag(n.kind, "random"):
            tainted.update(n.outputs)

    block(graph.block)
    return tainted


def _record(fn, inputs: list, tainted: set) -> dict:
    """Run `fn` (a runtime Function) once on `inputs`, remembering every node's outputs:
    {node: [snapshot per output]} for the last time each node ran."""
    from irjit.runtime.autograd import no_grad
    from irjit.runtime.interpreter import Interpreter

    seen: dict[Node, list] = {}

    class Recorder(Interpreter):
        def _compile(self, block):
            steps = super()._compile(block)
            for step in steps:
                step.handler = _recording(step.handler)
            return steps

        def sub_interpreter(self, graph):
            sub = self._sub.get(id(graph))
            if sub is None:
                sub = self._sub[id(graph)] = Recorder(graph, self.constants, self.functions,
                                                      self.filename, self.bailout)
            return sub

    def _recording(handler: Callable) -> Callable:
        def run(interp, node, args, env):
            result = handler(interp, node, args, env)
            outs = [result] if len(node.outputs) == 1 else list(result or ())
            seen[node] = [_snapshot(r, v not in tainted) for r, v in zip(outs, node.outputs)]
            return result
        return run

    old = fn.interpreter
    fn.interpreter = Recorder(old.graph, old.constants, old.functions, old.filename)
    try:
        with no_grad():
            outs = fn.run(*inputs, requires_grad=False)
    finally:
        fn.interpreter = old
    return {"nodes": seen, "outputs": outs}


# ---- building the ONNX graph

class _Exporter:
    def __init__(self, graph: Graph, record: dict, filename: str, input_names: list[str]):
        import onnx  # noqa: F401  (fails early, with the hint, when the extra is missing)
        self.graph = graph
        self.seen: dict[Node, list] = record["nodes"]
        self.filename = filename
        self.env: dict[Value, Any] = {}
        self.nodes: list = []
        self.initializers: list = []
        self.value_info: dict[str, T] = {}
        self.names: set[str] = set()
        self.counter: dict[str, int] = {}
        self.current: Optional[Node] = None
        self.current_name = ""
        self.part = 0
        self.input_names = input_names

    # -- errors and names
    def where(self, n: Node) -> str:
        line = f":{n.text_line}" if n.text_line else ""
        src = f" (from {n.source})" if n.source is not None else ""
        return f"{self.filename}{line}: {n.kind}", src

    def error(self, n: Optional[Node], reason: str) -> OnnxExportError:
        if n is None:
            return OnnxExportError(f"{self.filename}: {reason}")
        head, src = self.where(n)
        return OnnxExportError(f"{head}: {reason}{src}")

    def fresh(self, base: str) -> str:
        base = base or "v"
        name, k = base, 1
        while name in self.names:
            name = f"{base}_{k}"
            k += 1
        self.names.add(name)
        return name

    # -- emitting
    def initializer(self, array: np.ndarray, hint: str = "const") -> str:
        from onnx import numpy_helper
        name = self.fresh(hint)
        self.initializers.append(numpy_helper.from_array(np.array(array, order="C"), name))
        return name

    def name_of(self, x: Any, dtype: Optional[np.dtype] = None) -> str:
        """The ONNX name of a tensor argument: a computed tensor, an initializer made for a
        known one, or a constant made of a number (in `dtype`)."""
        if isinstance(x, T):
            return x.name
        if isinstance(x, Const):
            if dtype is not None and x.array.dtype != dtype:
                return self.initializer(x.array.astype(dtype), x.hint or "const")
            if x.name is None:
                x.name = self.initializer(x.array, x.hint or "const")
            return x.name
        if isinstance(x, (bool, int, float, np.generic)):
            return self.initializer(np.array(x, dtype=dtype or np.asarray(x).dtype))
        raise self.error(self.current, f"expected a tensor argument, got {x!r}")

    def emit(self, op: str, inputs: Sequence[Optional[str]], outputs: int = 1,
             **attrs) -> list[str]:
        """One ONNX node for the IR node being converted, named after its scope."""
        from onnx import helper
        n = self.current
        names = [self.fresh(f"{self.current_name}_{op}{i}" if outputs > 1 else
                            f"{self.current_name}_{op}") for i in range(outputs)]
        node = helper.make_node(op, ["" if i is None else i for i in inputs], names,
                                name=self.fresh(f"{self.current_name}/{op}"),
                                doc_string=print_node(n).strip() if n is not None else "",
                                **{k: v for k, v in attrs.items() if v is not None})
        if n is not None:
            meta = {"irjit.kind": n.kind, "scope": n.scope.names_from_root(),
                    "source": str(n.source) if n.source is not None else "",
                    "irjit.line": f"{self.filename}:{n.text_line}" if n.text_line else ""}
            for key, value in meta.items():
                if value:
                    entry = node.metadata_props.add()
                    entry.key, entry.value = key, value
        self.nodes.append(node)
        return names

    def tensor(self, name: str, like: Shape) -> T:
        t = T(name, np.dtype(like.dtype), tuple(like.shape))
        self.value_info[name] = t
        return t

    def out(self, index: int = 0) -> Shape:
        """What the recording run saw of output `index` of the node being converted."""
        snap = self.seen[self.current][index]
        if isinstance(snap, np.ndarray):
            return Shape(snap.dtype, snap.shape)
        if not isinstance(snap, Shape):
            raise self.error(self.current, "expected a tensor result")
        return snap

    def cast(self, x: Any, dtype: np.dtype) -> str:
        """`x` as an ONNX tensor of `dtype` (numbers and known tensors become constants)."""
        if isinstance(x, T):
            if x.dtype == dtype:
                return x.name
            from onnx import helper
            to = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
            return self.emit("Cast", [x.name], to=to)[0]
        if isinstance(x, Const):
            return self.name_of(x, np.dtype(dtype))
        return self.name_of(x, np.dtype(dtype))

    def ints(self, values: Sequence[int], hint: str = "shape") -> str:
        return self.initializer(np.array(list(values), dtype=np.int64), hint)

    # -- the walk
    def run(self) -> None:
        g = self.graph
        for v in g.inputs:
            if isinstance(v.type, ClassType):
                self.env[v] = ModuleRef("")
        self.block(g.block)

    def block(self, block) -> None:
        for n in block.nodes():
            self.node(n)

    def node(self, n: Node) -> None:
        reads = [self.env[v] if v in self.env else self._missing(n, v) for v in n.inputs]
        if n.kind == "prim::GetAttr" and reads and isinstance(reads[0], ModuleRef):
            path = f"{reads[0].path}.{n.attr('name')}".lstrip(".")
            if isinstance(n.outputs[0].type, ClassType):
                self.env[n.outputs[0]] = ModuleRef(path)
                return
            self._known(n, hint=path)
            return
        if n.kind in ("prim::RaiseException", "aten::warn", "prim::Print"):
            return  # checks that passed when the example ran, and messages
        dynamic = any(_is_dynamic(x) for x in reads) or \
            any(_is_dynamic(self.env.get(v)) for v in self._read_inside(n))
        if n.kind in SHAPE_QUERIES and not any(isinstance(v.type, TensorType)
                                               for v in n.outputs):
            self._known(n)
            return
        if not dynamic:
            if facts.has_tag(n.kind, "random"):
                raise self.error(n, "a random op has no fixed value to export")
            self._known(n)
            return
        if n.kind == "prim::If":
            self._if(n, reads)
            return
        if n.blocks:
            raise self.error(n, "a loop that computes on the inputs' data cannot be exported "
                                "(only loops over numbers and sizes, which the export unrolls "
                                "by running them)")
        convert = _STRUCTURAL.get(n.kind) or CONVERTERS.get(n.kind)
        if convert is None:
            raise self.error(n, "no ONNX conversion for this op (supported: "
                                f"{len(CONVERTERS)} ops; see irjit.onnx_export.CONVERTERS)")
        self.current = n
        self.current_name = self._node_name(n)
        try:
            results = convert(self, n, reads)
        except OnnxExportError:
            raise
        except (ValueError, IndexError, TypeError, KeyError) as e:
            raise self.error(n, f"cannot convert: {e}") from None
        finally:
            self.current = None
        if len(n.outputs) == 1:
            results = [results]
        for v, r in zip(n.outputs, results):
            self.env[v] = r
        if _writes_first_input(n.kind):
            self._write_back(n, results[0] if results else None)

    def _missing(self, n: Node, v: Value):
        raise self.error(n, f"reads %{v.name}, which the export did not compute")

    @staticmethod
    def _read_inside(n: Node) -> list[Value]:
        """The outside values that `n`'s blocks read."""
        if not n.blocks:
            return []
        from irjit.compiler.codegen.partition import used_values
        return used_values(n)[len(set(n.inputs)):]

    def _known(self, n: Node, hint: str = "") -> None:
        """Outputs that do not depend on the inputs' data: as the recording run saw them."""
        if n not in self.seen:
            raise self.error(n, "did not run on the example inputs, so its value is unknown")
        for v, snap in zip(n.outputs, self.seen[n]):
            self.env[v] = _known_value(snap, hint or v.name)

    def _if(self, n: Node, reads: list) -> None:
        cond = reads[0]
        if _is_dynamic(cond):
            raise self.error(n, "the branch taken depends on the inputs' data; ONNX export "
                                "supports branches on numbers, sizes and flags")
        taken = n.blocks[0] if cond else n.blocks[1]
        self.block(taken)
        for v, out in zip(n.outputs, taken.outputs):
            self.env[v] = self.env[out]

    def _write_back(self, n: Node, result: Any) -> None:
        """An in-place op's first input now holds the result (straight-line code: later
        reads of it see the write); a write through a view cannot be followed."""
        from irjit.ops import registry
        target = n.inputs[0]
        if any(e.schema.is_view for e in registry.overloads(target.node.kind)):
            raise self.error(n, "writes in place through a view, which ONNX cannot express")
        self.env[target] = result

    def _node_name(self, n: Node) -> str:
        scope = n.scope.names_from_root()
        kind = n.kind.replace("::", "_")
        k = self.counter.get(kind, 0)
        self.counter[kind] = k + 1
        return f"{scope}/{kind}_{k}" if scope else f"{kind}_{k}"


def _writes_first_input(kind: str) -> bool:
    from irjit.ops import registry
    return any(e.schema.is_inplace for e in registry.overloads(kind))


def _known_value(snap: Any, hint: str) -> Any:
    if isinstance(snap, np.ndarray):
        return Const(snap, hint=hint)
    if isinstance(snap, Shape):
        raise AssertionError("a known value recorded without its data")
    if isinstance(snap, list):
        return [_known_value(e, hint) for e in snap]
    if isinstance(snap, tuple):
        return tuple(_known_value(e, hint) for e in snap)
    return snap


# ---- structural prims: lists and tuples of computed tensors

def _construct(ex, n, reads):
    return tuple(reads) if n.kind == "prim::TupleConstruct" else list(reads)


def _unpack(ex, n, reads):
    seq = reads[0]
    if len(seq) != len(n.outputs):
        raise ex.error(n, f"unpacks {len(n.outputs)} values from a list of {len(seq)}")
    return list(seq)


def _index(ex, n, reads):
    seq, i = reads
    if _is_dynamic(i):
        raise ex.error(n, "an index computed from the inputs' data")
    return seq[i]


def _list_slice(ex, n, reads):
    seq = reads[0]
    if not isinstance(seq, list):
        return _TENSOR_SLICE(ex, n, reads)
    start, end, step = (list(reads[1:]) + [None, None, 1])[:3]
    return seq[start:end:step]


def _list_add(ex, n, reads):
    if isinstance(reads[0], list) and isinstance(reads[1], list):
        return reads[0] + reads[1]
    return _TENSOR_ADD(ex, n, reads)


def _same(ex, n, reads):
    return reads[0]


def _len(ex, n, reads):
    return len(reads[0])


_STRUCTURAL = {
    "prim::TupleConstruct": _construct, "prim::ListConstruct": _construct,
    "prim::TupleUnpack": _unpack, "prim::ListUnpack": _unpack,
    "prim::TupleIndex": _index, "aten::__getitem__": _index,
    "prim::unchecked_cast": _same, "aten::len": _len, "aten::slice": _list_slice,
    "aten::add": _list_add,
}
# Ops whose results depend only on their inputs' sizes, dtypes and identity, not on their
# data: the example run's results hold for every run of the exported model.
SHAPE_QUERIES = frozenset({
    "aten::size", "aten::dim", "aten::numel", "aten::len", "prim::dtype", "prim::device",
    "prim::layout", "aten::is_floating_point", "aten::__is__", "aten::__isnot__",
    "prim::is_cuda", "aten::is_contiguous"})


# ---- conversions, one per supported op

def _dim(d: int, rank: int) -> int:
    return d + rank if d < 0 else d


def _result_dtype(ex) -> np.dtype:
    return np.dtype(ex.out().dtype)


def _unary(op: str, **fixed):
    def convert(ex, n, reads):
        x = reads[0]
        return ex.tensor(ex.emit(op, [ex.cast(x, _result_dtype(ex))], **fixed)[0], ex.out())
    return convert


def _binary(op: str, alpha: bool = False):
    def convert(ex, n, reads):
        dtype = _result_dtype(ex)
        a, b = ex.cast(reads[0], dtype), ex.cast(reads[1], dtype)
        if alpha and len(reads) > 2 and reads[2] not in (None, 1):
            b = ex.emit("Mul", [b, ex.name_of(reads[2], dtype)])[0]
        return ex.tensor(ex.emit(op, [a, b])[0], ex.out())
    return convert


def _operand_dtype(reads) -> np.dtype:
    """The dtype two operands of a comparison compare in (torch's promotion, roughly: tensors
    decide; a float number lifts an integer tensor to float32)."""
    tensors = [x.dtype if isinstance(x, T) else x.array.dtype for x in reads
               if isinstance(x, (T, Const))]
    dtype = np.result_type(*tensors) if tensors else np.dtype(np.float32)
    if dtype.kind in "iub" and any(isinstance(x, float) for x in reads):
        dtype = np.dtype(np.float32)
    return dtype


def _compare(op: str, negate: bool = False):
    def convert(ex, n, reads):
        dtype = _operand_dtype(reads[:2])
        out = ex.emit(op, [ex.cast(reads[0], dtype), ex.cast(reads[1], dtype)])[0]
        if negate:
            out = ex.emit("Not", [out])[0]
        return ex.tensor(out, ex.out())
    return convert


def _div(ex, n, reads):
    dtype = _result_dtype(ex)
    out = ex.emit("Div", [ex.cast(reads[0], dtype), ex.cast(reads[1], dtype)])[0]
    mode = reads[2] if len(reads) > 2 else None
    if mode == "floor" and dtype.kind == "f":
        out = ex.emit("Floor", [out])[0]
    elif mode == "trunc" and dtype.kind == "f":
        sign = ex.emit("Sign", [out])[0]
        out = ex.emit("Mul", [ex.emit("Floor", [ex.emit("Abs", [out])[0]])[0], sign])[0]
    elif mode is not None and dtype.kind != "f":
        raise ex.error(n, f"integer division with rounding_mode={mode!r}")
    return ex.tensor(out, ex.out())


def _rsqrt(ex, n, reads):
    x = ex.cast(reads[0], _result_dtype(ex))
    return ex.tensor(ex.emit("Reciprocal", [ex.emit("Sqrt", [x])[0]])[0], ex.out())


def _pow(ex, n, reads):
    dtype = _result_dtype(ex)
    return ex.tensor(ex.emit("Pow", [ex.cast(reads[0], dtype), ex.cast(reads[1], dtype)])[0],
                     ex.out())


def _clip(ex, n, reads, lo=None, hi=None):
    dtype = _result_dtype(ex)
    x = ex.cast(reads[0], dtype)
    lo = ex.name_of(lo, dtype) if lo is not None else None
    hi = ex.name_of(hi, dtype) if hi is not None else None
    return ex.tensor(ex.emit("Clip", [x, lo, hi])[0], ex.out())


def _clamp(ex, n, reads):
    if any(isinstance(r, (T, Const)) for r in reads[1:3]):
        raise ex.error(n, "clamp by tensors")
    return _clip(ex, n, reads, reads[1] if len(reads) > 1 else None,
                 reads[2] if len(reads) > 2 else None)


def _hardtanh(ex, n, reads):
    return _clip(ex, n, reads, reads[1] if len(reads) > 1 else -1.0,
                 reads[2] if len(reads) > 2 else 1.0)


def _relu6(ex, n, reads):
    return _clip(ex, n, reads, 0.0, 6.0)


def _leaky_relu(ex, n, reads):
    slope = reads[1] if len(reads) > 1 else 0.01
    return ex.tensor(ex.emit("LeakyRelu", [ex.name_of(reads[0])], alpha=float(slope))[0],
                     ex.out())


def _elu(ex, n, reads):
    alpha, scale, input_scale = (list(reads[1:4]) + [1.0, 1.0, 1.0])[:3]
    if scale != 1 or input_scale != 1:
        raise ex.error(n, "elu with scale or input_scale other than 1")
    return ex.tensor(ex.emit("Elu", [ex.name_of(reads[0])], alpha=float(alpha))[0], ex.out())


def _gelu(ex, n, reads):
    approximate = reads[1] if len(reads) > 1 else "none"
    dtype = _result_dtype(ex)
    x = ex.cast(reads[0], dtype)
    half = ex.name_of(0.5, dtype)
    one = ex.name_of(1.0, dtype)
    if approximate == "tanh":
        cube = ex.emit("Mul", [x, ex.emit("Mul", [x, x])[0]])[0]
        inner = ex.emit("Add", [x, ex.emit("Mul", [cube, ex.name_of(0.044715, dtype)])[0]])[0]
        t = ex.emit("Tanh", [ex.emit("Mul", [inner, ex.name_of(np.sqrt(2 / np.pi), dtype)])[0]])[0]
    else:
        t = ex.emit("Erf", [ex.emit("Div", [x, ex.name_of(np.sqrt(2.0), dtype)])[0]])[0]
    y = ex.emit("Mul", [ex.emit("Mul", [x, half])[0], ex.emit("Add", [t, one])[0]])[0]
    return ex.tensor(y, ex.out())


def _silu(ex, n, reads):
    x = ex.name_of(reads[0])
    return ex.tensor(ex.emit("Mul", [x, ex.emit("Sigmoid", [x])[0]])[0], ex.out())


def _softplus(ex, n, reads):
    beta = reads[1] if len(reads) > 1 else 1
    if beta != 1:
        raise ex.error(n, "softplus with beta other than 1")
    return ex.tensor(ex.emit("Softplus", [ex.name_of(reads[0])])[0], ex.out())


def _softmax(op: str):
    def convert(ex, n, reads):
        x, dim = reads[0], reads[1]
        dtype = _result_dtype(ex)
        rank = len(ex.out().shape)
        return ex.tensor(ex.emit(op, [ex.cast(x, dtype)], axis=_dim(dim, rank))[0], ex.out())
    return convert


def _shape_of(x) -> tuple[int, ...]:
    return tuple(x.shape) if isinstance(x, T) else tuple(x.array.shape)


def _transpose_name(ex, w) -> str:
    if isinstance(w, Const) and w.array.ndim == 2:  # fold a weight's transpose
        return ex.initializer(np.array(w.array.T, order="C"), (w.hint or "w") + ".T")
    return ex.emit("Transpose", [ex.name_of(w)], perm=[1, 0])[0]


def _linear(ex, n, reads):
    x, w = reads[0], reads[1]
    b = reads[2] if len(reads) > 2 else None
    dtype = _result_dtype(ex)
    if len(_shape_of(x)) == 2 and len(_shape_of(w)) == 2:
        inputs = [ex.cast(x, dtype), ex.cast(w, dtype)] + ([ex.cast(b, dtype)] if b is not None else [])
        return ex.tensor(ex.emit("Gemm", inputs, transB=1)[0], ex.out())
    y = ex.emit("MatMul", [ex.cast(x, dtype), _transpose_name(ex, w)])[0]
    if b is not None:
        y = ex.emit("Add", [y, ex.cast(b, dtype)])[0]
    return ex.tensor(y, ex.out())


def _matmul(ex, n, reads):
    dtype = _result_dtype(ex)
    return ex.tensor(ex.emit("MatMul", [ex.cast(reads[0], dtype), ex.cast(reads[1], dtype)])[0],
                     ex.out())


def _addmm(ex, n, reads):
    bias, a, b = reads[:3]
    beta = reads[3] if len(reads) > 3 else 1
    alpha = reads[4] if len(reads) > 4 else 1
    dtype = _result_dtype(ex)
    y = ex.emit("Gemm", [ex.cast(a, dtype), ex.cast(b, dtype), ex.cast(bias, dtype)],
                alpha=float(alpha), beta=float(beta))[0]
    return ex.tensor(y, ex.out())


def _transpose(ex, n, reads):
    x = reads[0]
    rank = len(_shape_of(x))
    perm = list(range(rank))
    if n.kind == "aten::t":
        if rank < 2:
            return ex.tensor(ex.emit("Identity", [ex.name_of(x)])[0], ex.out())
        perm = [1, 0]
    elif n.kind == "aten::permute":
        perm = [_dim(d, rank) for d in reads[1]]
    else:
        i, j = _dim(reads[1], rank), _dim(reads[2], rank)
        perm[i], perm[j] = perm[j], perm[i]
    return ex.tensor(ex.emit("Transpose", [ex.name_of(x)], perm=perm)[0], ex.out())


def _reshape(ex, n, reads):
    """view, reshape, flatten, squeeze, unsqueeze: the shape the example run produced (input
    shapes are fixed, so it is the shape for every run of the model)."""
    shape = ex.out().shape
    return ex.tensor(ex.emit("Reshape", [ex.name_of(reads[0]), ex.ints(shape)])[0], ex.out())


def _expand(ex, n, reads):
    return ex.tensor(ex.emit("Expand", [ex.name_of(reads[0]), ex.ints(ex.out().shape)])[0],
                     ex.out())


def _identity(ex, n, reads):
    return ex.tensor(ex.emit("Identity", [ex.name_of(reads[0])])[0], ex.out())


def _dropout(ex, n, reads):
    if reads[2]:
        raise ex.error(n, "dropout in training mode (train=True) is random; export the "
                          "module in eval mode")
    return _identity(ex, n, reads)


def _to(ex, n, reads):
    return ex.tensor(ex.cast(reads[0], _result_dtype(ex)), ex.out())


def _slice(ex, n, reads):
    x = reads[0]
    shape = _shape_of(x)
    if n.kind == "aten::narrow":
        dim, start, length = reads[1], reads[2], reads[3]
        dim = _dim(dim, len(shape))
        start = start + shape[dim] if start < 0 else start
        end, step = start + length, 1
    else:
        dim = _dim(reads[1] if len(reads) > 1 else 0, len(shape))
        start = reads[2] if len(reads) > 2 and reads[2] is not None else 0
        end = reads[3] if len(reads) > 3 and reads[3] is not None else shape[dim]
        step = reads[4] if len(reads) > 4 else 1
        start, end, _ = slice(start, min(end, shape[dim]), step).indices(shape[dim])
    y = ex.emit("Slice", [ex.name_of(x), ex.ints([start]), ex.ints([max(end, start)]),
                          ex.ints([dim]), ex.ints([step])])[0]
    return ex.tensor(y, ex.out())


def _select(ex, n, reads):
    x, dim, index = reads
    shape = _shape_of(x)
    dim = _dim(dim, len(shape))
    index = index + shape[dim] if index < 0 else index
    idx = ex.initializer(np.array(index, dtype=np.int64), "index")
    return ex.tensor(ex.emit("Gather", [ex.name_of(x), idx], axis=dim)[0], ex.out())


def _split_pieces(ex, n, x, dim: int, sizes: list[int]) -> list[T]:
    names = ex.emit("Split", [ex.name_of(x), ex.ints(sizes, "split")], outputs=len(sizes),
                    axis=dim)
    return names


def _chunk_like(ex, n, reads):
    """chunk, split, unbind, tensor_split into a list: the pieces' sizes as the example
    run made them."""
    x = reads[0]
    rank = len(_shape_of(x))
    dim = reads[2] if n.kind in ("aten::chunk", "aten::split", "aten::split_with_sizes") \
        else (reads[1] if len(reads) > 1 else 0)
    dim = _dim(dim, rank)
    pieces = ex.seen[n][0]
    sizes = [1] * len(pieces) if n.kind == "aten::unbind" else [p.shape[dim] for p in pieces]
    names = _split_pieces(ex, n, x, dim, sizes)
    out = []
    for name, p in zip(names, pieces):
        if n.kind == "aten::unbind":
            name = ex.emit("Squeeze", [name, ex.ints([dim], "axes")])[0]
        out.append(ex.tensor(name, Shape(p.dtype, p.shape)))
    return out


def _cat(ex, n, reads):
    tensors, dim = reads[0], reads[1] if len(reads) > 1 else 0
    dtype = _result_dtype(ex)
    rank = len(ex.out().shape)
    names = [ex.cast(t, dtype) for t in tensors]
    if n.kind == "aten::stack":
        axis = _dim(dim, rank)
        names = [ex.emit("Unsqueeze", [name, ex.ints([axis], "axes")])[0] for name in names]
        return ex.tensor(ex.emit("Concat", names, axis=axis)[0], ex.out())
    return ex.tensor(ex.emit("Concat", names, axis=_dim(dim, rank))[0], ex.out())


def _pairs(v, k: int) -> list[int]:
    return list(v) * k if len(v) == 1 else list(v)


def _conv(ex, n, reads):
    x, w, b = reads[0], reads[1], reads[2]
    spatial = len(_shape_of(w)) - 2
    if n.kind == "aten::_convolution":
        stride, padding, dilation, transposed, output_padding, groups = reads[3:9]
    elif n.kind == "aten::conv_transpose2d":
        stride, padding, output_padding, groups, dilation = reads[3:8]
        transposed = True
    else:
        stride, padding, dilation, groups = reads[3:7]
        transposed, output_padding = False, [0] * spatial
    dtype = _result_dtype(ex)
    inputs = [ex.cast(x, dtype), ex.cast(w, dtype)] + ([ex.cast(b, dtype)] if b is not None else [])
    attrs: dict = {"strides": _pairs(stride, spatial), "dilations": _pairs(dilation, spatial),
                   "group": int(groups)}
    if isinstance(padding, str):
        if padding == "same":
            attrs["auto_pad"] = "SAME_UPPER"
        else:
            attrs["pads"] = [0] * (2 * spatial)
    else:
        attrs["pads"] = _pairs(padding, spatial) * 2
    if transposed:
        attrs["output_padding"] = _pairs(output_padding, spatial)
        return ex.tensor(ex.emit("ConvTranspose", inputs, **attrs)[0], ex.out())
    return ex.tensor(ex.emit("Conv", inputs, **attrs)[0], ex.out())


def _pool(op: str, spatial: int):
    def convert(ex, n, reads):
        x, kernel = reads[0], reads[1]
        stride = reads[2] if len(reads) > 2 and reads[2] else kernel
        padding = reads[3] if len(reads) > 3 else [0]
        attrs: dict = {"kernel_shape": _pairs(kernel, spatial),
                       "strides": _pairs(stride, spatial),
                       "pads": _pairs(padding, spatial) * 2}
        if op == "MaxPool":
            dilation = reads[4] if len(reads) > 4 else [1]
            attrs["dilations"] = _pairs(dilation, spatial)
            attrs["ceil_mode"] = int(bool(reads[5])) if len(reads) > 5 else 0
        else:
            attrs["ceil_mode"] = int(bool(reads[4])) if len(reads) > 4 else 0
            attrs["count_include_pad"] = int(bool(reads[5])) if len(reads) > 5 else 1
            if len(reads) > 6 and reads[6] is not None:
                raise ex.error(n, "avg_pool with divisor_override")
        return ex.tensor(ex.emit(op, [ex.name_of(x)], **attrs)[0], ex.out())
    return convert


def _adaptive_avg_pool(ex, n, reads):
    x = reads[0]
    shape = _shape_of(x)
    out = ex.out().shape
    spatial = len(out) - 2
    if all(o == 1 for o in out[2:]):
        return ex.tensor(ex.emit("GlobalAveragePool", [ex.name_of(x)])[0], ex.out())
    ins = shape[-spatial:]
    if any(i % o for i, o in zip(ins, out[2:])):
        raise ex.error(n, f"adaptive pooling from {tuple(ins)} to {tuple(out[2:])} (the "
                          "input size must be a multiple of the output size)")
    kernel = [i // o for i, o in zip(ins, out[2:])]
    return ex.tensor(ex.emit("AveragePool", [ex.name_of(x)], kernel_shape=kernel,
                             strides=kernel)[0], ex.out())


def _batch_norm(ex, n, reads):
    x, w, b, mean, var, training, _momentum, eps = reads[:8]
    if training:
        raise ex.error(n, "batch norm in training mode (export the module in eval mode)")
    dtype = _result_dtype(ex)
    channels = _shape_of(x)[1]
    w = w if w is not None else Const(np.ones(channels, dtype))
    b = b if b is not None else Const(np.zeros(channels, dtype))
    y = ex.emit("BatchNormalization", [ex.cast(x, dtype)] + [ex.cast(t, dtype) for t in
                                                             (w, b, mean, var)],
                epsilon=float(eps))[0]
    return ex.tensor(y, ex.out())


def _layer_norm(ex, n, reads):
    x, shape, w, b, eps = reads[:5]
    dtype = _result_dtype(ex)
    size = tuple(shape)
    w = w if w is not None else Const(np.ones(size, dtype))
    b = b if b is not None else Const(np.zeros(size, dtype))
    y = ex.emit("LayerNormalization", [ex.cast(x, dtype), ex.cast(w, dtype), ex.cast(b, dtype)],
                axis=-len(size), epsilon=float(eps))[0]
    return ex.tensor(y, ex.out())


def _group_norm(ex, n, reads):
    x, groups, w, b, eps = reads[:5]
    dtype = _result_dtype(ex)
    shape = _shape_of(x)
    xs = ex.emit("Reshape", [ex.cast(x, dtype), ex.ints([shape[0], groups, -1])])[0]
    mean = ex.emit("ReduceMean", [xs], axes=[2], keepdims=1)[0]
    d = ex.emit("Sub", [xs, mean])[0]
    var = ex.emit("ReduceMean", [ex.emit("Mul", [d, d])[0]], axes=[2], keepdims=1)[0]
    std = ex.emit("Sqrt", [ex.emit("Add", [var, ex.name_of(float(eps), dtype)])[0]])[0]
    y = ex.emit("Reshape", [ex.emit("Div", [d, std])[0], ex.ints(shape)])[0]
    affine = [shape[1]] + [1] * (len(shape) - 2)
    if w is not None:
        y = ex.emit("Mul", [y, ex.emit("Reshape", [ex.cast(w, dtype), ex.ints(affine)])[0]])[0]
    if b is not None:
        y = ex.emit("Add", [y, ex.emit("Reshape", [ex.cast(b, dtype), ex.ints(affine)])[0]])[0]
    return ex.tensor(y, ex.out())


def _embedding(ex, n, reads):
    weight, indices = reads[0], reads[1]
    idx = ex.cast(indices, np.dtype(np.int64))
    return ex.tensor(ex.emit("Gather", [ex.name_of(weight), idx], axis=0)[0], ex.out())


def _reduce(op: str):
    def convert(ex, n, reads):
        x = reads[0]
        rank = len(_shape_of(x))
        dims = reads[1] if len(reads) > 1 and isinstance(reads[1], (list, tuple)) else None
        if len(reads) > 1 and isinstance(reads[1], int) and not isinstance(reads[1], bool):
            dims = [reads[1]]
        keep = int(bool(reads[2])) if dims is not None and len(reads) > 2 else 0
        dtype = _result_dtype(ex)
        xs = ex.cast(x, dtype)
        axes = None if not dims else [_dim(d, rank) for d in dims]
        if op == "ReduceSum":
            inputs = [xs] + ([ex.ints(axes, "axes")] if axes else [])
            y = ex.emit(op, inputs, keepdims=keep)[0]
        else:
            y = ex.emit(op, [xs], keepdims=keep, axes=axes)[0]
        return ex.tensor(y, ex.out())
    return convert


def _where(ex, n, reads):
    dtype = _result_dtype(ex)
    cond = ex.cast(reads[0], np.dtype(bool))
    return ex.tensor(ex.emit("Where", [cond, ex.cast(reads[1], dtype),
                                       ex.cast(reads[2], dtype)])[0], ex.out())


def _masked_fill(ex, n, reads):
    dtype = _result_dtype(ex)
    cond = ex.cast(reads[1], np.dtype(bool))
    return ex.tensor(ex.emit("Where", [cond, ex.cast(reads[2], dtype),
                                       ex.cast(reads[0], dtype)])[0], ex.out())


def _logical(op: str):
    def convert(ex, n, reads):
        names = [ex.cast(r, np.dtype(bool)) for r in reads]
        return ex.tensor(ex.emit(op, names)[0], ex.out())
    return convert


def _filled(value):
    """zeros_like, ones_like, full_like, empty_like: a constant of the input's shape."""
    def convert(ex, n, reads):
        out = ex.out()
        fill = reads[1] if value is None else value
        return Const(np.full(out.shape, fill, dtype=out.dtype), hint=n.outputs[0].name)
    return convert


def _floor_divide(ex, n, reads):
    dtype = _result_dtype(ex)
    if dtype.kind != "f":
        raise ex.error(n, "integer floor division (ONNX Div truncates)")
    out = ex.emit("Div", [ex.cast(reads[0], dtype), ex.cast(reads[1], dtype)])[0]
    return ex.tensor(ex.emit("Floor", [out])[0], ex.out())


def _index_select(ex, n, reads):
    x, dim, index = reads
    rank = len(_shape_of(x))
    idx = ex.cast(index, np.dtype(np.int64))
    return ex.tensor(ex.emit("Gather", [ex.name_of(x), idx], axis=_dim(dim, rank))[0], ex.out())


def _cumsum(ex, n, reads):
    x, dim = reads[0], reads[1]
    dtype = _result_dtype(ex)
    axis = ex.initializer(np.array(_dim(dim, len(_shape_of(x))), dtype=np.int64), "axis")
    return ex.tensor(ex.emit("CumSum", [ex.cast(x, dtype), axis])[0], ex.out())


CONVERTERS: dict[str, Callable] = {
    # element-wise
    "aten::relu": _unary("Relu"), "aten::relu_": _unary("Relu"),
    "aten::sigmoid": _unary("Sigmoid"), "aten::sigmoid_": _unary("Sigmoid"),
    "aten::tanh": _unary("Tanh"), "aten::tanh_": _unary("Tanh"),
    "aten::exp": _unary("Exp"), "aten::log": _unary("Log"), "aten::sqrt": _unary("Sqrt"),
    "aten::abs": _unary("Abs"), "aten::neg": _unary("Neg"), "aten::sin": _unary("Sin"),
    "aten::cos": _unary("Cos"), "aten::floor": _unary("Floor"), "aten::ceil": _unary("Ceil"),
    "aten::reciprocal": _unary("Reciprocal"), "aten::sign": _unary("Sign"),
    "aten::erf": _unary("Erf"), "aten::rsqrt": _rsqrt, "aten::round": _unary("Round"),
    "aten::clamp_": _clamp, "aten::floor_divide": _floor_divide,
    "aten::__and__": _logical("And"), "aten::__or__": _logical("Or"),
    "aten::__xor__": _logical("Xor"), "aten::index_select": _index_select,
    "aten::cumsum": _cumsum, "aten::zeros_like": _filled(0), "aten::ones_like": _filled(1),
    "aten::full_like": _filled(None), "aten::empty_like": _filled(0),
    "aten::add": _binary("Add", alpha=True), "aten::add_": _binary("Add", alpha=True),
    "aten::sub": _binary("Sub", alpha=True), "aten::sub_": _binary("Sub", alpha=True),
    "aten::mul": _binary("Mul"), "aten::mul_": _binary("Mul"),
    "aten::div": _div, "aten::div_": _div, "aten::pow": _pow,
    "aten::eq": _compare("Equal"), "aten::ne": _compare("Equal", negate=True),
    "aten::gt": _compare("Greater"), "aten::lt": _compare("Less"),
    "aten::ge": _compare("GreaterOrEqual"), "aten::le": _compare("LessOrEqual"),
    "aten::logical_and": _logical("And"), "aten::logical_or": _logical("Or"),
    "aten::logical_not": _logical("Not"),
    "aten::where": _where, "aten::masked_fill": _masked_fill,
    "aten::clamp": _clamp, "aten::hardtanh": _hardtanh, "aten::relu6": _relu6,
    "aten::relu6_": _relu6, "aten::leaky_relu": _leaky_relu, "aten::elu": _elu,
    "aten::elu_": _elu, "aten::gelu": _gelu, "aten::silu": _silu, "aten::silu_": _silu,
    "aten::softplus": _softplus,
    "aten::softmax": _softmax("Softmax"), "aten::log_softmax": _softmax("LogSoftmax"),
    # linear algebra
    "aten::linear": _linear, "aten::matmul": _matmul, "aten::mm": _matmul,
    "aten::bmm": _matmul, "aten::addmm": _addmm,
    # shapes and layout
    "aten::t": _transpose, "aten::transpose": _transpose, "aten::permute": _transpose,
    "aten::view": _reshape, "aten::reshape": _reshape, "aten::flatten": _reshape,
    "aten::squeeze": _reshape, "aten::unsqueeze": _reshape, "aten::expand": _expand,
    "aten::contiguous": _identity, "aten::clone": _identity, "aten::detach": _identity,
    "aten::dropout": _dropout, "aten::dropout_": _dropout, "aten::to": _to,
    "aten::type_as": _to, "aten::slice": _slice, "aten::narrow": _slice,
    "aten::select": _select, "aten::chunk": _chunk_like, "aten::split": _chunk_like,
    "aten::unbind": _chunk_like, "aten::cat": _cat, "aten::stack": _cat,
    # neural network layers
    "aten::conv1d": _conv, "aten::conv2d": _conv, "aten::_convolution": _conv,
    "aten::conv_transpose2d": _conv,
    "aten::max_pool1d": _pool("MaxPool", 1), "aten::max_pool2d": _pool("MaxPool", 2),
    "aten::avg_pool1d": _pool("AveragePool", 1), "aten::avg_pool2d": _pool("AveragePool", 2),
    "aten::adaptive_avg_pool1d": _adaptive_avg_pool,
    "aten::adaptive_avg_pool2d": _adaptive_avg_pool,
    "aten::batch_norm": _batch_norm, "aten::layer_norm": _layer_norm,
    "aten::group_norm": _group_norm, "aten::embedding": _embedding,
    # reductions
    "aten::sum": _reduce("ReduceSum"), "aten::mean": _reduce("ReduceMean"),
}


_TENSOR_SLICE = CONVERTERS["aten::slice"]
_TENSOR_ADD = CONVERTERS["aten::add"]


# ---- the entry point

def _example_inputs(fn, inputs: Optional[Sequence], filename: str) -> list:
    """The arrays the export runs on: the given ones, or random ones of complete types."""
    values = fn.input_values
    if inputs is not None:
        if len(inputs) != len(values):
            raise OnnxExportError(f"{filename}: the graph takes {len(values)} inputs "
                                  f"({', '.join('%' + v.name for v in values)}) but "
                                  f"{len(inputs)} were given")
        return [np.asarray(x) if x is not None else None for x in inputs]
    from irjit.ops.types import SCALAR_TYPES
    rng = np.random.default_rng(0)
    out = []
    for v in values:
        t = v.type
        sizes = t.complete_sizes() if isinstance(t, TensorType) else None
        if sizes is None or t.scalar_type is None:
            raise OnnxExportError(f"{filename}: input %{v.name} has type {t}, which gives no "
                                  "dtype and shape; give example inputs (--inputs FILE.npz) or "
                                  "complete types (--input-types)")
        dtype = np.dtype(SCALAR_TYPES.get(t.scalar_type) or "float32")
        out.append(rng.standard_normal(sizes).astype(dtype) if dtype.kind == "f"
                   else rng.integers(0, 4, sizes).astype(dtype))
    return out


def _flat_outputs(value: Any) -> list:
    if isinstance(value, (list, tuple)):
        return [leaf for e in value for leaf in _flat_outputs(e)]
    return [value]


def export_onnx(graph: Graph, path: Union[None, str, os.PathLike] = None, *,
                params: Optional[dict] = None, constants: Optional[dict] = None,
                attributes: Optional[dict] = None, inputs: Optional[Sequence] = None,
                filename: Optional[str] = None, check: bool = True):
    """The ONNX model of an inference graph, written to `path` when given.

    `params` (dotted attribute paths, as `irtool run --params`), `constants` (frozen graphs'
    `<Tensor>` values by name) and `attributes` give what the graph reads besides its inputs;
    `inputs` are example inputs (one array per graph input after `%self`; without them the
    input types must be complete). The ONNX inputs are named after the graph's inputs with the
    examples' shapes; the outputs `out0, out1, ...` are the graph's outputs with tuples and
    lists flattened, as `irtool run` numbers them."""
    try:
        import onnx
        from onnx import helper
    except ImportError:
        raise OnnxExportError("ONNX export needs the onnx package: pip install "
                              "'irjit[onnx]' (or pip install onnx)") from None
    from irjit.runtime.loader import Function
    name = filename or getattr(graph, "source_filename", None) or "<graph>"
    work = graph.copy()  # loading attaches constants to the graph: keep the caller's as it is
    fn = Function(work, params=params, constants=constants, filename=name,
                  attributes=attributes)
    examples = _example_inputs(fn, inputs, name)
    record = _record(fn, examples, _tainted(work))
    input_names = [v.name for v in fn.input_values]
    ex = _Exporter(work, record, name, input_names)
    graph_inputs = []
    for v, x in zip(fn.input_values, examples):
        if x is None:
            raise OnnxExportError(f"{name}: input %{v.name} is None in the examples; ONNX "
                                  "models take tensors")
        if not isinstance(x, np.ndarray) or isinstance(v.type, (ListType, TupleType)) or \
                (not isinstance(v.type, (TensorType, OptionalType))):
            raise OnnxExportError(f"{name}: input %{v.name} : {v.type} is not a tensor; "
                                  "ONNX models take tensors")
        ex.names.add(v.name)
        t = T(v.name, x.dtype, tuple(x.shape))
        ex.env[v] = t
        graph_inputs.append(helper.make_tensor_value_info(
            v.name, helper.np_dtype_to_tensor_dtype(x.dtype), list(x.shape)))
    ex.run()
    outputs = []
    results = _flat_outputs([ex.env[v] for v in work.outputs])
    seen_values = _flat_outputs([_snapshot(o, False) for o in record["outputs"]])
    for i, (r, snap) in enumerate(zip(results, seen_values)):
        out_name = ex.fresh(f"out{i}")
        ex.current = None
        if isinstance(r, T):
            src = r.name
        elif isinstance(r, Const):
            src = ex.name_of(r)
        elif isinstance(r, (bool, int, float)):
            src = ex.name_of(Const(np.asarray(r), hint=f"out{i}_value"))
        else:
            raise OnnxExportError(f"{name}: output {i} is {type(r).__name__} {r!r}, not a tensor")
        ex.nodes.append(helper.make_node("Identity", [src], [out_name], name=f"output/out{i}"))
        dtype = snap.dtype if isinstance(snap, Shape) else np.asarray(snap).dtype
        shape = snap.shape if isinstance(snap, Shape) else np.asarray(snap).shape
        outputs.append(helper.make_tensor_value_info(
            out_name, helper.np_dtype_to_tensor_dtype(np.dtype(dtype)), list(shape)))
    value_info = [helper.make_tensor_value_info(t.name, helper.np_dtype_to_tensor_dtype(t.dtype),
                                                list(t.shape))
                  for t in ex.value_info.values() if t.name not in input_names]
    title = work.inputs[0].type.name if work.inputs and isinstance(work.inputs[0].type,
                                                                  ClassType) else "graph"
    onnx_graph = helper.make_graph(ex.nodes, title, graph_inputs, outputs, ex.initializers,
                                   value_info=value_info)
    model = helper.make_model(onnx_graph, producer_name="irjit", producer_version=_version(),
                              opset_imports=[helper.make_opsetid("", OPSET)],
                              doc_string=f"exported by irjit from {name}")
    model.ir_version = IR_VERSION
    if check:
        try:
            onnx.checker.check_model(model, full_check=True)
        except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as e:
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise OnnxExportError(f"{name}: the exported model fails onnx.checker: {first}") from None
    if path is not None:
        onnx.save(model, os.fspath(path))
    return model


def _version() -> str:
    try:
        from importlib.metadata import version
        return version("irjit")
    except Exception:  # noqa: BLE001  (a source checkout that was never installed)
        return "0"
