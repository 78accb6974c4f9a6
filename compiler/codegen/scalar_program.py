"""Scalar programs: a group graph of number-typed nodes (ops on int/float/bool with a rule in
ops/lowering_numbers.py, `prim::If`/`prim::Loop` over numbers, lists of numbers built, appended
to, sliced and joined there (scalar_program_lists.py) or passed in read-only, the autograd-zero
checks and metadata of tensor arguments) lowered to one LLVM function `i32 f(numbers, lists
and tensor objects..., outputs*)`: numbers and lists in, numbers and lists out, a status
returned (0: ran; non-zero: refused, the interpreter re-runs the program and raises what it
raises). scalar_program_unit.py compiles and calls it."""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
from llvmlite import ir

from irjit.compiler.ir import Block, Graph, Node, Value
from irjit.compiler.ir.constants import constant_value
from irjit.ops import facts
from irjit.ops.errors import IRTypeError
from irjit.ops.lowering_common import NotLowerable
from irjit.ops.lowering_numbers import PRIM_NUMBER_RULES, number_rule
from irjit.ops.registry import OpEntry, find_op, with_defaults
from irjit.ops.types import ListType, NamedType, OptionalType, TensorType

from .entry import ArrayGuards
from .kernel import Buffer
from .lower import tensor_layout
from .scalar_program_emit import F64, I1, I64, LLVM_TYPES, ListArg, Num, TensorArg
from .scalar_program_lists import ListVar, ListView, ProgramEmitter, capacity_bound, merged_view

I8, I32 = ir.IntType(8), ir.IntType(32)
STATUS_REFUSED = 1  # the program met what the interpreter raises on (or an int overflow)
_PARAM_TYPES = {"int": [I64], "float": [F64], "bool": [I8], "tensor": [ir.PointerType()],
                **{f"{k}[]": [ir.PointerType(), I64] for k in LLVM_TYPES}}


def number_kind(t: Any) -> Optional[str]:
    """"int", "float" or "bool" for those types, else None."""
    return t.name if isinstance(t, NamedType) and t.name in LLVM_TYPES else None


def _input_kind(t: Any) -> Optional[str]:
    """How a program takes an input: a number kind, "tensor", or "int[]"/"float[]"/"bool[]"
    (a read-only list, passed as its elements and length)."""
    kind = number_kind(t)
    if kind is not None:
        return kind
    if isinstance(t, TensorType) or isinstance(t, OptionalType) and isinstance(t.elem, TensorType):
        return "tensor"
    if isinstance(t, ListType) and number_kind(t.elem):
        return number_kind(t.elem) + "[]"
    return None


_SAMPLES = {"int": 0, "float": 0.0, "bool": False}


def _sample(v: Value) -> Any:
    """A run-time stand-in of `v` for overload resolution."""
    if v.node.kind == "prim::Constant":
        value = constant_value(v.node)
        return list(value) if isinstance(value, tuple) else value
    if _input_kind(v.type) in ("int[]", "float[]", "bool[]"):
        return [_SAMPLES[number_kind(v.type.elem)]]
    if _input_kind(v.type) == "tensor":
        return np.empty(0, np.float32)
    return _SAMPLES.get(number_kind(v.type), object())


def program_entry(node: Node) -> Optional[OpEntry]:
    """The overload a number node calls, or None."""
    try:
        return find_op(node.kind, [_sample(v) for v in node.inputs])
    except (IRTypeError, KeyError):
        return None


def number_list_kind(t: Any) -> Optional[str]:
    """"int[]", "float[]" or "bool[]" for those list types, else None."""
    return number_kind(t.elem) + "[]" if isinstance(t, ListType) and number_kind(t.elem) else None


def is_scalar_program(graph: Graph) -> bool:
    """Whether a group graph is a scalar program (tensor groups output only tensors)."""
    return bool(graph.outputs) and all(number_kind(v.type) or number_list_kind(v.type)
                                       for v in graph.outputs)


_LISTS = (list, ListArg, ListVar, ListView)


