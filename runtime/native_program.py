"""A straight plan's steps as one generated Python function: what a call would otherwise decide
step by step (which slots hold Tensors or bare arrays, which output arrays come from the arena,
which constants fill which slots, how each unit is called) is decided once, and the call runs
as straight-line code over local variables, one ctypes call per native unit (the way
dataclasses and numba generate their fast paths).

The program returns the plan's outputs, or None when the call is not one it may run: a unit
refused its arguments (an entry guard or a kernel status), an input is not of the layout or
value the plan's key recorded, or an input requires grad under grad mode. It has no effect
then (units only write the arrays they are handed), so the caller runs the plan's general
path, which interprets a refusing unit (a bailout) or finds the plan the inputs belong to."""

from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from irjit.compiler.codegen.unit import NativeUnit
from irjit.compiler.codegen.view_outputs import ViewUnit
from irjit.ops.tensor import Tensor
from irjit.ops.types import TensorType

from .autograd import is_grad_enabled
from .interpreter import _accepts, check_input

TENSOR, ARRAY, VALUE = 0, 1, 2  # a slot holds a Tensor, a bare array, or a value as it is
_NUMBERS = (bool, int, float)
_INLINE = {"prim::TupleConstruct": ("({},)", "()"), "prim::ListConstruct": ("[{}]", "[]")}


class _Source:
    """The lines of the generated function and the objects its names refer to."""

    def __init__(self):
        self.lines: list[str] = []
        self.names: dict[str, Any] = {"Tensor": Tensor, "empty": np.empty, "array": np.array,
                                      "NUMBERS": _NUMBERS}

    def name(self, prefix: str, obj: Any) -> str:
        """A global name of the generated function for `obj`."""
        name = f"{prefix}{len(self.names)}"
        self.names[name] = obj
        return name

    def local(self, prefix: str) -> str:
        """A fresh local variable name."""
        self.count = getattr(self, "count", 0) + 1
        return f"{prefix}{self.count}"

    def line(self, text: str, indent: int = 1) -> None:
        self.lines.append("    " * indent + text)


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


def _emit_native_unit(src: _Source, step, arena: Optional[str], share_view_bases: Callable) -> None:
    """A NativeUnit: its entry called directly with the arguments' objects and the output
    arrays (fresh ones, or the arena's); view outputs made from their bases after it."""
    unit: NativeUnit = step.unit
    u = src.name("u", unit)
    args = []
    numbers = dict(unit._numbers)
    for k, (slot, how) in enumerate(step.args):
        a = _argument(slot, how)
        if k in numbers:
            x = src.local("a")
            src.line(f"{x} = {a}")
            a = f"(array({x}, {src.name('D', numbers[k])}) if isinstance({x}, NUMBERS) else {x})"
        args.append(a)
    outs = []
    for k, (sizes, dtype) in enumerate(unit._specs):
        o = src.local("o")
        if k in step.arena_positions:
            src.line(f"{o} = {arena}[{k}]")
        else:
            src.line(f"{o} = empty({sizes!r}, {src.name('D', dtype)})")
        outs.append(o)
    src.line(f"if {u}._fn({', '.join(args + outs)}):")
    src.line("return None", 2)
    for j, ((slot, how), (k, sizes)) in enumerate(zip(step.outs, unit.result_buffers)):
        if k is None:  # a view output: a window of an argument or of an output buffer
            view = unit.views.outputs[j]
            base = args[view.base] if view.base < unit.n_inputs else outs[view.base - unit.n_inputs]
            value = base if _is_whole(view, unit.buffers[view.base]) else \
                f"{src.name('view', view)}.array({base}, {view.offset})"
        else:
            value = outs[k] if sizes is None else f"{outs[k]}.reshape({tuple(sizes)!r})"
        src.line(f"v{slot} = {_wrap(value, how)}")
    if any(alias and how != ARRAY for alias, (_, how) in zip(unit.aliases, step.outs)):
        share = src.name("share", share_view_bases)
        results = ", ".join(f"v{slot}" for slot, _ in step.outs)
        arguments = ", ".join(f"v{slot}" for slot, _ in step.args)
        src.line(f"{share}([{results}], [{arguments}], {src.name('A', unit.aliases)})")


