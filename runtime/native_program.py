"""A straight plan's steps as one generated Python function: what a call would otherwise decide
step by step (which slots hold Tensors or bare arrays, which output arrays come from the arena,
which constants fill which slots, how each unit is called) is decided once, and the call runs
as straight-line code over local variables, one call of its builtin entry per native unit (as
dataclasses and numba generate their fast paths).

`program(inputs, arena, keyed)` returns `(outputs, reusable)`, or None when the call is not
one the plan may run: an input is not of the layout or value the plan's key recorded, or a
unit's entry refused its arguments before any step with effects ran (the units read only the
arrays they are given and write fresh ones or the arena's, so nothing happened). `keyed` says
the caller already matched the inputs to the plan's key: a refusing unit is then a bailout,
interpreted in place (and so is any refusal after a step with effects: an interpreted block, a
DifferentiableGraph, a group recorded on the tape, by which time the inputs were checked);
`reusable` is False after a bailout, whose interpreted outputs may be views of arena arrays.
A step that fails raises the interpreter's error, located at its node."""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import numpy as np

from irjit.compiler.codegen.partition import GROUP
from irjit.compiler.codegen.unit import NativeUnit
from irjit.compiler.codegen.unit_sequence import sequence
from irjit.compiler.codegen.view_outputs import ViewUnit
from irjit.ops import facts
from irjit.ops.errors import IRRuntimeError
from irjit.ops.prims import PURE_PRIMS
from irjit.ops.tensor import Tensor
from irjit.ops.types import TensorType

from .autograd import GRAD_MODE
from .interpreter import _accepts, _BailOut, check_input
from .module import Module
from .native_specialization import attribute_reads
from .prims import _guards_enforced

TENSOR, ARRAY, VALUE = 0, 1, 2  # a slot holds a Tensor, a bare array, or a value as it is
_NUMBERS = (bool, int, float)
_PURE_GUARDS = frozenset({"prim::RequiresGradCheck"})  # prims without effects besides PURE_PRIMS
_BUILTIN_TYPES = {t.__name__: t for t in (int, float, str, bool, type(None))}


class _Source:
    """The lines of the generated function and the objects its names refer to."""

    def __init__(self):
        self.lines: list[str] = []
        self.names: dict[str, Any] = {
            "Tensor": Tensor, "ndarray": np.ndarray, "empty": np.empty, "array": np.array,
            "NUMBERS": _NUMBERS, "PASS": (IRRuntimeError, _BailOut, RecursionError),
            "Module": Module}
        self.depth = 1
        self.count = 0

    def name(self, prefix: str, obj: Any) -> str:
        """A global name of the generated function for `obj`."""
        name = f"{prefix}{len(self.names)}"
        self.names[name] = obj
        return name

    def local(self, prefix: str) -> str:
        """A fresh local variable name (never a global's: those have no underscore)."""
        self.count += 1
        return f"{prefix}_{self.count}"

    def line(self, text: str, extra: int = 0) -> None:
        self.lines.append("    " * (self.depth + extra) + text)


def _argument(slot: int, how: int) -> str:
    """The expression a unit receives for a slot: a Tensor's array, a bare array or a value."""
    v = f"v{slot}"
    if how == TENSOR:
        return f"{v}.data"
    if how == ARRAY:
        return v
    return f"({v}.data if isinstance({v}, Tensor) else {v})"


def _wrap(value: str, how: int) -> str:
    if how == ARRAY:
        return value
    if how == TENSOR:
        return f"Tensor({value})"
    return f"({value} if isinstance({value}, (NUMBERS, list)) else Tensor({value}))"


def _direct(unit) -> bool:
    """Whether a program calls the unit's entry itself: a NativeUnit whose view outputs (if
    any) are at fixed offsets."""
    return type(unit) is NativeUnit and not any(v.dynamic for v in unit.views.outputs.values())


def _is_whole(view, buffer) -> bool:
    """Whether a view output is its base buffer as a whole (the entry's guard, or the unit's
    allocation, fixed the base's layout): the program hands out the base itself, as
    `ViewOutput.array` would."""
    itemsize = buffer.dtype.itemsize
    return view.offset == 0 and view.shape == tuple(buffer.sizes) and all(
        n == 1 or a == b * itemsize for n, a, b in zip(view.shape, view.strides, buffer.strides))


def _may_hold_tensors(key_element) -> bool:
    """Whether a value with this key may be or hold a Tensor (a tensor's layout, a list or a
    tuple; not None, a number, a bool or an int list)."""
    if isinstance(key_element, str):
        return key_element in ("list", "tuple")
    return not (isinstance(key_element, tuple) and key_element[0].__class__ is str)


def _proven(v, key_element) -> bool:
    """Whether every value with this key element is of `v`'s type (an int list, a bool, None:
    the key holds what the type check looks at), so the program need not check it."""
    if isinstance(key_element, tuple) and key_element[0].__class__ is str:
        sample = list(key_element[1]) if key_element[0] == "int[]" else key_element[1]
    elif key_element == "NoneType":
        sample = None
    else:
        return False
    return _accepts(v.type, sample)


def _is_group(step) -> bool:
    return hasattr(step, "unit")


def _is_branch(step) -> bool:
    return hasattr(step, "branches")


def _is_loop(step) -> bool:
    return hasattr(step, "body")


def is_pure(step) -> bool:
    """Whether a step has no effect a repeated call could see: native groups, constants, pure
    prims and branches and loops made only of those (not an interpreted block, a
    DifferentiableGraph, a call recorded on the tape)."""
    if _is_group(step):
        return True
    if _is_branch(step):
        return all(steps is not None and all(is_pure(s) for s in steps)
                   for steps, _, _ in step.branches)
    if _is_loop(step):
        return all(is_pure(s) for s in step.body)
    handler, node, _, _ = step
    return handler is None or node.kind in PURE_PRIMS or node.kind in _PURE_GUARDS or \
        node.kind == "prim::GetAttr"  # (an attribute read)


def _written_slots(step) -> list[int]:
    if _is_group(step):
        return [slot for slot, _ in step.outs]
    if _is_branch(step):
        return list(step.outs) + [s for steps, _, _ in step.branches for inner in steps or ()
                                  for s in _written_slots(inner)]
    if _is_loop(step):
        return list(step.outs) + step.body_inputs + [s for inner in step.body
                                                     for s in _written_slots(inner)]
    return list(step[3])


