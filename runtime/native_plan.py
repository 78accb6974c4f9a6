"""Straight plans: a specialized graph made only of native groups, constants, pure `prim::`
nodes (tuples, lists), the profiling executor's requires-grad guards, DifferentiableGraphs and
branches runs as a program of unit calls instead of through the interpreter (a branch that is
not made of those runs interpreted). What a call would otherwise recompute is fixed when the
plan is made: the slot of every value, which tensors travel as bare arrays, the constants,
and the arrays of the intermediates, which come from a per-plan arena and are reused by the
next call."""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence, Union

from irjit.compiler.codegen.partition import GROUP
from irjit.compiler.ir import Graph, Node, Value
from irjit.ops import facts
from irjit.ops.prims import PURE_PRIMS
from irjit.ops.tensor import Tensor
from irjit.ops.types import NamedType, OptionalType, TensorType

from .interpreter import Interpreter
from .prims import PRIM_HANDLERS

from .native_program import ARRAY, TENSOR, VALUE, array_program, plan_program, train_program


MAX_TRAIN_PROGRAMS = 8  # requires-grad patterns a plan makes training programs for


def _is_straight_node(n: Node) -> bool:
    # besides groups, constants and pure prims: the profiling executor's requires-grad guard,
    # DifferentiableGraphs (a backward graph's fallback, ...) through the plan's run_subgraph,
    # and module attribute reads (a module's parameters and submodules)
    if n.kind in ("prim::RequiresGradCheck", "prim::GetAttr") or facts.has_tag(n.kind, "subgraph"):
        return True
    return not n.blocks and (n.kind == GROUP or n.kind == "prim::Constant" or (
        n.kind.startswith("prim::") and n.kind in PURE_PRIMS))


def _is_straight_block(block) -> bool:
    return all(_is_straight_node(n) or _is_branch(n) or _is_loop(n) for n in block.nodes())


def _is_loop(n: Node) -> bool:
    """A `prim::Loop` whose body a straight plan runs as steps."""
    return n.kind == "prim::Loop" and _is_straight_block(n.blocks[0])


def _is_branch(n: Node) -> bool:
    """A `prim::If` a straight plan runs: a branch that is straight itself runs as steps, the
    other one by the interpreter."""
    return n.kind == "prim::If" and len(n.blocks) == 2


def is_straight(graph: Graph) -> bool:
    """Whether a straight plan can run `graph`: every node a native group, a constant, a pure
    `prim::` node, an attribute read, a guard or a DifferentiableGraph, a `prim::If`, or a
    `prim::Loop` whose body is made of those."""
    return _is_straight_block(graph.block)


def _proven_by_key(t) -> bool:
    """Whether a runner's layout key decides if a value fits type `t` (tensors by dtype, the
    rest by Python type): lists and tuples need their elements checked."""
    if isinstance(t, OptionalType):
        t = t.elem
    return isinstance(t, (TensorType, NamedType))


def _needs_grad(x: Any) -> bool:
    if isinstance(x, Tensor):
        return x.requires_grad
    return isinstance(x, (list, tuple)) and any(_needs_grad(e) for e in x)


class _GroupStep:
    """One native group of the plan: its argument slots (and how each holds its value), its
    output slots, and the buffers of its unit the arena provides (private scratch and
    outputs only later groups read) at `arena_index` of a call's arena."""

    def __init__(self, node: Node, args: list[tuple[int, int]], outs: list[tuple[int, int]]):
        self.node = node
        self.args = args
        self.outs = outs
        self.unit: Any = None
        self.arena_positions: tuple[int, ...] = ()
        self.arena_index = 0


class _LoopStep:
    """A `prim::Loop` with a straight body: the slots of its trip count, condition and
    initial carried values, of the body's inputs (the iteration, the carried values), the
    body's steps and the slots of its results (the condition, the carried values), and the
    loop's output slots."""

    def __init__(self, node: Node, trips: int, cond: int, initial: list[int], outs: list[int]):
        self.node, self.trips, self.cond, self.initial, self.outs = node, trips, cond, initial, outs
        self.body_inputs: list[int] = []
        self.body: list = []
        self.results: list[int] = []


class _BranchStep:
    """A `prim::If`: per branch, its steps (None: the interpreter runs that block, given the
    outer values it reads, `reads`), the slots of the branch's results, and the If's slots."""

    def __init__(self, node: Node, cond: int, outs: list[int]):
        self.node = node
        self.cond = cond
        self.outs = outs
        self.branches: list[tuple[Optional[list], list[int], list[tuple[Value, int]]]] = []


