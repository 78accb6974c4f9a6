"""Running graphs with native units: the first call with a new input layout is interpreted
while every tensor value is recorded (as the profiling executor profiles); a copy of the graph
with those complete types is partitioned into `prim::NativeGroup` units, which later calls
run natively (compiled on first use); a unit whose entry guards refuse the arguments runs
interpreted for that call (a bailout)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, fields
from typing import Any, Callable, Optional, Sequence

from irjit.compiler.codegen.cache import get_unit
from irjit.compiler.codegen.decompose import decompose_for_native
from irjit.compiler.codegen.partition import GROUP, native_partition
from irjit.compiler.ir import Graph, Node
from irjit.ops.tensor import Tensor
from irjit.ops.types import OptionalType, TensorType

from .autograd import is_grad_enabled
from .executor.counters import COUNTERS
from .executor.plan import RunnerContext, register_backend
from .interpreter import FunctionRef, Interpreter, check_input
from .module import Module
from .native_autograd import GroupGradients
from .native_keyed_values import fold_keyed_values
from .native_plan import StraightPlan, plan_for, share_view_bases
from .native_select_sums import stack_select_sums
from .native_specialization import (attribute_reads, helper_calls, inline_autodiff_helpers,
                                    is_dtype_code, is_size_list, isolate_input_views, prepare_copy,
                                    sink_views, sizing_attributes, specialize_shapes, tensor_type,
                                    transpose_products, hoist_loop_products, views_an_input)
from .native_whole_gradient import gradient_plan, requires_grad_flags, unrolled, unrolls
from .prims import _results, prim


@dataclass
class NativeStats:
    """Per runner: units compiled or found cached (in memory or on disk), op nodes inside
    units vs interpreted (over all specializations), compile time, cache hits and bailouts."""

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

    def add(self, **deltas) -> None:
        for name, delta in deltas.items():
            setattr(self, name, getattr(self, name) + delta)

    def since(self, earlier: "NativeStats") -> "NativeStats":
        return NativeStats(**{f.name: getattr(self, f.name) - getattr(earlier, f.name)
                              for f in fields(NativeStats)})

    def copy(self) -> "NativeStats":
        return NativeStats(**{f.name: getattr(self, f.name) for f in fields(NativeStats)})


# NativeStats fields -> the executor COUNTERS that sum them
_COUNTER_NAMES = {"units": "native_units", "nodes_native": "native_nodes",
                  "nodes_interpreted": "interpreted_nodes", "compile_ms": "native_compile_ms",
                  "cache_hits": "native_cache_hits", "bailouts": "native_bailouts"}
TOTALS = NativeStats()  # over every runner of the process (irtool run --stats reports a delta)


def _value_key(x: Any):
    return ((x.data.dtype, x.data.shape, x.data.strides) if isinstance(x, Tensor)
            else ("int[]", tuple(x)) if is_size_list(x) else ("bool", x) if type(x) is bool
            else type(x).__name__)


def _attribute_key(x: Any, by_value: bool):
    """A module attribute's key: as an input's, and an int that sizes a list by value too
    (`by_value`, see `sizing_attributes`: a head count, whose reshapes then become views)."""
    return ("int", x) if by_value and type(x) is int else _value_key(x)


def _needs_gradients(inputs: list) -> bool:
    """A call under grad mode with a tensor input that requires grad."""
    return is_grad_enabled() and any(isinstance(x, Tensor) and x.requires_grad for x in inputs)


def _layout_key(inputs: list, attributes: list, dtype_codes: frozenset = frozenset(),
                sizing: frozenset = frozenset()) -> tuple:
    """Tensors by dtype, shape and strides; int lists (sizes, such as the `_size_if_not_equal`
    results a forward graph hands its backward graph), bools (such as batch norm's
    `training`) and the ints at positions `dtype_codes` (`is_dtype_code`) by value; anything
    else by type; the same for the module attributes the graph reads (`attributes`: input
    position and path), the ints among them that size lists (`sizing`) by value."""
    key = tuple(("dtype", x) if i in dtype_codes and type(x) is int else _value_key(x)
                for i, x in enumerate(inputs))
    if not attributes:
        return key
    return key + tuple(_attribute_key(_attribute_value(inputs, i, path), (i, path) in sizing)
                       for i, path in attributes)


def _attribute_value(inputs: list, i: int, path: tuple) -> Any:
    """The module attribute at `path` of input `i` (None when there is none)."""
    obj = inputs[i] if i < len(inputs) else None
    for name in path:
        obj = obj.get(name, None) if isinstance(obj, Module) else None
    return obj


def _same_layout(t: TensorType, x: Tensor) -> bool:
    seen = tensor_type(x)
    return seen is not None and (seen.scalar_type, seen.sizes, seen.strides) == (
        t.scalar_type, t.complete_sizes(), tuple(t.strides) if t.strides is not None else None)


def _types_complete(graph: Graph, inputs: list) -> bool:
    """Whether every tensor value of the graph has a complete type (dtype, sizes, strides)
    and the tensor inputs have exactly those layouts: then nothing needs profiling."""
    values = list(graph.inputs) + [o for n in graph.walk() for o in n.outputs]
    if any(isinstance(v.type, TensorType) and (
            v.type.scalar_type is None or v.type.complete_sizes() is None or v.type.strides is None
            or any(s is None for s in v.type.strides)) for v in values):
        return False
    return all(not isinstance(v.type, TensorType) or (isinstance(x, Tensor) and _same_layout(v.type, x))
               for v, x in zip(graph.inputs, inputs))


def _count_nodes(graph: Graph) -> tuple[int, int]:
    """(op nodes inside native groups, op nodes left to the interpreter); `prim::` structure
    (constants, guards, control flow, containers) is not counted."""
    native = interpreted = 0
    for n in graph.walk():
        if n.kind == GROUP:
            native += sum(1 for m in n.attr("Subgraph").walk() if not m.kind.startswith("prim::"))
        elif not n.kind.startswith("prim::"):
            interpreted += 1
    return native, interpreted


class NativeRunner:
    """Runs one graph with native units: `run(inputs) -> outputs`. At most
    `max_specializations` input layouts get their own plan; others are interpreted."""

    def __init__(self, graph: Graph, constants: Optional[dict] = None,
                 functions: Optional[dict] = None, filename: Optional[str] = None,
                 max_specializations: int = 8, context=None, unroll: bool = False):
        self.graph = graph
        self.constants = constants
        self.functions = functions
        self.context = context  # an execution plan's RunnerContext (hooks), if any
        self._originals: dict[int, Node] = {}  # id(copied node) -> node of `graph`
        self.filename = filename
        self.max_specializations = max_specializations
        self.stats = NativeStats()
        self._plans: dict[tuple, Any] = {}  # layout key -> its plan (a StraightPlan or Interpreter)
        self._generic: Optional[Interpreter] = None
        self._units: dict[int, tuple] = {}  # id(group node) -> (unit or None, node)
        self.lock = threading.RLock()  # a unit compiles (under the lock) while a plan is made
        self._gradients = GroupGradients(lambda g: NativeRunner(g, constants, functions, filename),
                                         lambda node: self.unit_of(node))
        self.attributes = sorted(set(attribute_reads(graph).values()))  # keyed like inputs
        self._sizing = sizing_attributes(graph)  # (ints among them keyed by value)
        self._dtype_codes = frozenset(i for i, v in enumerate(graph.inputs) if is_dtype_code(v))
        self._last: Optional[StraightPlan] = None  # the plan of the latest call, tried first
        # a graph that views an input (x[i]) gets other plans for calls that need gradients
        # (`isolate_input_views`): the key says which a call is, and so does `_last_grad`
        self._grad_keyed = views_an_input(graph)
        self._last_grad = False
        # `unroll` (irjit.compile's): calls that need gradients unroll constant-trip loops
        # and differentiate the graph as a whole (`native_whole_gradient`), keyed also by
        # their inputs' requires-grad flags
        self._unrolls = unroll and unrolls(graph)
        self._grad_keyed |= self._unrolls

    value_key = staticmethod(_value_key)
    # `run_arrays(arrays, raw=True)` of the latest call's plan without its lookups (None when
    # that plan is for gradients or has no array program): set by `run`
    raw_arrays: Optional[Callable] = None
    # the training program (every input requiring grad) of the plan of the latest training
    # call `train_arrays` took, tried first (it checks the arrays itself): set by `train_arrays`
    train_program: Optional[Callable] = None

    def run_arrays(self, arrays: Sequence, raw: bool = False) -> Optional[list]:
        """The outputs of a call without gradients whose tensor inputs are numpy arrays, when
        the latest call's plan takes them as they are (`StraightPlan.run_arrays`); else None
        (then wrap them in Tensors and `run`)."""
        last = self._last
        return last.run_arrays(arrays, raw) if last is not None and not self._last_grad else None

    def train_arrays(self, arrays: Sequence, flags: Optional[tuple[bool, ...]] = None,
                     copy: Optional[bool] = True) -> Optional[tuple[list, list]]:
        """The outputs and the Tensors of the arrays (two lists) of a training call (numpy
        arrays, grad mode on, every input a floating-point tensor, requiring grad as `flags`
        say: default all; `copy=False`: the arrays of the caller's Tensors, not copied;
        `copy=None`: those Tensors, none requiring grad) when the latest call's plan is one
        for gradients and takes them (`StraightPlan.train_arrays`); else None (then copy them
        into Tensors and `run`)."""
        program = self.train_program
        if program is not None and flags is None:
            got = program(arrays, copy)
            if got is not None:
                return got
        last = self._last
        if last is None or self._last_grad is not self._grad_keyed:
            return None
        got = last.train_arrays(arrays, flags, copy)
        if got is not None and flags is None:
            self.train_program = last.train_programs.get(None)
        return got

    def run(self, inputs: list) -> list:
        last = self._last
        grad = self._grad_keyed and _needs_gradients(inputs)
        if last is not None and grad is self._last_grad:
            # the last plan's program checks the inputs (natively, mostly)
            outs = last.try_run(inputs)
            if outs is not None:
                return outs
        key = _layout_key(inputs, self.attributes, self._dtype_codes, self._sizing)
        if self._grad_keyed:
            key += (grad, requires_grad_flags(inputs)) if grad and self._unrolls else (grad,)
        plan = self._plans.get(key)
        if plan is None:
            with self.lock:
                plan = self._plans.get(key)
                if plan is None:
                    return self._profile_and_specialize(key, list(inputs), grad)
        if isinstance(plan, StraightPlan):  # (its programs check inputs and attributes)
            self._last, self._last_grad = plan, grad
            outs = plan.run(list(inputs))
            self.raw_arrays = None if grad else plan.raw_call  # (made by its first run)
            return outs
        return plan.run(list(inputs))

    def _profile_and_specialize(self, key: tuple, inputs: list, grad: bool = False) -> list:
        """Specialize the graph for this input layout: when its types already say every
        tensor's layout and the inputs match them (the profiling executor's optimized graphs),
        compile for this call; else interpret it while recording every tensor value, give the
        graph's values those complete types, and specialize for the calls after it."""
        if len(self._plans) >= self.max_specializations or len(inputs) != len(self.graph.inputs):
            if self._generic is None:
                self._generic = self._interpreter(self.graph)
            return self._generic.run(inputs)
        g = self.graph.copy()
        for old, new in zip(self.graph.walk(), g.walk()):
            self._originals[id(new)] = old
        prepare_copy(g, inputs, self.functions)
        whole = unrolled(g.copy()) if grad and self._unrolls else None
        if whole is not None:
            g = whole
        for v, x in zip(g.inputs, inputs):
            check_input(v, x, self.filename or "<graph>")
        # (the matmul helpers' calls are inlined after profiling, typed by it: never typed yet)
        helpers = bool(helper_calls(g, self.functions))
        typed = not helpers and _types_complete(g, inputs)
        keyed = frozenset(attribute_reads(g))
        outputs = None
        env: Optional[dict] = None
        if not typed:
            env = {}
            outputs = self._interpreter(g).run_block(g.block, list(inputs), env)
            keyed_optionals = keyed | set(g.inputs)  # whether they hold None is in the key
            for v, x in env.items():
                if isinstance(x, Tensor) and (isinstance(v.type, TensorType) or (
                        v in keyed_optionals and isinstance(v.type, OptionalType)
                        and isinstance(v.type.elem, TensorType))):
                    t = tensor_type(x)
                    if t is not None:
                        v.type = t.with_(requires_grad=getattr(v.type, "requires_grad", None)
                                         if isinstance(v.type, TensorType) else None)
        if helpers:
            inline_autodiff_helpers(g, self.functions, env)
        fold_keyed_values(g, inputs, self._sizing)
        specialize_shapes(g, inputs, keyed)
        stack_select_sums(g)
        if whole is not None:
            plan = gradient_plan(g, inputs, self._gradients.make_runner)
            if plan is not None:
                self._plans[key] = plan
                return plan.run(list(inputs)) if outputs is None else outputs
        hoist_loop_products(g)
        transpose_products(g)
        sink_views(g)
        if grad:
            isolate_input_views(g, inputs)
        decompose_for_native(g, grad_enabled=is_grad_enabled())
        transpose_products(g)  # (of the products decompositions make: linear_backward's)
        native_partition(g)
        native, interpreted = _count_nodes(g)
        self._count(nodes_native=native, nodes_interpreted=interpreted)
        plan = self._plans[key] = plan_for(self, g, self._interpreter(g), key)
        return plan.run(list(inputs)) if outputs is None else outputs

    def count_bailout(self) -> None:
        self._count(bailouts=1)

    def _count(self, **deltas) -> None:
        self.stats.add(**deltas)
        TOTALS.add(**deltas)
        for name, delta in deltas.items():
            COUNTERS.inc(_COUNTER_NAMES[name], delta)

    def _interpreter(self, graph: Graph) -> Interpreter:
        ctx = self.context
        return Interpreter(graph, self.constants, self.functions, self.filename,
                           bailout=ctx.bailout if ctx else None,
                           fallback=self._fallback if ctx and ctx.fallback else None,
                           subgraph_runner=self.run_subgraph)

    def _fallback(self, fn, args: list) -> list:
        """The plan's fallback hook, given the function constant of the original graph."""
        original = self._originals.get(id(getattr(fn, "node", None)))
        if original is not None:
            fn = FunctionRef(fn.name, fn.fallback, original)
        return self.context.fallback(fn, args)

    def unit_of(self, node: Node):
        """The compiled unit of a NativeGroup node (compiled or found cached on first use)."""
        found = self._units.get(id(node))
        if found is None:
            with self.lock:
                found = self._units.get(id(node))
                if found is None:
                    unit, hit = get_unit(node.attr("Subgraph"))
                    from_disk = unit is not None and unit.library is not None and unit.library.from_disk
                    self._count(units=1, cache_hits=int(hit or from_disk),
                                compile_ms=unit.compile_ms if unit is not None and not hit else 0.0)
                    found = self._units[id(node)] = (unit, node)
        return found[0]

    def decisions(self, node: Node) -> dict:
        """How the group runs under grad mode, by its arguments' requires-grad flags."""
        return self._gradients.decisions(node)

    def decided(self, node: Node, flags: tuple[bool, ...]) -> Any:
        """How the group runs under grad mode for arguments of these requires-grad flags."""
        return self._gradients.decided(node, flags)

    def subgraph_op(self, node: Node) -> Optional[Any]:
        """What `run_subgraph` calls for a DifferentiableGraph node (the plan's op), if the
        runner's plan gives it; None for native groups and other subgraph nodes."""
        ctx = self.context
        if node.kind == GROUP or ctx is None or ctx.subgraph_op is None:
            return None
        return ctx.subgraph_op(node)

    def run_subgraph(self, interp: Interpreter, node: Node, args: list) -> list:
        sub = node.attr("Subgraph")
        if node.kind != GROUP and self.context is not None:
            return self.context.run_subgraph(interp, node, args)
        if node.kind != GROUP:
            return interp.sub_interpreter(sub).run(args)
        if is_grad_enabled():
            op = self._gradients.for_call(node, args)
            if op is not None:  # f and df run natively; the tape records df
                return op(args) if op is not False else _interpreted(interp, sub, args)
        unit = self.unit_of(node)
        if unit is None:
            return _interpreted(interp, sub, args)
        status, outs = unit.call([a.data if isinstance(a, Tensor) else a for a in args])
        if status:
            self._count(bailouts=1)
            return _interpreted(interp, sub, args)
        return _wrap_outputs(outs, args, getattr(unit, "aliases", None))