def _emit_unit_call(src: _Source, step, arena: Optional[str], share_view_bases: Callable) -> None:
    """Any other unit (views, scalar programs, ...): through its `call`."""
    u = src.name("u", step.unit)
    args = ", ".join(_argument(slot, how) for slot, how in step.args)
    arrays = f", {arena}" if arena is not None else ""
    src.line(f"status, r = {u}.call([{args}]{arrays})")
    src.line("if status:")
    src.line("return None", 2)
    for j, (slot, how) in enumerate(step.outs):
        src.line(f"v{slot} = {_wrap(f'r[{j}]', how)}")
    aliases = getattr(step.unit, "aliases", None)
    if aliases and any(aliases):
        share = src.name("share", share_view_bases)
        outs = ", ".join(f"v{slot}" for slot, _ in step.outs)
        ins = ", ".join(f"v{slot}" for slot, _ in step.args)
        src.line(f"{share}([{outs}], [{ins}], {src.name('A', aliases)})")


def _guarded_inputs(steps: list) -> set[int]:
    """The input slots whose layout a unit's entry checks on every call (units that run
    unconditionally, and whose guards check every tensor argument's dtype, sizes, strides)."""
    found = set()
    for step in steps:
        unit = getattr(step, "unit", None)
        if isinstance(unit, (NativeUnit, ViewUnit)):
            found.update(slot for slot, how in step.args if how == TENSOR)
    return found


def _written_slots(step) -> list[int]:
    if isinstance(step, tuple):
        return list(step[3])
    outs = getattr(step, "outs", [])
    return [o if isinstance(o, int) else o[0] for o in outs]


_BUILTIN_TYPES = {t.__name__: t for t in (int, float, str, bool, type(None))}


def _differs_from_key(src: _Source, v: str, key_element) -> str:
    """An expression true when the value of variable `v` has another key than `key_element`
    (NativeRunner's `_value_key` of a value that is not a Tensor), inline where it is simple."""
    if isinstance(key_element, str) and key_element in _BUILTIN_TYPES:
        return f"type({v}) is not {src.name('T', _BUILTIN_TYPES[key_element])}"
    kind = key_element[0] if isinstance(key_element, tuple) else None
    if kind.__class__ is str and kind == "bool":
        return f"{v} is not {key_element[1]!r}"
    if kind.__class__ is str and kind == "int[]":
        return (f"type({v}) is not list or {v} != {list(key_element[1])!r} or "
                f"any(type(e) is not int for e in {v})")
    return f"value_key({v}) != {src.name('k', key_element)}"


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
    else:
        sample = None if key_element == "NoneType" else _UNPROVEN
    return sample is not _UNPROVEN and _accepts(v.type, sample)


_UNPROVEN = object()