class _Program:
    """Emits one plan's program (see the module docstring)."""

    def __init__(self, plan, key: Optional[tuple], run_group: Callable, decisions: Callable,
                 bail: Callable, share_view_bases: Callable, needs_grad: Callable,
                 value_key: Callable, subgraph_op: Optional[Callable] = None):
        self.plan, self.key, self.decisions = plan, key, decisions
        self.subgraph_op = subgraph_op
        self.src = src = _Source()
        src.names.update(GRAD=GRAD_MODE, needs_grad=needs_grad, value_key=value_key,
                         check_input=check_input, interp=plan.interpreter, K=key,
                         run_group=run_group, bail=bail, share=share_view_bases)
        self.under_grad = False  # emitting the body for calls whose inputs require grad
        self.pure = True  # no step with effects emitted yet: a refusal may still return None
        self.array_inputs: set[int] = set()  # input slots holding arrays (`array_program`)
        self.raw: set[int] = set()  # unit outputs returned as bare arrays (`array_program`)
        # (`array_program`) the program takes an arena from the plan's and gives it back
        # itself (ARENAS, NEW_ARENA) and returns only the outputs
        self.own_arena = False
        # id(group step) -> its recording op, decided when the program is made (`train_program`)
        self.static_steps: dict[int, Callable] = {}
        self.decide: Optional[Callable] = None  # the runner's `decided(node, flags)`, if any
        self.leaves: set[int] = set()  # input slots holding Tensors requiring grad of the
        # program's own, never written (`train_program`): their flags are known
        # (input position, path) -> the local holding that module attribute, and those whose
        # key says they hold a tensor or a module, which the program reads itself
        self.attribute_locals: dict[tuple, str] = {}
        self.direct_reads: set[tuple] = set()
        self.reads = attribute_reads(plan.graph)
        self.constant_slots: dict[int, Any] = {}  # slot -> the constant no step writes
        # (`train_program`) the output slots of guards that hold in every call of the program
        # (`_true_guards`), and whether nothing but the program sees its leaves (`_keeps_inputs`)
        self.true_guards: set[int] = set()
        self.private = False
        # (`train_program`) slot -> the local holding the array of the input Tensor it holds
        # (the inputs' and the outputs of guards that hold), whose requires_grad is known
        self.input_arrays: dict[int, str] = {}

    # ---- the checks before any step, and the bodies
    def checks(self, steps: list, arrays: bool) -> tuple[set[int], list[str]]:
        """The lines that unpack and check the inputs (their tensors Tensors, or with `arrays`
        numpy arrays) against the key: tensors' layouts where no unit's entry checks them
        first, the other inputs' values or types. Returns (the tensor inputs left to the
        units' entries, the expressions saying whether an input requires grad)."""
        src, graph, key = self.src, self.plan.graph, self.key
        n = len(graph.inputs)
        src.lines.append("    try:")
        src.line(f"{''.join(f'v{i}, ' for i in range(n))}= inputs", 1)
        src.line("except ValueError:")
        src.line("return None", 1)
        guarded = _guarded_inputs(steps) & set(range(n))
        tensors = [i for i, v in enumerate(graph.inputs) if isinstance(v.type, TensorType)]
        typed = tensors
        if arrays:
            self.array_inputs = set(tensors)
            # (an array whose readers are all units whose entries the program calls itself,
            # one of them checking it first, is checked there, its type first)
            groups = list(_group_steps(steps))
            others = {slot for step in groups if not _direct(step.unit) for slot, _ in step.args}
            typed = [i for i in tensors if i not in guarded or i in others]
        if typed:
            test = "type(v{}) is ndarray" if arrays else "isinstance(v{}, Tensor)"
            src.line(f"if not ({' and '.join(test.format(i) for i in typed)}):")
            src.line("return None", 1)
        grad_checks = []
        for i, v in enumerate(graph.inputs):
            if i in tensors:
                if i not in guarded:
                    self._layout_check(i, arrays)
                grad_checks.append(f"v{i}.requires_grad")
                continue
            if key is not None:
                src.line(f"if {self._differs_from_key(f'v{i}', key[i])}:")
                src.line("return None", 1)
            if i in self.plan._checked and (key is None or not _proven(v, key[i])):
                src.line(f"check_input({src.name('V', v)}, v{i}, interp.filename)")
            if key is None or _may_hold_tensors(key[i]):
                grad_checks.append(f"needs_grad(v{i})")
        if key is not None:
            self.attribute_checks(grad_checks)
        return guarded, grad_checks

    def attribute_checks(self, grad_checks: list[str]) -> None:
        """Read the module attributes the key records after the inputs (as the runner's
        `_attribute_value` does) into locals and check each against the key: a tensor's
        layout, a module's type, anything else as `_differs_from_key`; a tensor that requires
        grad takes the body under grad, as a tensor input does."""
        src, key, n = self.src, self.key, len(self.plan.graph.inputs)
        for j, (i, path) in enumerate(self.plan.attributes):
            parent = f"v{i}" if len(path) == 1 else self.attribute_locals[(i, path[:-1])]
            m = self.attribute_locals[(i, path)] = src.local("m")  # (prefixes are read first)
            src.line(f"{m} = {parent}.attributes.get({path[-1]!r}) if isinstance({parent}, Module) else None")
            element = key[n + j]
            if isinstance(element, tuple) and element[0].__class__ is not str:  # a tensor's layout
                src.line(f"if not isinstance({m}, Tensor) or "
                         f"({m}.data.dtype, {m}.data.shape, {m}.data.strides) != K[{n + j}]:")
                grad_checks.append(f"{m}.requires_grad")
            elif element == "Module":
                src.line(f"if type({m}) is not Module:")
            else:
                src.line(f"if {self._differs_from_key(m, element)}:")
                src.line("return None", 1)
                continue  # (the interpreter's handler reads it)
            src.line("return None", 1)
            self.direct_reads.add((i, path))

    def program(self, steps: list, constants: list[str], outputs: list[int]) -> None:
        """Checks of the inputs, then the body for calls under grad whose inputs require grad
        (every group through `run_group`, checking the inputs the other body leaves to the
        units' entries), then the body for the other calls."""
        src = self.src
        guarded, grad_checks = self.checks(steps, arrays=False)
        src.lines.extend("    " + line for line in constants)
        if grad_checks:
            src.line(f"if GRAD.enabled and ({' or '.join(grad_checks)}):")
            src.depth += 1
            for i in sorted(guarded):
                self._layout_check(i, arrays=False)
            self.under_grad, self.pure = True, False  # (groups record on the tape)
            self.body(steps, outputs)
            src.depth -= 1
        self.under_grad, self.pure = False, True
        self.body(steps, outputs)

    def array_program(self, steps: list, constants: list[str], outputs: list[int]) -> None:
        """Checks of inputs whose tensors are numpy arrays, then the body without grad."""
        self.checks(steps, arrays=True)
        self.src.lines.extend("    " + line for line in constants)
        self.body(steps, outputs)

    def _layout_check(self, i: int, arrays: bool, dtype_only: bool = False) -> None:
        """Input `i`'s dtype, sizes and strides as the key recorded them (its dtype alone
        with `dtype_only`)."""
        if self.key is not None:  # (sizes and strides first, the dtype by identity first:
            # a tuple of the three costs more than the three tests)
            a = f"v{i}" if arrays else f"v{i}.data"
            dtype, sizes, strides = (self.src.name(prefix, x) for prefix, x in
                                     zip(("D", "Z", "S"), self.key[i]))
            self.src.line(f"if {a}.dtype is not {dtype} and {a}.dtype != {dtype}:" if dtype_only
                          else f"if {a}.shape != {sizes} or {a}.strides != {strides} or "
                          f"({a}.dtype is not {dtype} and {a}.dtype != {dtype}):")
            self.src.line("return None", 1)

    def _reads_no_layout(self, steps: list, constants: list[str]) -> bool:
        """Whether a training program's steps take nothing from the inputs' sizes and strides
        themselves: only guards that hold, DifferentiableGraphs of the program's leaves
        (inline, `leaf_lines`: their f's and df's executors check what they run) and
        tuples or lists of values, with no constant (one may be a folded size). Its inputs'
        sizes and strides then need no check, as PyTorch runs a DifferentiableGraph behind a
        requires-grad guard whatever their sizes."""
        if constants or not self.private:
            return False
        for step in steps:
            taken = _taken_block(step, self.true_guards)
            if taken is not None:
                if not self._reads_no_layout(taken, constants):
                    return False
                continue
            if _is_group(step) or _is_branch(step) or _is_loop(step):
                return False
            _, node, args, outs = step
            if _is_guard(step):
                if outs[-1] not in self.true_guards:
                    return False
            elif node.kind == "prim::DifferentiableGraph":
                op = self.subgraph_op(node) if self.subgraph_op is not None else None
                if op is None or not getattr(op, "inlines_leaves", False) or \
                        self._leaf_arrays(node, args) is None:
                    return False
            elif node.kind not in ("prim::TupleConstruct", "prim::ListConstruct"):
                return False
        return True

    def train_program(self, steps: list, constants: list[str], outputs: list[int],
                      flags: tuple[bool, ...]) -> None:
        """The caller's arrays (copies of those a backward reads, when the call's `copy`
        says so; with `copy=None` the inputs are the caller's Tensors, which must not require
        grad, and their arrays are taken as they are) as Tensors, requiring grad where `flags`
        say, checked against the key, then the body under grad; the outputs and those
        Tensors."""
        src, n = self.src, len(self.plan.graph.inputs)
        src.lines.append("    try:")
        src.line(f"{''.join(f'v{i}, ' for i in range(n))}= inputs", 1)
        src.line("except ValueError:")
        src.line("return None", 1)
        if n:
            src.line("if copy is None:")
            src.line(f"if {' or '.join(f'v{i}.__class__ is not Tensor or v{i}.requires_grad' for i in range(n))}:", 1)
            src.line("return None", 2)
            for i in range(n):
                src.line(f"v{i} = v{i}.data", 1)
            src.line(f"if not ({' and '.join(f'v{i}.__class__ is ndarray' for i in range(n))}):")
            src.line("return None", 1)
        self.static_steps = _recording_steps(steps, flags, self.decide)
        self.true_guards = _true_guards(steps, flags, self.plan.interpreter)
        held = {i: i for i in range(n)}  # slot -> the input whose Tensor it holds
        for step in steps:  # (a guard that holds passes its inputs on)
            if _is_guard(step) and step[3][-1] in self.true_guards:
                held.update({o: held[a] for a, o in zip(step[2], step[3]) if a in held})
        self.leaves = {slot for slot, i in held.items() if flags[i]}
        self.input_arrays = {slot: f"x{i}" for slot, i in held.items()}
        self.private = _keeps_inputs(steps, outputs, n, self.true_guards)
        if self.private:  # the program's own leaves: the nodes need no versions to check
            self.static_steps = {k: op.op.private_step() for k, op in self.static_steps.items()}
        copied = [i for i in range(n)
                  if i not in _uncaptured_inputs(self.plan.graph, steps, self.static_steps)]
        if copied:  # (a copy's layout, as `Function.run` would have made it)
            src.line("if copy:")
            for i in copied:
                src.line(f"v{i} = array(v{i})", 1)
        dtype_only = self._reads_no_layout(steps, constants)
        for i in range(n):
            self._layout_check(i, arrays=True, dtype_only=dtype_only)
        for i in range(n):
            src.line(f"x{i} = v{i}")
            src.line(f"v{i} = Tensor(x{i}, True)" if flags[i] else f"v{i} = Tensor(x{i})")
        src.lines.extend("    " + line for line in constants)
        self.under_grad, self.pure = True, False  # (groups record on the tape)
        self.body(steps, outputs, leaves=[f"v{i}" for i in range(n)])

    def body(self, steps: list, outputs: list[int], leaves: Optional[Sequence[str]] = None) -> None:
        """The steps, their failures located at their nodes, then the outputs (with `leaves`,
        a training program's: the outputs and the leaves, two lists)."""
        src = self.src
        if self.own_arena:
            src.line("try:")
            src.line("arena = ARENAS.pop()", 1)
            src.line("except IndexError:")
            src.line("arena = NEW_ARENA()", 1)
        src.line("ok = True")
        src.line("cur = None")
        src.line("try:")
        start = len(src.lines)
        src.depth += 1
        self.steps(steps)
        if len(src.lines) == start:
            src.line("pass")
        src.depth -= 1
        src.line("except PASS:")
        src.line("raise", 1)
        src.line("except Exception as e:  # located at the step's node")
        src.line("raise interp.node_error(cur, e) from None", 1)
        returned = ", ".join(f"v{i}" for i in outputs)
        if self.own_arena:  # (an arena array reaches no output: `_arena_positions`; after a
            src.line("if ok:")  # bailout, interpreted outputs may view one)
            src.line("ARENAS.append(arena)", 1)
            src.line(f"return [{returned}]")
        elif leaves is not None:  # (a bailout in its body interprets what is left: no refusal)
            src.line(f"return [{returned}], [{', '.join(leaves)}]")
        else:
            src.line(f"return [{returned}], ok")

    def _differs_from_key(self, v: str, key_element) -> str:
        """An expression true when the value of variable `v` has another key than
        `key_element` (NativeRunner's `_value_key` of a value that is not a Tensor)."""
        src = self.src
        if isinstance(key_element, str) and key_element in _BUILTIN_TYPES:
            return f"type({v}) is not {src.name('T', _BUILTIN_TYPES[key_element])}"
        kind = key_element[0] if isinstance(key_element, tuple) else None
        if kind.__class__ is str and kind == "bool":
            return f"{v} is not {key_element[1]!r}"
        if kind.__class__ is str and kind in ("int", "dtype"):  # an int keyed by value
            return f"type({v}) is not int or {v} != {key_element[1]!r}"
        if kind.__class__ is str and kind == "int[]":
            sizes = list(key_element[1])
            ints = " or ".join(f"type({v}[{k}]) is not int" for k in range(len(sizes))) \
                if len(sizes) <= 4 else f"any(type(e) is not int for e in {v})"
            return f"type({v}) is not list or {v} != {sizes!r}" + (f" or {ints}" if sizes else "")
        return f"value_key({v}) != {src.name('k', key_element)}"

    # ---- steps
    def steps(self, steps: list) -> None:
        run: list = []  # consecutive pure NativeUnits, called in one native call
        for step in steps:
            if not self.under_grad and _is_group(step) and _direct(step.unit) and is_pure(step):
                run.append(step)
                continue
            self.unit_run(run)
            run = []
            if not is_pure(step):
                self.pure = False  # (steps inside it may run after its effects)
            if _is_branch(step):
                self.branch(step)
            elif _is_loop(step):
                self.loop(step)
            elif _is_group(step):
                if self.under_grad:
                    self.group_under_grad(step)
                elif _direct(step.unit):
                    self.native_unit(step)
                else:
                    self.unit_call(step)
            else:
                self.prim(step)
        self.unit_run(run)

    def unit_run(self, run: list) -> None:
        """Consecutive NativeUnits: one alone as `native_unit` calls it, more in one call."""
        if len(run) == 1:
            self.native_unit(run[0])
        elif run:
            self.native_units(run)

    def argument(self, slot: int, how: int) -> str:
        """The expression a unit receives for a slot (an input that holds an array as is)."""
        return _argument(slot, ARRAY if slot in self.array_inputs else how)

    def refused(self, step) -> None:
        """The lines after a unit refused: no effect yet and the key unchecked, refuse the
        call; else interpret the group (a bailout)."""
        src = self.src
        if self.pure:
            src.line("if not keyed:", 1)
            if self.own_arena:
                src.line("ARENAS.append(arena)", 2)
            src.line("return None", 2)
        src.line("ok = False", 1)
        outs = "".join(f"v{slot}, " for slot, _ in step.outs)
        args = ", ".join(f"Tensor(v{slot})" if slot in self.array_inputs else f"v{slot}"
                         for slot, _ in step.args)
        src.line(f"{outs + '= ' if outs else ''}bail({src.name('S', step)}, [{args}])", 1)

    def native_unit(self, step) -> None:
        """A NativeUnit: its entry called with the arguments' objects and the output arrays
        (fresh ones, or the arena's); view outputs made from their bases after it."""
        args = self._unit_arguments(step)
        self._unit_call(step, args, self._unit_buffers(step))

    def native_units(self, run: list) -> None:
        """Consecutive NativeUnits in one native call (`unit_sequence.sequence`): every
        unit's buffers first, a later unit given the arrays of the earlier ones' outputs it
        reads; when a unit refuses, the units one by one as `native_unit` calls them (a unit
        only reads its arguments and writes its outputs, so running one again is harmless).
        Inputs the program passes on as they are (its entries check their types) are checked
        to be arrays first: a call of other objects (df's Tensors, say) refuses at its first
        unit, before the later units' buffers are made."""
        src = self.src
        handed_on = sorted({slot for step in run for slot, _ in step.args if slot in self.array_inputs})
        if not handed_on:
            self._unit_sequence(run)
            return
        src.line(f"if {' and '.join(f'v{slot}.__class__ is ndarray' for slot in handed_on)}:")
        src.depth += 1
        self._unit_sequence(run)
        src.depth -= 1
        src.line("else:")
        src.depth += 1
        for step in run:
            self.native_unit(step)
        src.depth -= 1

    def _unit_sequence(self, run: list) -> None:
        """`native_units` once the inputs handed on are known to be arrays."""
        src = self.src
        given: dict[int, str] = {}  # slot -> the expression of an earlier unit's output array
        calls = []
        for i, step in enumerate(run):
            args, outs = self._unit_arguments(step, given), self._unit_buffers(step)
            values = self._unit_values(step, args, outs)
            if i < len(run) - 1:
                for j, (slot, _) in enumerate(step.outs):
                    if not values[j].isidentifier():  # (a view or a reshape, made once)
                        held = src.local("w")
                        src.line(f"{held} = {values[j]}")
                        values[j] = held
                    given[slot] = values[j]
            calls.append((step, args, outs, values))
        seq = sequence([step.unit for step in run], [len(args) + len(outs) for _, args, outs, _ in calls])
        src.line(f"if {src.name('seq', seq)}({', '.join(x for _, args, outs, _ in calls for x in args + outs)}):")
        src.depth += 1
        for step, _, outs, _ in calls:
            self._unit_call(step, self._unit_arguments(step), outs)
        src.depth -= 1
        src.line("else:")
        for step, _, _, values in calls:
            self._unit_results(step, values)

    def _unit_arguments(self, step, given: Optional[dict[int, str]] = None) -> list[str]:
        """The expressions a NativeUnit's entry takes for its arguments (a slot in `given`
        as that expression)."""
        src, unit = self.src, step.unit
        args = []
        numbers = dict(unit._numbers)
        for k, (slot, how) in enumerate(step.args):
            a = given[slot] if given and slot in given else self.argument(slot, how)
            value = self.constant_slots.get(slot)
            if k in numbers and type(value) in _NUMBERS:  # a constant number: its array made once
                a = src.name("c", np.array(value, numbers[k]))
            elif k in numbers:  # a number input, passed as a 0-dim array (as `unit.call` does)
                x = src.local("a")
                src.line(f"{x} = {a}")
                a = f"(array({x}, {src.name('D', numbers[k])}) if isinstance({x}, NUMBERS) else {x})"
            args.append(a)
        return args

    def _unit_buffers(self, step) -> list[str]:
        """The locals holding a NativeUnit's output buffers: fresh arrays, or the arena's."""
        src, outs = self.src, []
        for k, (sizes, dtype) in enumerate(step.unit._specs):
            o = src.local("o")
            if k in step.arena_positions:
                src.line(f"{o} = arena[{step.arena_index}][{k}]")
            else:
                src.line(f"{o} = empty({sizes!r}, {src.name('D', dtype)})")
            outs.append(o)
        return outs

    def _unit_values(self, step, args: list[str], outs: list[str]) -> list[str]:
        """The expressions of a NativeUnit's outputs' arrays once it ran: a buffer (reshaped),
        or a view output, a window of an argument or of a buffer."""
        unit, values = step.unit, []
        for j, (k, sizes) in enumerate(unit.result_buffers):
            if k is None:
                view = unit.views.outputs[j]
                base = args[view.base] if view.base < unit.n_inputs else outs[view.base - unit.n_inputs]
                values.append(base if _is_whole(view, unit.buffers[view.base]) else
                              f"{self.src.name('view', view)}.array({base}, {view.offset})")
            else:
                values.append(outs[k] if sizes is None else f"{outs[k]}.reshape({tuple(sizes)!r})")
        return values[:len(step.outs)]

    def _unit_call(self, step, args: list[str], outs: list[str]) -> None:
        """A NativeUnit's entry called, the refusal, then its results."""
        src = self.src
        src.line(f"if {src.name('u', step.unit)}._fn({', '.join(args + outs)}):")
        self.refused(step)
        src.line("else:")
        self._unit_results(step, self._unit_values(step, args, outs))

    def _unit_results(self, step, values: list[str]) -> None:
        """The lines (one level in) binding a unit's outputs to its arrays `values`."""
        src = self.src
        for (slot, how), value in zip(step.outs, values):
            src.line(f"v{slot} = {_wrap(value, ARRAY if slot in self.raw else how)}", 1)
        self.share_bases(step, 1)
        if not step.outs:
            src.line("pass", 1)

    def unit_call(self, step) -> None:
        """Any other unit (views at run-time offsets, scalar programs, ...): its `call`."""
        src = self.src
        args = ", ".join(self.argument(slot, how) for slot, how in step.args)
        arena = f", arena[{step.arena_index}]" if step.arena_positions else ""
        src.line(f"status, r = {src.name('u', step.unit)}.call([{args}]{arena})")
        src.line("if status:")
        self.refused(step)
        src.line("else:")
        for j, (slot, how) in enumerate(step.outs):
            src.line(f"v{slot} = {_wrap(f'r[{j}]', ARRAY if slot in self.raw else how)}", 1)
        self.share_bases(step, 1)
        if not step.outs:
            src.line("pass", 1)

    def share_bases(self, step, extra: int) -> None:
        """Outputs that are views of an argument share its version and base (`aliases`)."""
        aliases = getattr(step.unit, "aliases", None) or []
        if any(alias and how != ARRAY and slot not in self.raw
               for alias, (slot, how) in zip(aliases, step.outs)):
            outs = ", ".join(f"v{slot}" for slot, _ in step.outs)
            args = ", ".join(f"v{slot}" for slot, _ in step.args)
            self.src.line(f"share([{outs}], [{args}], {self.src.name('A', aliases)})", extra)

    def group_under_grad(self, step) -> None:
        """A group under grad mode: its op for the arguments' requires-grad flags records it on
        the tape; before that op is decided, and when the group records nothing or is
        interpreted, the runner's `run_group` (which decides) runs it, as the interpreter
        would."""
        src = self.src
        node = src.name("n", step.node)
        src.line(f"cur = {node}")
        outs = "".join(f"v{slot}, " for slot, _ in step.outs)
        args = ", ".join(f"v{slot}" for slot, _ in step.args)
        flags = "".join("True, " if slot in self.leaves else
                        f"v{slot}.requires_grad, " if how == TENSOR else
                        f"isinstance(v{slot}, Tensor) and v{slot}.requires_grad, "
                        for slot, how in step.args)
        known = self.static_steps.get(id(step))
        if known is not None:  # (its arguments' flags are the program's: the op is decided)
            src.line(f"{outs + '= ' if outs else ''}{src.name('step', known)}([{args}])")
            return
        src.line(f"op = {src.name('decided', self.decisions(step.node))}.get(({flags}))")
        src.line(f"{outs + '= ' if outs else ''}op([{args}]) if op else run_group(interp, {node}, [{args}])")

    def prim(self, step) -> None:
        src = self.src
        handler, node, args, outs = step
        n = src.name("n", node)
        if handler is None:  # a list or dict constant: a fresh one per call
            value = self.plan.interpreter.constant(node)
            if isinstance(value, (list, dict)) and all(
                    isinstance(x, (bool, int, float, str, type(None)))
                    for x in (value.values() if isinstance(value, dict) else value)):
                src.line(f"v{outs[0]} = {type(value).__name__}({src.name('c', value)})")
            else:
                src.line(f"v{outs[0]} = interp.constant({n})")
            return
        read = ", ".join(f"v{i}" for i in args)
        if node.kind == "prim::TupleConstruct":  # (what their handlers make)
            src.line(f"v{outs[0]} = ({read},)" if read else f"v{outs[0]} = ()")
            return
        if node.kind == "prim::ListConstruct":
            src.line(f"v{outs[0]} = [{read}]")
            return
        if node.kind == "prim::GetAttr" and self.reads.get(node.output) in self.direct_reads:
            src.line(f"v{outs[0]} = {self.attribute_locals[self.reads[node.output]]}")
            return  # (checked against the key: what the handler would read)
        if outs and outs[-1] in self.true_guards:
            for a, o in zip(args, outs):  # (a guard's outputs are its inputs, then True)
                src.line(f"v{o} = v{a}")
            src.line(f"v{outs[-1]} = True")
            return
        src.line(f"cur = {n}")
        if node.kind == "prim::RequiresGradCheck" and self._requires_grad_check(node, args, outs):
            return
        if facts.has_tag(node.kind, "subgraph") and self.plan.interpreter.subgraph_runner is not None:
            # what the handler does: the runner's run_subgraph (an executor's op, called
            # directly when the runner gives it), all outputs
            outs_list = "".join(f"v{i}, " for i in outs)
            op = self.subgraph_op(node) if self.subgraph_op is not None else None
            if op is not None and self.private and getattr(op, "inlines_leaves", False) and \
                    self._leaf_call(op, node, args, outs):
                return
            if op is not None and self.private and hasattr(op, "private_step"):
                op = op.private_step()
            call = f"{src.name('op', getattr(op, 'step', op))}([{read}])" if op is not None else \
                f"interp.subgraph_runner(interp, {n}, [{read}])"
            src.line(f"{outs_list + '= ' if outs_list else ''}{call}")
            return
        call = f"{src.name('h', handler)}(interp, {n}, [{read}], None)"
        if len(outs) == 1:
            src.line(f"v{outs[0]} = {call}")
        elif outs:  # (as the interpreter assigns several outputs)
            src.line(f"{''.join(f'v{i}, ' for i in outs)}= {call}")
        else:
            src.line(call)

    def _leaf_call(self, op, node, args: list[int], outs: list[int]) -> bool:
        """A DifferentiableGraph of the program's own leaves (and numbers) inline, as its op's
        `leaf_lines` give it the leaves' arrays and whether each requires grad; False when an
        argument is another tensor (its flag is known only when the call runs)."""
        arrays = self._leaf_arrays(node, args)
        if arrays is None:
            return False
        src = self.src
        lines = op.leaf_lines(tuple(slot in self.leaves for slot in args), [f"v{i}" for i in args],
                              arrays, [f"v{i}" for i in outs], src.name, src.local)
        if lines is None:
            return False
        for line in lines:
            src.line(line)
        return True

    def _leaf_arrays(self, node, args: list[int]) -> Optional[list[str]]:
        """What a DifferentiableGraph's `leaf_lines` get as arrays: the locals holding its
        leaf arguments' arrays, and its number constants; None for any other argument."""
        arrays = []
        for slot, v in zip(args, node.inputs):
            if slot in self.input_arrays:
                arrays.append(self.input_arrays[slot])
            elif isinstance(v.type, TensorType) or not isinstance(self.constant_slots.get(slot), _NUMBERS):
                return None
            else:
                arrays.append(f"v{slot}")
        return arrays

    def _requires_grad_check(self, node, args: list[int], outs: list[int]) -> bool:
        """The guard inline when its types say only whether each tensor requires grad (as
        `prims.type_matches` checks them); False when they say more."""
        types = node.attr("types")
        if not all(_says_only_requires_grad(t) for t in types):
            return False
        src = self.src
        # each tensor requires grad under grad mode (`g`) as its type says
        checks = ["g"] if any(t.requires_grad for t in types) else []
        checks += [f"isinstance(v{a}, Tensor) and v{a}.requires_grad" if t.requires_grad else
                   f"isinstance(v{a}, Tensor) and not (g and v{a}.requires_grad)"
                   for a, t in zip(args, types)]
        enforced = _guards_enforced(self.plan.interpreter)  # (else the guarded code just runs)
        src.line("g = GRAD.enabled")
        for a, o in zip(args, outs):
            src.line(f"v{o} = v{a}")
        src.line(f"v{outs[-1]} = True if ({' and '.join(checks) or 'True'}) else False"
                 if enforced else f"v{outs[-1]} = True")
        return True

    def branch(self, step) -> None:
        src = self.src
        taken = _taken_block(step, self.true_guards)
        if taken is not None:
            self.steps(taken)
            for o, r in zip(step.outs, step.branches[0][1]):
                src.line(f"v{o} = v{r}")
            return
        src.line(f"cur = {src.name('n', step.node)}")
        src.line(f"c = v{step.cond}")
        src.line("if (bool(c.data) if isinstance(c, Tensor) else c):")
        for k, (steps, results, reads) in enumerate(step.branches):
            if k == 1:
                src.line("else:")
            src.depth += 1
            if steps is not None:
                self.steps(steps)
                for o, r in zip(step.outs, results):
                    src.line(f"v{o} = v{r}")
            else:  # the interpreter runs the block, given the outer values it reads
                env = ", ".join(f"{src.name('V', v)}: v{slot}" for v, slot in reads)
                block = src.name("B", step.node.blocks[k])
                outs = "".join(f"v{o}, " for o in step.outs)
                src.line(f"{outs + '= ' if outs else ''}interp.run_block({block}, [], {{{env}}})")
            src.line("pass")
            src.depth -= 1

    def loop(self, step) -> None:
        """As the interpreter runs a loop: while the condition holds and fewer iterations than
        the trip count (None: no limit) ran, the body on (iteration, carried values)."""
        src = self.src
        src.line(f"cur = {src.name('n', step.node)}")
        i, trips, c = src.local("i"), src.local("trips"), src.local("c")
        src.line(f"{i} = 0")
        src.line(f"{trips} = v{step.trips} if v{step.trips} is not None else float('inf')")
        src.line(f"{c} = v{step.cond}")
        carried = step.body_inputs[1:]
        if carried:
            src.line(f"{''.join(f'v{b}, ' for b in carried)}= "
                     f"{''.join(f'v{a}, ' for a in step.initial)}")
        src.line(f"while ({c}.data if isinstance({c}, Tensor) else {c}) and {i} < {trips}:")
        src.depth += 1
        src.line(f"v{step.body_inputs[0]} = {i}")
        self.steps(step.body)
        src.line(f"{c} = v{step.results[0]}")
        if carried:
            src.line(f"{''.join(f'v{b}, ' for b in carried)}= "
                     f"{''.join(f'v{r}, ' for r in step.results[1:])}")
        src.line(f"{i} += 1")
        src.depth -= 1
        if step.outs:
            src.line(f"{''.join(f'v{o}, ' for o in step.outs)}= "
                     f"{''.join(f'v{b}, ' for b in carried)}")

    def constants(self, steps: list, tail: list) -> list[str]:
        """The assignments of the constants' slots (`tail` holds the initial contents of the
        slots after the inputs; steps write the others)."""
        n_inputs = len(self.plan.graph.inputs)
        written = {slot for step in steps for slot in _written_slots(step)}
        self.constant_slots = {n_inputs + k: value for k, value in enumerate(tail)
                               if n_inputs + k not in written}
        return [f"v{n_inputs + k} = {self.src.name('c', value)}"
                for k, value in enumerate(tail) if n_inputs + k not in written]

    def finish(self, signature: str = "inputs, arena, keyed") -> Callable:
        text = f"def program({signature}):\n" + "\n".join(self.src.lines) + "\n"
        namespace = dict(self.src.names)
        exec(compile(text, "<native plan program>", "exec"), namespace)  # noqa: S102
        program = namespace["program"]
        program.source = text
        return program