def _outer_reads(block) -> list[Value]:
    """The values defined outside `block` that its nodes (nested ones too) or results read."""
    defined = set(block.inputs)
    read: dict[Value, None] = {}
    nodes = [m for n in block.nodes() for m in [n, *n.walk()]]
    for m in nodes:
        defined.update(m.outputs)
        for b in m.blocks:
            defined.update(b.inputs)
    for v in [v for m in nodes for v in m.inputs] + [v for m in nodes for b in m.blocks
                                                       for v in b.outputs] + list(block.outputs):
        if v not in defined:
            read.setdefault(v)
    return list(read)


class StraightPlan:
    """Runs a straight graph (see `is_straight`) for one input layout: `run(inputs)` for
    inputs the runner's key matched, `try_run(inputs)` for any (it checks them). Both run the
    plan's program (`native_program`): one for calls without gradients, one for calls whose
    inputs require grad under grad mode; a unit that refuses its arguments (a bailout) runs
    interpreted for that call."""

    def __init__(self, runner, graph: Graph, interpreter: Interpreter, key: Optional[tuple] = None):
        self.runner = runner  # the NativeRunner: compiles units, counts bailouts
        self.graph = graph
        self.key = key  # the runner's layout key of the inputs this plan was made for
        self.interpreter = interpreter  # for bailouts and interpreted blocks
        self._steps: Optional[list] = None  # made on the first run (units compile then)
        self._program = None  # the steps as one generated function (see native_program)
        self._array_program = None  # the same for the caller's arrays without grad, if it may
        self._raw_program = None  # the same, returning arrays (for native groups' ops)
        # per requires-grad flags of the inputs (None: all), the program for training calls of
        # the caller's arrays, or None when there is none (made on the first such call)
        self.train_programs: dict[Optional[tuple], Any] = {}
        # the programs, made with them (`_caller` gives the first two an arena; the array
        # programs take theirs themselves): `raw_call(arrays)` is `run_arrays(arrays, raw=True)`
        self._call_keyed = self._call_tried = self._array_call = self.raw_call = None
        self._built: Optional[tuple] = None  # (steps, tail, outputs) once the steps are made
        self._interpret = False  # a group has no unit: the interpreter runs every call
        self._groups: list[_GroupStep] = []  # every group step, by arena index
        self._arenas: list[list] = []  # per finished call: per group step, its arrays
        # inputs whose type the runner's layout key does not prove (lists, tuples, objects)
        self._checked = [i for i, v in enumerate(graph.inputs) if not _proven_by_key(v.type)]
        # the module attributes the runner's key records after the inputs' (input position,
        # path), which the programs check
        self.attributes: list = list(getattr(runner, "attributes", ()))

    # ---- making the plan
    def _storage(self, native: set) -> dict[Value, int]:
        """How each value is held: tensors that groups make and only groups run as steps
        (`native`) read stay bare arrays."""
        storage: dict[Value, int] = {}
        outputs = set(self.graph.outputs)
        for v in list(self.graph.inputs) + [o for n in self.graph.walk() for o in n.outputs] + \
                [v for n in self.graph.walk() for b in n.blocks for v in b.inputs]:
            if not isinstance(v.type, TensorType):
                storage[v] = VALUE
            elif v.node in native and v not in outputs and all(u.user in native for u in v.uses):
                storage[v] = ARRAY
            else:
                storage[v] = TENSOR
        return storage

    def _build(self) -> Optional[tuple[list, list, list]]:
        """(steps, initial contents of the slots after the inputs, output slots), or None
        when a group has no unit (the plan then interprets)."""
        g = self.graph
        native: set = set()

        def find_native(block) -> None:
            for n in block.nodes():
                if n.kind == GROUP:
                    native.add(n)
                for b in n.blocks if _is_branch(n) or _is_loop(n) else ():
                    if _is_straight_block(b):
                        find_native(b)
        find_native(g.block)
        storage = self._storage(native)
        slots: dict[Value, int] = {v: i for i, v in enumerate(g.inputs)}
        tail: list = []
        groups: list[_GroupStep] = []

        def slot(v: Value, initial: Any = None) -> int:
            slots[v] = len(g.inputs) + len(tail)
            tail.append(initial)
            return slots[v]

        def steps_of(block) -> Optional[list]:
            steps: list = []
            for n in block.nodes():
                if n.kind == "prim::Constant":
                    if not n.output.uses:  # left behind when its users joined a group
                        continue
                    value = self.interpreter.constant(n)
                    if isinstance(value, (list, dict)):  # mutable: a fresh one per call
                        steps.append((None, n, [], [slot(n.output)]))
                    else:
                        slot(n.output, value)
                elif n.kind == GROUP:
                    step = _GroupStep(n, [(slots[v], storage[v]) for v in n.inputs], [])
                    step.outs = [(slot(o), storage[o]) for o in n.outputs]
                    step.unit = self.runner.unit_of(n)
                    if step.unit is None:
                        return None
                    step.arena_positions = _arena_positions(step)
                    step.arena_index = len(groups)
                    groups.append(step)
                    steps.append(step)
                elif _is_branch(n):
                    step = _BranchStep(n, slots[n.inputs[0]], [slot(o) for o in n.outputs])
                    for b in n.blocks:
                        if _is_straight_block(b):
                            inner = steps_of(b)
                            if inner is None:
                                return None
                            step.branches.append((inner, [slots[v] for v in b.outputs], []))
                        else:
                            step.branches.append((None, [], [(v, slots[v]) for v in _outer_reads(b)]))
                    steps.append(step)
                elif _is_loop(n):
                    body = n.blocks[0]
                    step = _LoopStep(n, slots[n.inputs[0]], slots[n.inputs[1]],
                                     [slots[v] for v in n.inputs[2:]], [slot(o) for o in n.outputs])
                    step.body_inputs = [slot(v) for v in body.inputs]
                    inner = steps_of(body)
                    if inner is None:
                        return None
                    step.body, step.results = inner, [slots[v] for v in body.outputs]
                    steps.append(step)
                else:
                    steps.append((PRIM_HANDLERS[n.kind], n, [slots[v] for v in n.inputs],
                                  [slot(o) for o in n.outputs]))
            return steps

        steps = steps_of(g.block)
        if steps is None:
            return None
        self._groups = groups
        return steps, tail, [slots[v] for v in g.outputs]

    def _new_arena(self) -> list[dict]:
        return [s.unit.new_arrays(s.arena_positions) if s.arena_positions else {}
                for s in self._groups]

    # ---- running
    def _programs(self) -> bool:
        """Make the steps and their programs on the first run (units compile then); False
        when a group has no unit (the interpreter then runs every call)."""
        if self._steps is None:
            with self.runner.lock:
                if self._steps is None and not self._interpret:
                    built = self._build()
                    if built is None:
                        self._interpret = True
                    else:
                        steps, tail, outputs = built
                        self._program = plan_program(
                            self, steps, tail, outputs, self.key, self._bail, share_view_bases,
                            _needs_grad, self.runner.value_key, self.runner.run_subgraph,
                            self.runner.decisions, getattr(self.runner, "subgraph_op", None))
                        if self.key is not None:
                            self._array_program, self._raw_program = (array_program(
                                self, steps, tail, outputs, self.key, self._bail,
                                share_view_bases, self.runner.value_key, raw, self._arenas,
                                self._new_arena) for raw in (False, True))
                        self._built = built
                        self._call_keyed, self._call_tried = (
                            self._caller(self._program, keyed) for keyed in (True, False))
                        if self._raw_program is not None:  # (they keep the arenas themselves)
                            self.raw_call, self._array_call = self._raw_program, self._array_program
                        self._steps = steps
        return not self._interpret

    def run(self, inputs: list) -> list:
        """Run inputs the runner's key matched to this plan."""
        if not self._programs():
            return self.interpreter.run(inputs)
        done = self._call_keyed(inputs)
        return done if done is not None else self.interpreter.run(inputs)

    def try_run(self, inputs: list) -> Optional[list]:
        """The outputs when these inputs are ones the plan's key would match (the layouts
        and values it recorded) and its units accept them; None, having done nothing visible,
        when they are not: then the runner finds the plan the inputs belong to."""
        call = self._call_tried  # (set once the programs are made)
        return call(inputs) if call is not None else None

    def run_arrays(self, arrays: Sequence, raw: bool = False) -> Optional[list]:
        """`try_run` of inputs whose tensors are the caller's numpy arrays, for a call that
        needs no gradient, when the plan's program for them can take the arrays as they are
        (see `native_program.array_program`; `raw`: outputs that units made and are only
        returned stay bare arrays); None when it cannot or refuses them."""
        call = self.raw_call if raw else self._array_call
        return call(arrays) if call is not None else None

    def train_arrays(self, arrays: Sequence, flags: Optional[tuple[bool, ...]] = None,
                     copy: Optional[bool] = True) -> Optional[tuple[list, list]]:
        """`try_run` of a training call of the caller's numpy arrays under grad mode whose
        inputs require grad as `flags` say (default: all; see `native_program.train_program`;
        `copy=False`: the arrays of the caller's Tensors, shared as they are; `copy=None`: those
        Tensors, none requiring grad): the outputs and the Tensors of the arrays it made (two
        lists); None when the plan has no such program or it refuses them."""
        program = self.train_programs.get(flags)
        if program is None:
            if self._built is None or flags in self.train_programs:
                return None
            program = self._make_train_program(flags)
            if program is None:
                return None
        return program(arrays, copy)  # (its body runs under grad: no unit call reads an arena)

    def _make_train_program(self, flags: Optional[tuple[bool, ...]]):
        """The training program for `flags`, made on the first training call with them (it
        decides the groups' recording ops for those flags: calls of other patterns never need
        them); None when there can be none."""
        with self.runner.lock:
            if flags not in self.train_programs and len(self.train_programs) < MAX_TRAIN_PROGRAMS:
                steps, tail, outputs = self._built
                self.train_programs[flags] = train_program(
                    self, steps, tail, outputs, self.key, self._bail, share_view_bases,
                    _needs_grad, self.runner.value_key, self.runner.run_subgraph,
                    self.runner.decisions, getattr(self.runner, "subgraph_op", None),
                    getattr(self.runner, "decided", None), flags)
        return self.train_programs.get(flags)

    def _caller(self, program, keyed: bool) -> Callable[[list], Optional[list]]:
        """`program` run on inputs with an arena of the plan's (one a finished call left, or a
        new one): its outputs, or None when it refused them."""
        arenas, new_arena = self._arenas, self._new_arena

        def call(inputs):
            try:
                arena = arenas.pop()
            except IndexError:
                arena = new_arena()
            done = program(inputs, arena, keyed)
            if done is None:
                arenas.append(arena)  # (refused before any step had an effect)
                return None
            outs, reusable = done
            if reusable:  # (no output of the program is an arena array)
                arenas.append(arena)
            return outs
        return call

    def _bail(self, step: _GroupStep, values: list) -> list:
        """A unit refused its arguments: its group runs interpreted for this call (a bailout)."""
        self.runner.count_bailout()
        sub = step.node.attr("Subgraph")
        outs = self.interpreter.sub_interpreter(sub).run_block(
            sub.block, [Tensor(x) if how == ARRAY else x for (_, how), x in zip(step.args, values)], {})
        return [o.data if how == ARRAY else o for (_, how), o in zip(step.outs, outs)]


