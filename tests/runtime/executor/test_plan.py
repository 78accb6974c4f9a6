"""ExecutionPlan's runner seam: the `backend` setting picks a registered runner factory, the
runner gets the executor's hooks at construction, and a runner whose entry guards reject the
inputs makes the plan run them through the interpreter."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import irjit
from irjit.compiler.settings import ExecutorSettings
from irjit.ops.tensor import Tensor
from irjit.runtime.executor import COUNTERS, EntryGuardFailed, register_backend, set_backend
from irjit.runtime.executor.legacy import LegacyGraphExecutor
from irjit.runtime.executor.plan import ExecutionPlan, backend_names
from irjit.runtime.interpreter import Interpreter

GRAPH = """graph(%x : Tensor):
  %one : int = prim::Constant[value=1]()
  %y : Tensor = aten::add(%x, %x, %one)
  return (%y)
"""


class OnlyTwoByTwo:
    """A stand-in for a native runner: "compiled" for 2x2 inputs, it returns zeros for them
    (so the test can tell who ran) and fails its entry guard for anything else."""

    made = []

    def __init__(self, ctx):
        self.graph = ctx.graph
        self.ctx = ctx
        OnlyTwoByTwo.made.append(self)

    def run(self, inputs):
        if inputs[0].shape != (2, 2):
            raise EntryGuardFailed()
        return [Tensor(np.zeros((2, 2)))]


register_backend("test-two-by-two", OnlyTwoByTwo)


def test_the_interp_backend_runs_the_interpreter_with_the_hooks_given_at_construction():
    def fallback(fn, args):
        return []

    assert ExecutorSettings().backend == "native"  # the default; "interp" turns it off
    plan = ExecutionPlan(irjit.parse_ir(GRAPH), lambda g: None, fallback=fallback,
                         settings=ExecutorSettings(backend="interp"))
    assert plan.backend == "interp"
    assert isinstance(plan.runner, Interpreter)
    assert plan.runner.fallback is fallback
    assert plan.runner.subgraph_runner == plan._run_subgraph
    out = plan.run([Tensor(np.ones(3))])
    np.testing.assert_array_equal(out[0].data, np.full(3, 2.0))


def test_backend_setting_picks_the_registered_runner_and_entry_guard_failures_fall_back():
    settings = ExecutorSettings(backend="test-two-by-two")
    plan = ExecutionPlan(irjit.parse_ir(GRAPH), lambda g: None, settings=settings)
    assert isinstance(plan.runner, OnlyTwoByTwo) and plan.runner.ctx.graph is plan.graph
    np.testing.assert_array_equal(plan.run([Tensor(np.ones((2, 2)))])[0].data, np.zeros((2, 2)))
    before = COUNTERS.bailouts
    np.testing.assert_array_equal(plan.run([Tensor(np.ones(3))])[0].data, np.full(3, 2.0))
    assert COUNTERS.bailouts == before + 1


def test_executors_build_their_plans_with_their_settings_backend():
    OnlyTwoByTwo.made.clear()
    ex = LegacyGraphExecutor(irjit.parse_ir(GRAPH),
                             settings=ExecutorSettings(backend="test-two-by-two"))
    np.testing.assert_array_equal(ex.run(Tensor(np.ones((2, 2))))[0].data, np.zeros((2, 2)))
    assert len(OnlyTwoByTwo.made) == 1


def test_unknown_backend_is_an_error_listing_the_valid_ones():
    with pytest.raises(ValueError, match=r"unknown backend 'nope' \(valid backends: interp, "):
        ExecutionPlan(irjit.parse_ir(GRAPH), lambda g: None,
                      settings=ExecutorSettings(backend="nope"))
    with pytest.raises(ValueError, match="unknown backend 'nope'"):
        set_backend("nope")
    assert "interp" in backend_names()


def test_set_backend_changes_the_default_for_new_plans():
    previous = set_backend("test-two-by-two")
    try:
        plan = ExecutionPlan(irjit.parse_ir(GRAPH), lambda g: None)
        assert isinstance(plan.runner, OnlyTwoByTwo)
    finally:
        set_backend(previous)
    assert previous == "native"  # the default backend


def test_a_backend_name_cannot_be_taken_twice():
    with pytest.raises(ValueError, match="already registered"):
        register_backend("interp", OnlyTwoByTwo)


def test_irjit_backend_environment_variable_is_the_default():
    root = Path(__file__).resolve().parents[3]
    code = ("import irjit\n"
            "from irjit.compiler.settings import get_settings\n"
            "print(get_settings().backend)\n"
            "irjit.set_profiling_executor(False)\n"
            "try:\n"
            "    irjit.GraphExecutor(irjit.parse_ir('graph(%x : Tensor):\\n  return (%x)\\n'))"
            ".run(irjit.Tensor([1.0]))\n"
            "except ValueError as e:\n"
            "    print(e)\n")
    env = dict(os.environ, IRJIT_BACKEND="nativ")
    proc = subprocess.run([sys.executable, "-c", code], cwd=root, env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    name, error = proc.stdout.splitlines()
    assert name == "nativ"
    assert error.startswith("unknown backend 'nativ' (valid backends: interp")