def _says_only_requires_grad(t) -> bool:
    """Whether a RequiresGradCheck's type says whether a tensor requires grad and nothing
    else (as the profiling executor's guards of its DifferentiableGraphs do)."""
    return isinstance(t, TensorType) and t.requires_grad is not None and not t.undefined \
        and t.scalar_type is None and t.sizes is None


def _is_guard(step) -> bool:
    return not (_is_group(step) or _is_branch(step) or _is_loop(step)) and \
        step[1].kind == "prim::RequiresGradCheck"


def _true_guards(steps: list, flags: tuple[bool, ...], interp) -> set[int]:
    """The output slots of the top-level `prim::RequiresGradCheck`s that hold in every call of
    a training program (grad mode on, its inputs Tensors of its own requiring grad as `flags`
    say): each checked value is an input and its type says only whether it requires grad,
    as the input does (the profiling executor's guards of its DifferentiableGraphs) - or the
    interpreter does not enforce guards."""
    found = set()
    for step in steps:
        if not _is_guard(step):
            continue
        _, node, args, outs = step
        if not _guards_enforced(interp) or all(
                a < len(flags) and _says_only_requires_grad(t) and t.requires_grad == flags[a]
                for a, t in zip(args, node.attr("types"))):
            found.add(outs[-1])
    return found