def _trips(node: Node, block: Block) -> Optional[int]:
    """How often `node` runs per run of `block` at most: the product of the constant trip
    counts of the loops around it (None when one is not constant)."""
    trips = 1
    while node.owning_block is not block:
        node = node.owning_block.owning_node
        if node.kind == "prim::Loop":
            bound = node.inputs[0].node
            value = constant_value(bound) if bound.kind == "prim::Constant" else None
            if not isinstance(value, int):
                return None
            trips *= max(value, 0)
    return trips


def _appended(v: Value) -> list[Node]:
    return [u.user for u in v.uses if u.user.kind == "aten::append" and u.offset == 0]


def _compatible(kind: str, declared: Optional[str]) -> bool:
    """Whether a value of `kind` may stand where the IR declares `declared` (the interpreter
    keeps bools where ints are declared, as in `int = prim::AutogradAnyNonZero(...)`)."""
    return kind == declared or (declared == "int" and kind == "bool")


class ProgramLowering:
    """Emits a group graph as a scalar program; raises NotLowerable for anything else."""

    def __init__(self, graph: Graph):
        self.graph = graph
        self.input_kinds = [_input_kind(v.type) for v in graph.inputs]
        for v, kind in zip(graph.inputs, self.input_kinds):
            if kind is None:
                raise NotLowerable(f"input %{v.name} of type {v.type} is not a number or tensor")
        self.output_kinds: list[str] = []
        self.output_capacities: list[Optional[int]] = []  # per list output, its most elements
        self.addresses: dict[str, int] = {}  # globals to fill in after loading (name -> address)

    def emit(self, module: ir.Module, name: str) -> ir.Function:
        out_types = []
        params = [t for k in self.input_kinds for t in _PARAM_TYPES[k]]
        fn = ir.Function(module, ir.FunctionType(I32, params + [ir.PointerType()]), name=name)
        allocas = fn.append_basic_block("allocas")  # the memory of the lists built here
        entry = fn.append_basic_block("entry")
        refuse = fn.append_basic_block("refuse")
        ir.IRBuilder(refuse).ret(ir.Constant(I32, STATUS_REFUSED))
        b = ir.IRBuilder(entry)
        guards = ArrayGuards(b, fn)
        e = ProgramEmitter(b, refuse, guards, allocas)
        env: dict[Value, Any] = {}
        args = iter(fn.args)
        for k, (v, kind) in enumerate(zip(self.graph.inputs, self.input_kinds)):
            arg = next(args)
            if kind == "tensor":
                layout = tensor_layout(v.type)
                env[v] = TensorArg(arg, Buffer(k, *layout, is_output=False) if layout else None)
            elif kind.endswith("[]"):
                env[v] = ListArg(arg, next(args), kind[:-2])
            else:
                env[v] = Num(b.icmp_unsigned("!=", arg, ir.Constant(I8, 0)) if kind == "bool" else arg, kind)
        self.lower_block(e, self.graph.block, env)
        self.addresses = guards.addresses
        results = [env[v] for v in self.graph.outputs]
        for v, r in zip(self.graph.outputs, results):
            if isinstance(r, _LISTS) and number_list_kind(v.type):
                out_types.append(ir.LiteralStructType([ir.PointerType(), I64]))
                continue
            if not isinstance(r, Num) or not _compatible(r.kind, number_kind(v.type)):
                raise NotLowerable(f"output %{v.name} is not a {v.type}")
            out_types.append(I8 if r.kind == "bool" else LLVM_TYPES[r.kind])
        struct = ir.LiteralStructType(out_types)
        for k, r in enumerate(results):
            slot = b.gep(fn.args[-1], [ir.Constant(I32, 0), ir.Constant(I32, k)], source_etype=struct)
            if isinstance(r, _LISTS):
                kind, capacity = e.write_out(r, slot)
                self.output_kinds.append(kind + "[]")
                self.output_capacities.append(capacity)
                continue
            b.store(b.zext(r.value, I8) if r.kind == "bool" else r.value, slot)
            self.output_kinds.append(r.kind)
            self.output_capacities.append(None)
        b.ret(ir.Constant(I32, 0))
        ir.IRBuilder(allocas).branch(entry)
        return fn

    def lower_block(self, e: ProgramEmitter, block: Block, env: dict) -> None:
        for node in block.nodes():
            self.lower_node(e, node, env)

    def lower_node(self, e: ProgramEmitter, node: Node, env: dict) -> None:
        if node.kind == "prim::Constant":
            value = constant_value(node)
            env[node.output] = e.const(value) if isinstance(value, (bool, int, float)) else value
            return
        if node.kind == "prim::If":
            return self.lower_if(e, node, env)
        if node.kind == "prim::Loop":
            return self.lower_loop(e, node, env)
        if node.blocks or len(node.outputs) != 1:
            raise NotLowerable(f"{node.kind} is not a number op")
        args = [env[v] for v in node.inputs]
        if node.kind == "prim::ListConstruct" and _appended(node.output):
            kind = number_kind(node.output.type.elem) if isinstance(node.output.type, ListType) else None
            if kind is None:
                raise NotLowerable("appends to a list that does not hold numbers")
            trips = [_trips(m, node.owning_block) for m in _appended(node.output)]
            env[node.output] = e.new_list(args, capacity_bound(trips, len(args)), kind)
            return
        if facts.has_tag(node.kind, "identity"):
            result = args[0]
        elif node.kind in PRIM_NUMBER_RULES:
            result = PRIM_NUMBER_RULES[node.kind](e, *args)
        else:
            entry = program_entry(node)
            rule = number_rule(entry) if entry is not None else None
            if rule is None:
                raise NotLowerable(f"{node.kind} has no scalar-program rule")
            result = rule(e, *with_defaults(entry, args))
        out = node.output
        if isinstance(result, _LISTS):
            if not isinstance(out.type, ListType):
                raise NotLowerable(f"{node.kind}: a list where {out.type} is declared")
        elif not isinstance(result, Num) or not _compatible(result.kind, number_kind(out.type)):
            raise NotLowerable(f"{node.kind}: result is not a {out.type}")
        env[out] = result

    def _merged_kinds(self, values: list, declared: list[Value]) -> list[str]:
        """Per output of a branch or loop, one kind for all incoming values: theirs when they
        agree, else the declared one."""
        kinds = []
        for k, v in enumerate(declared):
            kind = number_kind(v.type)
            incoming = {x[k].kind for x in values if isinstance(x[k], Num)}
            if kind is None or any(not isinstance(x[k], Num) for x in values):
                raise NotLowerable(f"control flow carries %{v.name} of type {v.type}")
            kinds.append(incoming.pop() if len(incoming) == 1 else kind)
        return kinds

    def _as_kind(self, e: ProgramEmitter, x: Num, kind: str) -> ir.Value:
        if x.kind == kind:
            return x.value
        if kind == "float":
            return e.to_float(x).value
        if kind == "int":
            return e.as_int(x).value
        raise NotLowerable(f"a {x.kind} where a bool is carried")

    def _appends_after(self, node: Node) -> bool:
        """Whether an `append` runs after `node` (outside it): a view of a list it yields
        would then miss the appended elements."""
        nodes = list(self.graph.walk())
        inside = set(node.walk())
        return any(m.kind == "aten::append" and m not in inside for m in nodes[nodes.index(node) + 1:])

    def lower_if(self, e: ProgramEmitter, node: Node, env: dict) -> None:
        b = e.b
        cond = e.to_bool(env[node.inputs[0]]).value
        arms = [b.append_basic_block("then"), b.append_basic_block("else")]
        merge = b.append_basic_block("endif")
        b.cbranch(cond, *arms)
        lists = {k for k, v in enumerate(node.outputs) if isinstance(v.type, ListType)}
        if lists and self._appends_after(node):
            raise NotLowerable("a list that a branch yields may be appended to later")
        numbers = [k for k in range(len(node.outputs)) if k not in lists]
        ends, results = [], []
        for block, bb in zip(node.blocks, arms):
            b.position_at_end(bb)
            self.lower_block(e, block, env)
            results.append([e.view(env[v]) if k in lists else env[v] for k, v in enumerate(block.outputs)])
            ends.append(b.block)
        kinds = self._merged_kinds([[r[k] for k in numbers] for r in results],
                                   [node.outputs[k] for k in numbers])
        incoming = []
        for end, values in zip(ends, results):
            b.position_at_end(end)
            incoming.append(([self._as_kind(e, values[k], kind) for k, kind in zip(numbers, kinds)], b.block))
            b.branch(merge)
        b.position_at_end(merge)
        for j, (k, kind) in enumerate(zip(numbers, kinds)):
            phi = b.phi(LLVM_TYPES[kind])
            for values, block in incoming:
                phi.add_incoming(values[j], block)
            env[node.outputs[k]] = Num(phi, kind)
        for k in sorted(lists):
            env[node.outputs[k]] = merged_view([r[k] for r in results], [blk for _, blk in incoming], b)

    def lower_loop(self, e: ProgramEmitter, node: Node, env: dict) -> None:
        """`prim::Loop(max_trip, cond, carried...)`: the body runs while cond holds and the
        iteration count is below max_trip; carried values are phis of the loop head."""
        b = e.b
        body = node.blocks[0]
        trip = e.as_int(env[node.inputs[0]]).value
        cond = e.to_bool(env[node.inputs[1]]).value
        initial = [env[v] for v in node.inputs[2:]]
        if any(not isinstance(x, Num) for x in initial):
            raise NotLowerable("a loop carries a value that is not a number")
        kinds = [number_kind(v.type) for v in node.outputs]
        if any(k is None or not _compatible(x.kind, k) for k, x in zip(kinds, initial)):
            raise NotLowerable("a loop carries a value that is not a number")
        start = [self._as_kind(e, x, k) for x, k in zip(initial, kinds)]
        before = b.block
        head = b.append_basic_block("loop_head")
        body_bb = b.append_basic_block("loop_body")
        exit_bb = b.append_basic_block("loop_exit")
        b.branch(head)
        b.position_at_end(head)
        i = b.phi(I64, name="trip")
        going = b.phi(I1, name="cond")
        carried = [b.phi(LLVM_TYPES[k]) for k in kinds]
        i.add_incoming(ir.Constant(I64, 0), before)
        going.add_incoming(cond, before)
        for phi, value in zip(carried, start):
            phi.add_incoming(value, before)
        b.cbranch(b.and_(going, b.icmp_signed("<", i, trip)), body_bb, exit_bb)
        b.position_at_end(body_bb)
        env[body.inputs[0]] = Num(i, "int")
        for param, phi, kind in zip(body.inputs[1:], carried, kinds):
            env[param] = Num(phi, kind)
        self.lower_block(e, body, env)
        again = e.to_bool(env[body.outputs[0]]).value
        nexts = [env[v] for v in body.outputs[1:]]
        if any(not isinstance(x, Num) or not _compatible(x.kind, k) for x, k in zip(nexts, kinds)):
            raise NotLowerable("a loop body carries a value that is not a number")
        nexts = [self._as_kind(e, x, k) for x, k in zip(nexts, kinds)]
        latch = b.block
        i.add_incoming(b.add(i, ir.Constant(I64, 1)), latch)  # i < trip <= INT64_MAX: no overflow
        going.add_incoming(again, latch)
        for phi, value in zip(carried, nexts):
            phi.add_incoming(value, latch)
        b.branch(head)
        b.position_at_end(exit_bb)
        for out, phi, kind in zip(node.outputs, carried, kinds):
            env[out] = Num(phi, kind)


def lowers_as_program(graph: Graph) -> bool:
    """Whether `graph` lowers to a scalar program (emitted into a scratch module, not compiled)."""
    try:
        ProgramLowering(graph).emit(ir.Module(name="trial"), "trial")
    except NotLowerable:
        return False
    return True
