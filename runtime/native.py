"""Running graphs with native units: the first call with a new input layout is interpreted
while every tensor value is recorded (as the profiling executor profiles); a copy of the graph
with those complete types is partitioned into `prim::NativeGroup` units, which later calls
run natively (compiled on first use); a unit whose entry guards refuse the arguments runs
interpreted for that call (a bailout)."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Optional

from irjit.compiler.codegen.cache import get_unit
from irjit.compiler.codegen.partition import GROUP, native_partition
from irjit.compiler.ir import Graph, Node
from irjit.ops.tensor import Tensor
from irjit.ops.types import DTYPE_TO_SCALAR_TYPE, TensorType

from .autograd import is_grad_enabled
from .interpreter import Interpreter, check_input
from .prims import _results, prim


@dataclass
class NativeStats:
    """Per runner: units compiled or found cached, nodes inside units vs interpreted (static,
    over all specializations), compile time, cache hits and bailouts."""

    units: int = 0
    nodes_native: int = 0
    nodes_interpreted: int = 0
    compile_ms: float = 0.0
    cache_hits: int = 0
    bailouts: int = 0

    def line(self) -> str:
        return (f"native: units={self.units} nodes_native={self.nodes_native} "
                f"nodes_interpreted={self.nodes_interpreted} compile_ms={self.compile_ms:.1f} "
                f"cache_hits={self.cache_hits} bailouts={self.bailouts}")


def _tensor_type(x: Tensor) -> Optional[TensorType]:
    a = x.data
    name = DTYPE_TO_SCALAR_TYPE.get(str(a.dtype))
    if name is None:
        return None
    strides = tuple(s // a.itemsize for s in a.strides) if all(
        s % a.itemsize == 0 for s in a.strides) else None
    return TensorType(name, tuple(a.shape), strides, None, "cpu")


def _layout_key(inputs: list) -> tuple:
    return tuple((str(x.data.dtype), x.data.shape, x.data.strides) if isinstance(x, Tensor)
                 else type(x).__name__ for x in inputs)


def _count_nodes(graph: Graph) -> tuple[int, int]:
    """(nodes inside native groups, other nodes), constants and groups themselves not counted."""
    native = interpreted = 0
    for n in graph.walk():
        if n.kind == GROUP:
            native += sum(1 for m in n.attr("Subgraph").walk() if m.kind != "prim::Constant")
        elif n.kind != "prim::Constant" and not n.blocks:
            interpreted += 1
    return native, interpreted


class NativeRunner:
    """Runs one graph with native units: `run(inputs) -> outputs`. At most
    `max_specializations` input layouts get their own plan; others are interpreted."""

    def __init__(self, graph: Graph, constants: Optional[dict] = None,
                 functions: Optional[dict] = None, filename: Optional[str] = None,
                 max_specializations: int = 8):
        self.graph = graph
        self.constants = constants
        self.functions = functions
        self.filename = filename
        self.max_specializations = max_specializations
        self.stats = NativeStats()
        self._plans: dict[tuple, Interpreter] = {}
        self._generic: Optional[Interpreter] = None
        self._units: dict[int, tuple] = {}  # id(group node) -> (unit or None, node)
        self._lock = threading.Lock()

    def run(self, inputs: list) -> list:
        key = _layout_key(inputs)
        interp = self._plans.get(key)
        if interp is None:
            with self._lock:
                interp = self._plans.get(key)
                if interp is None:
                    return self._profile_and_specialize(key, list(inputs))
        return interp.run(list(inputs))

    def _profile_and_specialize(self, key: tuple, inputs: list) -> list:
        """Interpret this call while recording every tensor value, then give the graph's
        values those complete types and partition it (guards check them on later calls)."""
        if len(self._plans) >= self.max_specializations or len(inputs) != len(self.graph.inputs):
            if self._generic is None:
                self._generic = self._interpreter(self.graph)
            return self._generic.run(inputs)
        g = self.graph.copy()
        for v, x in zip(g.inputs, inputs):
            check_input(v, x, self.filename or "<graph>")
        env: dict = {}
        outputs = self._interpreter(g).run_block(g.block, list(inputs), env)
        for v, x in env.items():
            if isinstance(x, Tensor) and isinstance(v.type, TensorType):
                t = _tensor_type(x)
                if t is not None:
                    v.type = t.with_(requires_grad=v.type.requires_grad)
        native_partition(g)
        native, interpreted = _count_nodes(g)
        self.stats.nodes_native += native
        self.stats.nodes_interpreted += interpreted
        self._plans[key] = self._interpreter(g)
        return outputs

    def _interpreter(self, graph: Graph) -> Interpreter:
        interp = Interpreter(graph, self.constants, self.functions, self.filename)
        interp.subgraph_runner = self.run_subgraph
        return interp

    def unit_of(self, node: Node):
        """The compiled unit of a NativeGroup node (compiled or found cached on first use)."""
        found = self._units.get(id(node))
        if found is None:
            with self._lock:
                found = self._units.get(id(node))
                if found is None:
                    unit, hit = get_unit(node.attr("Subgraph"))
                    self.stats.units += 1
                    if hit:
                        self.stats.cache_hits += 1
                    elif unit is not None:
                        self.stats.compile_ms += unit.compile_ms
                    found = self._units[id(node)] = (unit, node)
        return found[0]

    def run_subgraph(self, interp: Interpreter, node: Node, args: list) -> list:
        sub = node.attr("Subgraph")
        if node.kind != GROUP or (is_grad_enabled() and any(
                isinstance(a, Tensor) and a.requires_grad for a in args)):
            return interp.sub_interpreter(sub).run(args)
        unit = self.unit_of(node)
        if unit is None:
            return interp.sub_interpreter(sub).run(args)
        status, outs = unit.call([a.data if isinstance(a, Tensor) else a for a in args])
        if status:
            self.stats.bailouts += 1
            return interp.sub_interpreter(sub).run(args)
        return [Tensor(o) for o in outs]


@prim(GROUP)
def _native_group(interp, node, args, env):
    """Without a native runner (a plain interpreter), a group's subgraph is interpreted."""
    runner = interp.subgraph_runner
    if runner is not None:
        return _results(node, runner(interp, node, list(args)))
    return _results(node, interp.sub_interpreter(node.attr("Subgraph")).run(list(args)))
