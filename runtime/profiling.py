"""Run a graph instrumented with `prim::profile` nodes and record what flows through them, as
PyTorch's ProfilingRecord does: each profile node's `profiled_type` becomes the observed
tensor type (`Float(1, 3, 8, 8, strides=[192, 64, 8, 1], requires_grad=1, device=cpu)`),
merged across runs (differing sizes become `*`), and `seen_none` notes a None."""

from __future__ import annotations

from typing import Any, Optional
from weakref import WeakSet

from irjit.compiler.ir import Graph, Node
from irjit.ops.types import DTYPE_TO_SCALAR_TYPE, TensorType, merge_profiled

from .autograd import is_grad_enabled
from .interpreter import Interpreter, _Step
from irjit.ops.tensor import Tensor

_observed: "WeakSet[Node]" = WeakSet()  # profile nodes that have seen at least one tensor


def observed_type(x: Tensor) -> TensorType:
    """The complete type PyTorch's profiler records for a run-time tensor."""
    data = x.data
    item = data.itemsize or 1
    return TensorType(DTYPE_TO_SCALAR_TYPE.get(str(data.dtype)), tuple(int(s) for s in data.shape),
                      tuple(int(s) // item for s in data.strides),
                      bool(x.requires_grad) and is_grad_enabled(), "cpu", False)


def record(node: Node, value: Any) -> None:
    """Fold one observation of `value` into the profile node's attributes."""
    if value is None:
        node.set_attr("seen_none", "i", 1)
        return
    if not isinstance(value, Tensor):
        return
    t = observed_type(value)
    if node in _observed:
        t = merge_profiled(node.attr("profiled_type"), t)
    _observed.add(node)
    node.set_attr("profiled_type", "ty", t)
    if not node.has_attr("seen_none"):
        node.set_attr("seen_none", "i", 0)


def _profile(interp, node: Node, args, env):
    if not args:
        return None
    record(node, args[0])
    return args[0]


class ProfilingInterpreter(Interpreter):
    """An Interpreter whose `prim::profile` nodes record the values they see."""

    elides_profiles = False

    def _compile(self, block, elide_profiles: bool = False):
        steps = super()._compile(block)
        return [_Step(s.node, _profile, s.inputs, s.outputs) if s.node.kind == "prim::profile"
                else s for s in steps]

    def sub_interpreter(self, graph: Graph) -> "Interpreter":
        sub = self._sub.get(id(graph))
        if sub is None:
            sub = self._sub[id(graph)] = ProfilingInterpreter(
                graph, self.constants, self.functions, self.filename, self.bailout)
        return sub


def record_profile(graph: Graph, inputs: list, runs: int = 1,
                   functions: Optional[dict] = None) -> list:
    """Instrument `graph` (unless it already has prim::profile nodes), run it `runs` times on
    `inputs` recording observed types into the profile nodes, and return the last outputs."""
    from irjit.compiler.passes.insert_profiling import is_instrumented, run as instrument
    if not is_instrumented(graph):
        instrument(graph)
    interp = ProfilingInterpreter(graph, functions=functions)
    out: list = []
    for _ in range(runs):
        out = interp.run(list(inputs))
    return out