def _taken_block(step, true_guards: set[int]) -> Optional[list]:
    """The steps of a branch on a guard that holds in every call (its first block, the only
    one it takes), when it is such a branch and that block runs as steps; else None."""
    if not _is_branch(step) or step.cond not in true_guards:
        return None
    return step.branches[0][0]


def _views_an_argument(step) -> bool:
    """Whether a group step's unit returns a view of one of its arguments."""
    return any(alias and alias[0] == "input" for alias in getattr(step.unit, "aliases", None) or ())


def _keeps_inputs(steps: list, outputs: list[int], n_inputs: int, true_guards: set[int]) -> bool:
    """Whether nothing but a training program sees the Tensors it makes of its inputs: every
    step is pure or a DifferentiableGraph (functional, as autodiff makes them; a branch on a
    guard in `true_guards` counts as its first block), no unit returns a view of one, and no
    output is one (or a tuple or list holding one)."""
    holding = set(range(n_inputs))  # slots that may hold an input's Tensor

    def visit(steps: list) -> bool:
        for step in steps:
            if _is_group(step):
                if _views_an_argument(step):
                    return False
            elif _is_branch(step):
                taken = _taken_block(step, true_guards)
                if taken is not None:
                    if not visit(taken):
                        return False
                    holding.update(o for o, r in zip(step.outs, step.branches[0][1]) if r in holding)
                elif not is_pure(step) or any(_views_an_argument(inner) for inner in _group_steps([step])):
                    return False
                else:
                    holding.update(step.outs)
            elif _is_loop(step):
                if not visit(step.body) or not is_pure(step):
                    return False
                holding.update(step.outs)
            else:
                handler, node, args, outs = step
                if node.kind == "prim::DifferentiableGraph":
                    continue  # (its results are Tensors of their own)
                if not is_pure(step):
                    return False
                if any(a in holding for a in args):
                    holding.update(outs)
        return True
    return visit(steps) and not any(slot in holding for slot in outputs)


