"""Counting which executed `aten::` nodes ran natively and which the interpreter ran: nodes
inside a NativeGroup whose unit ran count as native; every node an interpreter step ran
counts as interpreted when its run-time inputs and outputs are tensors, numbers, None or
lists of those (strings, dicts and objects may stay interpreted and are not counted)."""

from __future__ import annotations

from collections import Counter
from contextlib import contextmanager

from irjit.ops.tensor import Tensor
from irjit.runtime import native, native_plan
from irjit.runtime.interpreter import Interpreter


REPORT: dict = {}  # fixture name -> Coverage, printed by tests/runtime/conftest.py


def _numeric(x) -> bool:
    if isinstance(x, (list, tuple)):
        return all(_numeric(i) for i in x)
    return x is None or isinstance(x, (Tensor, bool, int, float))


class Coverage:
    """Per kind counts of executed nodes: `native` and `interpreted` Counters."""

    def __init__(self):
        self.native: Counter = Counter()
        self.interpreted: Counter = Counter()

    def clear(self) -> None:
        self.native.clear()
        self.interpreted.clear()

    @property
    def fraction(self) -> float:
        n, i = sum(self.native.values()), sum(self.interpreted.values())
        return n / (n + i) if n + i else 1.0


@contextmanager
def measured(monkeypatch):
    """Count node executions while the block runs; yields the Coverage."""
    cov = Coverage()
    run_steps = Interpreter._run_steps
    unit_of = native.NativeRunner.unit_of

    def counting_steps(self, block, steps, env):
        try:
            return run_steps(self, block, steps, env)
        finally:
            for s in steps:
                if s.node.kind.startswith("aten::") and all(v in env for v in s.outputs) and \
                        all(_numeric(env[v]) for v in s.inputs + s.outputs):
                    cov.interpreted[s.node.kind] += 1

    class CountingUnit:
        def __init__(self, unit, node):
            self.unit, self.node = unit, node
            self.aliases = getattr(unit, "aliases", None)  # the runner shares versions by them

        def __getattr__(self, name):  # the unit's other attributes (private, new_arrays, ...)
            return getattr(self.unit, name)

        def call(self, args, *arrays):
            status, outs = self.unit.call(args, *arrays)
            self.count(status)
            return status, outs

        def windows(self, args):  # (a view unit's call, with the views' offsets)
            status, outs, offsets = self.unit.windows(args)
            self.count(status)
            return status, outs, offsets

        def count(self, status):
            if not status:
                cov.native.update(m.kind for m in self.node.attr("Subgraph").walk()
                                  if m.kind.startswith("aten::"))

    def counting_unit_of(self, node):
        unit = unit_of(self, node)
        return None if unit is None else CountingUnit(unit, node)

    # a straight plan's program calls the units it bound when it was made: measured, a plan
    # makes its program again on its first run, with the counting units, and made again with
    # the real ones after
    plans = []
    programs = native_plan.StraightPlan._programs

    def measured_programs(self):
        if not any(p is self for p in plans):
            plans.append(self)
            self._steps = None
        made = programs(self)
        self.raw_call = self._array_call = None  # (as `run_arrays`, below: not counted)
        return made

    monkeypatch.setattr(Interpreter, "_run_steps", counting_steps)
    monkeypatch.setattr(native.NativeRunner, "unit_of", counting_unit_of)
    monkeypatch.setattr(native_plan.StraightPlan, "_programs", measured_programs)
    monkeypatch.setattr(native_plan.StraightPlan, "try_run", lambda self, inputs: None)
    monkeypatch.setattr(native_plan.StraightPlan, "run_arrays", lambda self, arrays, raw=False: None)
    # (and the runners' shortcut to it, which ops made before hold: read as None, never set)
    monkeypatch.setattr(native.NativeRunner, "raw_arrays", property(lambda self: None,
                                                                    lambda self, value: None))
    try:
        yield cov
    finally:
        for plan in plans:
            plan._steps = None