def plan_program(plan, steps: list, tail: list, outputs: list[int], key: Optional[tuple],
                 share_view_bases: Callable, needs_grad: Callable[[Any], bool],
                 value_key: Callable[[Any], Any], run_group: Optional[Callable] = None
                 ) -> Optional[Callable[..., Optional[list]]]:
    """The function `program(inputs, arena) -> outputs or None` running `steps` (group steps,
    `(handler, node, args, outs)` prims); None when a step is of another kind (a branch).

    With `run_group(interp, node, args) -> outputs` (the runner's, for calls under grad mode
    whose inputs require grad), every group runs through it and every tensor is a Tensor: the
    program is the interpreter's loop unrolled (`program(inputs)`), and it checks every input
    against the key itself."""
    graph = plan.graph
    n_inputs = len(graph.inputs)
    src = _Source()
    src.names.update(grad_enabled=is_grad_enabled, needs_grad=needs_grad, value_key=value_key,
                     check_input=check_input, interp=plan.interpreter, K=key,
                     run_group=run_group)
    params = [f"v{i}" for i in range(n_inputs)]
    src.line(f"{', '.join(params)}{',' if len(params) == 1 else ''} = inputs" if params else
             "assert not inputs")
    guarded = _guarded_inputs(steps) if run_group is None else set()
    grad_checks = []
    for i, v in enumerate(graph.inputs):
        if isinstance(v.type, TensorType):
            if i not in guarded and key is not None:  # its layout as the key recorded it
                src.line(f"if (v{i}.data.dtype, v{i}.data.shape, v{i}.data.strides) != K[{i}]:")
                src.line("return None", 2)
            grad_checks.append(f"v{i}.requires_grad")
        else:
            if key is not None:
                src.line(f"if {_differs_from_key(src, f'v{i}', key[i])}:")
                src.line("return None", 2)
            if i in plan._checked and (key is None or not _proven(v, key[i])):
                src.line(f"check_input({src.name('V', v)}, v{i}, interp.filename)")
            if key is None or _may_hold_tensors(key[i]):
                grad_checks.append(f"needs_grad(v{i})")
    if grad_checks and run_group is None:
        src.line(f"if grad_enabled() and ({' or '.join(grad_checks)}):")
        src.line("return None", 2)
    written = {slot for step in steps for slot in _written_slots(step)}
    for k, value in enumerate(tail):  # the constants' slots (the others are steps' outputs)
        if n_inputs + k not in written:
            src.line(f"v{n_inputs + k} = {src.name('c', value)}")
    for step in steps:
        if hasattr(step, "unit") and run_group is not None:  # a group, under grad
            outs = ", ".join(f"v{slot}" for slot, _ in step.outs)
            args = ", ".join(f"v{slot}" for slot, _ in step.args)
            src.line(f"{outs}, = run_group(interp, {src.name('n', step.node)}, [{args}])")
        elif hasattr(step, "unit"):  # a native group
            arena = None
            if step.arena_positions:
                arena = f"arena[{step.arena_index}]"
            if _direct(step.unit):
                _emit_native_unit(src, step, arena, share_view_bases)
            else:
                _emit_unit_call(src, step, arena, share_view_bases)
        elif isinstance(step, tuple):
            handler, node, args, outs = step
            n = src.name("n", node)
            if handler is None:  # a list or dict constant: a fresh one per call
                value = plan.interpreter.constant(node)
                if isinstance(value, (list, dict)) and all(
                        isinstance(x, (bool, int, float, str, type(None)))
                        for x in (value.values() if isinstance(value, dict) else value)):
                    src.line(f"v{outs[0]} = {type(value).__name__}({src.name('c', value)})")
                else:
                    src.line(f"v{outs[0]} = interp.constant({n})")
                continue
            read = ", ".join(f"v{i}" for i in args)
            if node.kind in _INLINE:  # (their handlers make exactly these)
                form, empty = _INLINE[node.kind]
                src.line(f"v{outs[0]} = {form.format(read) if read else empty}")
                continue
            call = f"{src.name('h', handler)}(interp, {n}, [{read}], None)"
            if len(outs) == 1:
                src.line(f"v{outs[0]} = {call}")
            else:
                src.line(f"{', '.join(f'v{i}' for i in outs)}, = {call}")
        else:
            return None
    src.line(f"return [{', '.join(f'v{i}' for i in outputs)}]")
    header = "def program(inputs, arena):" if run_group is None else "def program(inputs):"
    text = header + "\n" + "\n".join(src.lines) + "\n"
    namespace = dict(src.names)
    exec(compile(text, "<native plan program>", "exec"), namespace)  # noqa: S102
    program = namespace["program"]
    program.source = text
    return program