def _guarded_inputs(steps: list) -> set[int]:
    """The input slots whose layout a unit's entry checks before any step with effects runs
    (units that run unconditionally, and whose guards check every tensor argument's dtype,
    sizes and strides)."""
    found = set()
    for step in steps:
        if not is_pure(step):
            break
        if _is_group(step) and isinstance(step.unit, (NativeUnit, ViewUnit)):
            found.update(slot for slot, how in step.args if how == TENSOR)
    return found


def plan_program(plan, steps: list, tail: list, outputs: list[int], key: Optional[tuple],
                 bail: Callable, share_view_bases: Callable, needs_grad: Callable[[Any], bool],
                 value_key: Callable[[Any], Any], run_group: Callable, decisions: Callable,
                 subgraph_op: Optional[Callable] = None
                 ) -> Callable[[list, list, bool], Optional[tuple[list, bool]]]:
    """The program running `steps` (see the module docstring); `tail` holds the constants
    of the slots after the inputs, `outputs` the slots of the graph's outputs. Calls under
    grad mode whose inputs require grad run every group through `run_group(interp, node,
    args) -> outputs` (the runner's: it records the group on the tape, or runs its unit, or
    interprets it) with every tensor a Tensor: the interpreter's loop unrolled; a group whose
    op the runner decided for its arguments' requires-grad flags (`decisions(node)`, the
    runner's `GroupGradients.decisions`) is called directly, and so is the op of a
    DifferentiableGraph that `subgraph_op(node)` gives."""
    emit = _Program(plan, key, run_group, decisions, bail, share_view_bases, needs_grad, value_key,
                    subgraph_op)
    emit.program(steps, emit.constants(steps, tail), outputs)
    return emit.finish()