def share_view_bases(results: list, args: list, aliases: list) -> None:
    """Outputs a unit returned as views of an argument (or of another output) share that
    tensor's version counter and base, as the interpreter's views do."""
    for j, alias in enumerate(aliases):
        if alias is None or not isinstance(results[j], Tensor):
            continue
        kind, i = alias
        base = args[i] if kind == "input" else results[i]
        if isinstance(base, Tensor):
            results[j]._version = base._version
            results[j]._base = base._base if base._base is not None else base


def _arena_positions(step: _GroupStep) -> tuple[int, ...]:
    """The output buffers of a tensor unit the arena may provide: its private scratch and the
    buffers of outputs only later groups read (unless another output, or a view output, hands
    that buffer out);
    none for scalar programs."""
    unit = step.unit
    private = getattr(unit, "private", None)
    if private is None:
        return ()
    inner = {k for (_, how), (k, _) in zip(step.outs, unit.result_buffers) if how == ARRAY and k is not None}
    escaping = {k for (_, how), (k, _) in zip(step.outs, unit.result_buffers) if how != ARRAY}
    escaping |= {b - unit.n_inputs for b in unit.views.bases()}  # view outputs hand these out
    return tuple(sorted(set(private) | (inner - escaping)))


def plan_for(runner, graph: Graph, interpreter: Interpreter, key: Optional[tuple] = None
             ) -> Union[StraightPlan, Interpreter]:
    """What runs a specialized graph (`run(inputs)`): a straight plan when it can, else the
    interpreter."""
    return StraightPlan(runner, graph, interpreter, key) if is_straight(graph) else interpreter
