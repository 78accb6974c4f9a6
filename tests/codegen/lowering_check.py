"""Checking a lowering rule: a graph runs natively (second call, after the profiled first) and
gives the interpreter's outputs, dtypes and shapes."""

from __future__ import annotations

import numpy as np

from irjit.compiler import parse_ir
from irjit.ops.tensor import Tensor
from irjit.runtime.autograd import no_grad
from irjit.runtime.interpreter import Interpreter
from irjit.runtime.native import NativeRunner


def interpreted(text: str, arrays: list) -> list:
    return Interpreter(parse_ir(text)).run([Tensor(np.array(a, copy=True)) for a in arrays])


def run_native(text: str, arrays: list, calls: int = 2) -> tuple[list, NativeRunner]:
    """Outputs of the last of `calls` runs through a NativeRunner (the first call profiles)."""
    runner = NativeRunner(parse_ir(text))
    with no_grad():
        for _ in range(calls):
            got = runner.run([Tensor(a.copy(order="K")) for a in arrays])  # calls may write inputs
    return got, runner


def assert_native_matches(text: str, arrays: list, all_native: bool = True) -> NativeRunner:
    """The native outputs equal the interpreter's; with `all_native`, no op node stayed
    interpreted and no unit bailed out."""
    expected = interpreted(text, arrays)
    got, runner = run_native(text, arrays)
    for e, g in zip(expected, got):
        e, g = e.data, g.data
        assert g.shape == e.shape and g.dtype == e.dtype, (g.shape, g.dtype, e.shape, e.dtype)
        if e.dtype.kind == "f":
            tol = 1e-5 if e.dtype == np.float32 else 1e-12
            np.testing.assert_allclose(g, e, rtol=tol, atol=tol)
        else:
            np.testing.assert_array_equal(g, e)
    if all_native:
        assert runner.stats.nodes_interpreted == 0, runner.stats.line()
        assert runner.stats.nodes_native > 0 and runner.stats.bailouts == 0, runner.stats.line()
    return runner