def train_program(plan, steps: list, tail: list, outputs: list[int], key: Optional[tuple],
                  bail: Callable, share_view_bases: Callable, needs_grad: Callable[[Any], bool],
                  value_key: Callable[[Any], Any], run_group: Callable, decisions: Callable,
                  subgraph_op: Optional[Callable] = None, decide: Optional[Callable] = None,
                  flags: Optional[tuple[bool, ...]] = None
                  ) -> Optional[Callable[[list, Optional[bool]], Optional[tuple[list, list]]]]:
    """The program of a training call (`Function.run` of numpy arrays under grad mode, as
    `irjit.compile` makes them) whose inputs require grad as `flags` say (default: all): it
    copies the caller's arrays into Tensors of its own (so that a caller writing its arrays
    before `backward` cannot change the gradients), checks the copies against the key and
    runs `plan_program`'s body under grad; `program(inputs, copy)` returns the graph's
    outputs and those Tensors, two lists (None when it refuses the inputs). With `copy=False` (the arrays of a caller's Tensors, which a call shares as
    `Function.run` does) nothing is copied; `copy=None` takes the caller's Tensors (none
    requiring grad) and shares their arrays so. An input only groups read whose
    recording ops (`decide(node, flags)`, the runner's, decided now) neither capture it for
    their backward nor view it is not copied: nothing the tape keeps reads it. None unless
    every input of the graph is a floating-point tensor of the key and the plan reads no
    module attribute."""
    graph = plan.graph
    if key is None or plan.attributes or not all(
            isinstance(v.type, TensorType) and isinstance(k, tuple) and len(k) == 3
            and isinstance(k[0], np.dtype) and k[0].kind == "f" for v, k in zip(graph.inputs, key)):
        return None
    emit = _Program(plan, key, run_group, decisions, bail, share_view_bases, needs_grad, value_key,
                    subgraph_op)
    emit.decide = decide
    emit.train_program(steps, emit.constants(steps, tail), outputs,
                       flags if flags is not None else (True,) * len(graph.inputs))
    return emit.finish("inputs, copy=True")