def _wrap_outputs(outs: list, args: list, aliases: Optional[list]) -> list:
    """A unit's outputs as run-time values: a view of an input (or of another output) shares
    that tensor's version counter and base, as the interpreter's views do."""
    results = [o if isinstance(o, (bool, int, float, list)) else Tensor(o) for o in outs]
    if aliases:
        share_view_bases(results, args, aliases)
    return results


def _interpreted(interp: Interpreter, sub: Graph, args: list) -> list:
    """A group's subgraph interpreted for a call its unit cannot run: the subgraph's input
    types are the plan's specialization, which such a call need not match (a tensor cast to a
    dtype that a number argument gives), so they are not checked."""
    return interp.sub_interpreter(sub).run_block(sub.block, list(args), {})


@prim(GROUP)
def _native_group(interp, node, args, env):
    """Without a native runner (a plain interpreter), a group's subgraph is interpreted."""
    runner = interp.subgraph_runner
    if runner is not None:
        return _results(node, runner(interp, node, list(args)))
    return _results(node, interp.sub_interpreter(node.attr("Subgraph")).run(list(args)))


def native_runner(ctx: RunnerContext) -> NativeRunner:
    """The "native" backend of execution plans (`set_backend("native")`, IRJIT_BACKEND=native):
    calls that need gradients unroll constant-trip loops of DifferentiableGraphs and
    differentiate the graph as a whole, as `compile` does (`native_whole_gradient`)."""
    return NativeRunner(ctx.graph, None, ctx.functions, ctx.filename, context=ctx, unroll=True)


register_backend("native", native_runner)


def compile(source, input_types=None, params=None, constants=None, functions=None):
    """A Function (numpy in, numpy out; `run`, `backward` as `irjit.load`'s) whose graph runs
    with native units. `input_types` ("Float(2, 3), int" or a list of types) declares the
    inputs' types up front; calls whose tensors differ are specialized again (or, past the
    limit, interpreted), never run with the wrong layout. Calls that need gradients unroll
    loops of a few constant trips and differentiate the graph as a whole when they can
    (`native_whole_gradient`); calls without gradients keep the loops."""
    from irjit.compiler.passes.specialize_input_types import (InputTypeError, parse_input_types,
                                                             specialize_input_types)
    from .loader import load
    fn = load(source, params, constants, functions)
    interp = fn.interpreter
    if input_types is not None:
        types = parse_input_types(input_types) if isinstance(input_types, str) else list(input_types)
        try:
            specialize_input_types(interp.graph, types)
        except InputTypeError as e:
            raise ValueError(f"input_types: {e}") from None
    fn.interpreter = NativeRunner(interp.graph, interp.constants, interp.functions, interp.filename,
                                  unroll=True)
    return fn
