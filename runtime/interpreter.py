"""The interpreter: runs a Graph on run-time values, node by node, in program order.

Each block is turned once into a list of steps (node, handler, input and output values);
running a block reads inputs from an environment, calls the handler and writes outputs.
Registered ops go through `autograd.call_op` (so the tape records them); the `prim::`
structure (constants, attributes, control flow, containers, guards, subgraphs) is handled
here. Any failure inside a node becomes one IRRuntimeError naming the node's kind and line.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from irjit.ops.enums import EnumMember
from irjit.ops.errors import IRRuntimeError, IRTypeError
from irjit.compiler.ir import Block, Graph, Node, TensorData, Value
from irjit.compiler.ir.constants import Device, constant_value
from irjit.ops.types import (SCALAR_TYPES, ClassType, ListType, NamedType, OptionalType,
                             TensorType, TupleType, Type)

from .autograd import call_op
from .module import Module
from irjit.ops import facts
from irjit.ops.registry import find_op
from .prims import PRIM_HANDLERS
from irjit.ops.tensor import Tensor


class FunctionRef:
    """The value of a `prim::Constant[name="f"]` of type Function."""

    def __init__(self, name: str, fallback: bool = False, node: Optional[Node] = None):
        self.name = name
        self.fallback = fallback
        self.node = node  # the constant that made it (fallback functions are found by it)

    def __repr__(self) -> str:
        return f"<function {self.name}>"


class _Step:
    __slots__ = ("node", "handler", "inputs", "outputs")

    def __init__(self, node: Node, handler: Callable, inputs: tuple, outputs: tuple):
        self.node = node
        self.handler = handler
        self.inputs = inputs
        self.outputs = outputs


class Interpreter:
    """Executes one graph. `constants` supplies tensor constants that print as `<Tensor>`
    (keyed by value name); `functions` maps names to graphs for `prim::CallFunction` and
    `"<class>.<method>"` to graphs for `prim::CallMethod`; executors pass the `bailout`,
    `fallback` and `subgraph_runner` hooks of an optimized plan."""

    def __init__(self, graph: Graph, constants: Optional[dict[str, np.ndarray]] = None,
                 functions: Optional[dict[str, Graph]] = None, filename: Optional[str] = None,
                 bailout: Optional[Callable] = None, fallback: Optional[Callable] = None,
                 subgraph_runner: Optional[Callable] = None):
        self.graph = graph
        self.constants = constants or {}
        self.functions = functions or {}
        self.filename = filename or getattr(graph, "source_filename", None) or "<graph>"
        self.bailout = bailout  # called by prim::BailOut / guards when a check fails
        self.fallback = fallback  # fallback(fn, args) runs a failed guard's `fallback_function`
        self.subgraph_runner = subgraph_runner  # runs DifferentiableGraph-like nodes
        self._programs: dict[int, list[_Step]] = {}
        self._full_programs: dict[int, list[_Step]] = {}  # every node, for run_block_from
        self._sub: dict[int, Interpreter] = {}

    # ---- entry points
    def run(self, inputs: list) -> list:
        """Run the graph on `inputs` (one per graph input) and return its outputs."""
        g = self.graph
        if len(inputs) != len(g.inputs):
            raise IRTypeError(f"{self.filename}: the graph takes {len(g.inputs)} inputs "
                              f"({', '.join('%' + v.name for v in g.inputs)}) but {len(inputs)} were given")
        for v, x in zip(g.inputs, inputs):
            check_input(v, x, self.filename)
        return self.run_block(g.block, list(inputs), {})

    def run_block(self, block: Block, args: list, env: dict) -> list:
        for v, x in zip(block.inputs, args):
            env[v] = x
        steps = self._programs.get(id(block))
        if steps is None:
            steps = self._programs[id(block)] = self._compile(block)
        return self._run_steps(block, steps, env)

    def run_block_from(self, block: Block, after: Node, env: dict) -> list:
        """Run the nodes of `block` that follow `after` (its values must already be in
        `env`): how execution continues in a bailout graph. Every node of the block runs
        (profile nodes too: `env` may hold a profile's output and not its input)."""
        steps = self._full_programs.get(id(block))
        if steps is None:
            steps = self._full_programs[id(block)] = self._compile(block, elide_profiles=False)
        start = next(i for i, s in enumerate(steps) if s.node is after) + 1
        return self._run_steps(block, steps[start:], env)

    def _run_steps(self, block: Block, steps: list, env: dict) -> list:
        step = None
        try:
            for step in steps:
                result = step.handler(self, step.node, [env[v] for v in step.inputs], env)
                outs = step.outputs
                if len(outs) == 1:
                    env[outs[0]] = result
                elif outs:
                    for v, r in zip(outs, result):
                        env[v] = r
        except (IRRuntimeError, _BailOut):
            raise
        except RecursionError:
            raise
        except Exception as e:  # noqa: BLE001 - every op failure becomes one located error
            raise self.node_error(step.node if step else None, e) from None
        return [env[v] for v in block.outputs]

    def node_error(self, node: Optional[Node], e: Exception) -> IRRuntimeError:
        if node is None:
            return IRRuntimeError(str(e))
        where = f"{self.filename}:{node.text_line}" if node.text_line else self.filename
        src = f" (from {node.source})" if node.source is not None else ""
        msg = str(e) if not isinstance(e, KeyError) else f"missing {e.args[0]!r}"
        msg = msg.strip().splitlines()[0] if msg.strip() else type(e).__name__
        err = IRRuntimeError(f"{where}: {node.kind}: {msg}{src}")
        err.node = node  # type: ignore[attr-defined]
        return err

    # Whether nodes that pass their input through (profile records, annotations) are left out
    # of step lists (a subclass that records profiles keeps them).
    elides_profiles = True

    def _compile(self, block: Block, elide_profiles: bool = True) -> list[_Step]:
        """The block's steps. A node that passes its input through (ops.facts "identity": a
        `prim::profile` outside a profiling run) whose output only this block's nodes read is
        left out, and they read its input (an optimized graph can run hundreds of profile nodes
        per call inside loops)."""
        alias: dict = {}
        if elide_profiles and self.elides_profiles:
            outputs = set(block.outputs)
            for n in block.nodes():
                if facts.has_tag(n.kind, "identity") and len(n.inputs) == 1 and len(n.outputs) == 1 and \
                        n.outputs[0] not in outputs and \
                        all(u.user.owning_block is block for u in n.outputs[0].uses):
                    alias[n.outputs[0]] = alias.get(n.inputs[0], n.inputs[0])
        steps = []
        for n in block.nodes():
            if alias and len(n.outputs) == 1 and n.outputs[0] in alias:
                continue
            handler = PRIM_HANDLERS.get(n.kind) or _run_registered_op
            inputs = tuple(alias.get(v, v) for v in n.inputs) if alias else tuple(n.inputs)
            steps.append(_Step(n, handler, inputs, tuple(n.outputs)))
        return steps

    def sub_interpreter(self, graph: Graph) -> "Interpreter":
        """An interpreter for a subgraph (DifferentiableGraph, FusionGroup, fork, callee)."""
        sub = self._sub.get(id(graph))
        if sub is None:
            sub = self._sub[id(graph)] = Interpreter(graph, self.constants, self.functions,
                                                     self.filename, self.bailout)
        return sub

    # ---- values held by nodes
    def constant(self, node: Node) -> Any:
        """The run-time value of a prim::Constant (tensor constants come from `constants`
        when the graph does not print their data)."""
        kind = node.attr_kind("value")
        t = node.outputs[0].type
        if kind == "t":
            name = node.outputs[0].name
            data: TensorData = node.attr("value")
            if name in self.constants:
                return Tensor(np.array(self.constants[name]))
            if data.array is None:
                raise IRRuntimeError(f"tensor constant %{name} is not printed in the graph "
                                     "(`<Tensor>`): pass its value in the constants file")
            return Tensor(data.array.copy())
        if t == NamedType("Function") or (kind == "s" and node.has_attr("name")) or \
                (kind is None and node.has_attr("name")):
            return FunctionRef(node.attr("name"), bool(node.attr("fallback", 0)), node)
        if kind == "ty" and isinstance(t, NamedType) and t.name.startswith("Enum<"):
            enum, _, member = str(node.attr("value")).rpartition(".")
            return EnumMember(enum, member)  # `value=__torch__.Color.RED`, read as a type name
        if kind == "ival":
            v = node.attr("value")
            return _tensors_unboxed(getattr(v, "value", v))
        v = constant_value(node)
        if kind == "ts" and v is None:
            raise IRRuntimeError(f"tensor list constant %{node.outputs[0].name} is not printed in "
                                 "the graph (`[<Tensors>]`)")
        if isinstance(v, tuple):
            return _tensors_unboxed(list(v))
        if kind == "s" and isinstance(t, NamedType) and t.name == "Device":
            return Device(v)
        return v


def _tensors_unboxed(value: Any) -> Any:
    """A list or tuple constant's tensors (`[<Tensors>]`, `(1, {2})`) as run-time Tensors."""
    if isinstance(value, TensorData):
        if value.array is None:
            raise IRRuntimeError("a tensor inside a constant is not printed in the graph (`<Tensor>`)")
        return Tensor(value.array.copy())
    if isinstance(value, list):
        return [_tensors_unboxed(x) for x in value]
    if isinstance(value, tuple):
        return tuple(_tensors_unboxed(x) for x in value)
    return value


class _BailOut(Exception):
    """Raised by a failing guard inside an optimized graph; the executor resumes elsewhere."""


def _run_registered_op(interp: Interpreter, node: Node, args: list, env: dict) -> Any:
    return call_op(find_op(node.kind, args), args, node.kind)


# ---- checking inputs against the graph's declared types

def _describe(x: Any) -> str:
    if isinstance(x, Tensor):
        return f"Tensor of dtype {x.dtype} and shape {list(x.shape)}"
    if isinstance(x, np.ndarray):
        return f"array of dtype {x.dtype} and shape {list(x.shape)}"
    return type(x).__name__


# scalar type name -> numpy dtype (comparing dtype objects is far cheaper than their names)
_SCALAR_DTYPES = {name: np.dtype(numpy) for name, numpy in SCALAR_TYPES.items() if numpy is not None}


def _accepts(t: Type, x: Any) -> bool:
    if isinstance(t, OptionalType):
        return x is None or _accepts(t.elem, x)
    if isinstance(t, TensorType):
        if not isinstance(x, Tensor):
            return False
        if t.scalar_type is not None:
            want = _SCALAR_DTYPES.get(t.scalar_type)
            if want is not None and x.dtype != want:
                return False
        return True
    if isinstance(t, NamedType):
        name = t.name
        if name == "int":
            return isinstance(x, int) and not isinstance(x, bool)
        if name == "float":
            return isinstance(x, (float, int)) and not isinstance(x, bool)
        if name == "bool":
            return isinstance(x, bool)
        if name in ("str", "string"):
            return isinstance(x, str)
        if name in ("NoneType", "None"):
            return x is None
        return True
    if isinstance(t, ListType):
        return isinstance(x, list) and all(_accepts(t.elem, e) for e in x)
    if isinstance(t, TupleType):
        return isinstance(x, tuple) and len(x) == len(t.elems) and all(
            _accepts(a, b) for a, b in zip(t.elems, x))
    if isinstance(t, ClassType):
        return isinstance(x, Module)
    return True


def check_input(v: Value, x: Any, filename: str) -> None:
    if not _accepts(v.type, x):
        raise IRTypeError(f"{filename}: input %{v.name} expects {v.type}, got {_describe(x)}")