def array_program(plan, steps: list, tail: list, outputs: list[int], key: tuple, bail: Callable,
                  share_view_bases: Callable, value_key: Callable[[Any], Any], raw: bool = False,
                  arenas: Optional[list] = None, new_arena: Optional[Callable] = None
                  ) -> Optional[Callable[[list, bool], Optional[list]]]:
    """The program for calls whose tensor inputs are the caller's numpy arrays (of exactly
    the key's layouts) and need no gradient, as `Function.run(..., requires_grad=False)`
    makes them: the arrays go to the units as they are, never copied or wrapped (with `raw`,
    as a native group's op calls its f and df, so are the outputs units made and the program
    only returns: `_returned_only`). None unless that cannot be seen: only native units read
    those inputs (units write only fresh or arena arrays), a view of one that a unit returns
    is read only by later units, no output is one, and every step is pure."""
    graph = plan.graph
    inputs = {v for v in graph.inputs if isinstance(v.type, TensorType)}
    if not all(is_pure(step) for step in steps) or any(v in inputs for v in graph.outputs) or \
            any(u.user.kind != GROUP for v in inputs for u in v.uses):
        return None
    slots = {i for i, v in enumerate(graph.inputs) if v in inputs}
    for step in _group_steps(steps):  # (a view only later units read does not escape)
        aliases = getattr(step.unit, "aliases", None) or []
        if any(alias and alias[0] == "input" and step.args[alias[1]][0] in slots and how != ARRAY
               for alias, (_, how) in zip(aliases, step.outs)):
            return None
    emit = _Program(plan, key, None, None, bail, share_view_bases, None, value_key)
    emit.raw = _returned_only(plan, steps) if raw else set()
    emit.own_arena = True
    emit.src.names.update(ARENAS=arenas, NEW_ARENA=new_arena)
    emit.array_program(steps, emit.constants(steps, tail), outputs)
    return emit.finish("inputs, keyed=False")


def _returned_only(plan, steps: list) -> set[int]:
    """The slots of unit outputs that are only returned (as outputs, or in a tuple or list
    that is)."""
    graph, found = plan.graph, set()

    def returned(v) -> bool:
        return bool(v.uses) and all(
            u.user is graph.return_node or _constructs_sequence(u.user) and u.user.owning_block
            is graph.block and all(w.user is graph.return_node for w in u.user.output.uses)
            for u in v.uses)
    for step in steps:  # (top-level units only: their outputs are defined in every call)
        if _is_group(step):
            found.update(slot for (slot, how), v in zip(step.outs, step.node.outputs)
                         if how == TENSOR and returned(v))
    return found


def _constructs_sequence(node) -> bool:
    return node.kind == "prim::TupleConstruct" or node.kind == "prim::ListConstruct"


def _group_steps(steps: list):
    for step in steps:
        if _is_group(step):
            yield step
        elif _is_branch(step):
            for inner, _, _ in step.branches:
                yield from _group_steps(inner or [])
        elif _is_loop(step):
            yield from _group_steps(step.body)


def _recording_steps(steps: list, flags: tuple[bool, ...], decide: Optional[Callable]
                     ) -> dict[int, Callable]:
    """id(step) -> the recording op (a NativeGroupOp's generated step) of each top-level group
    of a training program whose arguments are all its inputs (Tensors requiring grad as
    `flags` say) or numbers, decided for those flags; groups with other arguments, or whose
    op records nothing, views or is interpreted, are left out (the program decides them per
    call)."""
    found: dict[int, Callable] = {}
    n_inputs = len(flags)
    if decide is None:
        return found
    for step in steps:
        if not _is_group(step) or not all(slot < n_inputs or how == VALUE for slot, how in step.args):
            continue
        op = decide(step.node, tuple(slot < n_inputs and flags[slot] for slot, _ in step.args))
        if op and getattr(op, "op", None) is not None and hasattr(op.op, "_captured_inputs"):
            found[id(step)] = op
    return found


def _uncaptured_inputs(graph, steps: list, recording: dict[int, Callable]) -> set[int]:
    """The input positions whose every use is an argument of a group in `recording` whose op
    neither captures that argument's values for its backward (its sizes are the same in any
    copy) nor returns a view of it."""
    by_node = {step.node: step for step in steps if id(step) in recording}
    found = set()
    for i, v in enumerate(graph.inputs):
        ok = bool(v.uses)
        for use in v.uses:
            step = by_node.get(use.user)
            if step is None:
                ok = False
                break
            read = recording[id(step)].op.value_captures()
            positions = [k for k, (slot, _) in enumerate(step.args) if slot == i]
            aliases = getattr(step.unit, "aliases", None) or []
            if any(k in read for k in positions) or any(
                    alias and alias[0] == "input" and alias[1] in positions for alias in aliases):
                ok = False
                break
        if ok:
            found.add(i)
    return found
