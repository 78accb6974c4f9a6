"""Property tests: random pointwise / broadcast / reduction / view graphs, run with native
units and by the interpreter, agree in float32 and float64, with contiguous and
non-contiguous inputs, with and without bounds checks (IRJIT_NATIVE_CHECKS=1)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from irjit.compiler import parse_ir
from irjit.ops.tensor import Tensor
from irjit.runtime import no_grad
from irjit.runtime.interpreter import Interpreter
from irjit.runtime.native import NativeRunner

BINARY = ["aten::add({a}, {b}, %one)", "aten::sub({a}, {b}, %one)", "aten::mul({a}, {b})",
          "aten::maximum({a}, {b})", "aten::minimum({a}, {b})",
          "aten::where(aten_gt, {a}, {b})"]
UNARY = ["aten::neg({a})", "aten::abs({a})", "aten::relu({a})", "aten::mul({a}, %half)",
         "aten::add({a}, %two, %one)", "aten::clamp({a}, %mhalf, %half)"]


def _broadcasts(x, y) -> bool:
    try:
        np.broadcast_shapes(x, y)
    except ValueError:
        return False
    return True


@st.composite
def graphs(draw):
    """(graph text, input arrays) for a random graph over one full shape."""
    rank = draw(st.integers(1, 3))
    full = tuple(draw(st.lists(st.integers(1, 5), min_size=rank, max_size=rank)))
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    shapes = [full]
    for _ in range(draw(st.integers(0, 2))):
        drop = draw(st.integers(0, rank - 1))
        shapes.append(tuple(1 if draw(st.booleans()) else n for n in full[drop:]))
    lines, values = [], [(f"%in{i}", s) for i, s in enumerate(shapes)]
    full_values = ["%in0"]
    for k in range(draw(st.integers(1, 6))):
        out = f"%v{k}"
        kind = draw(st.sampled_from(["binary", "unary", "reduce", "view"]))
        a = draw(st.sampled_from(values))
        if kind == "binary":
            b = draw(st.sampled_from([v for v in values if _broadcasts(a[1], v[1])]))
            pattern = draw(st.sampled_from(BINARY))
            if "aten_gt" in pattern:
                lines.append(f"  %c{k} : Tensor = aten::gt({a[0]}, {b[0]})")
                pattern = pattern.replace("aten_gt", f"%c{k}")
            lines.append(f"  {out} : Tensor = " + pattern.format(a=a[0], b=b[0]))
            values.append((out, tuple(np.broadcast_shapes(a[1], b[1]))))
        elif kind == "unary":
            lines.append(f"  {out} : Tensor = " + draw(st.sampled_from(UNARY)).format(a=a[0]))
            values.append((out, a[1]))
        elif kind == "reduce":
            name = draw(st.sampled_from(["sum", "amax", "amin", "mean"]))
            a = draw(st.sampled_from([v for v in values if v[0] in full_values] or values))
            dim = draw(st.integers(0, len(a[1]) - 1)) if a[1] else 0
            if not a[1]:
                continue
            lines.append(f"  %d{k} : int[] = prim::Constant[value=[{dim}]]()")
            extra = ", %none" if name in ("sum", "mean") else ""
            lines.append(f"  {out} : Tensor = aten::{name}({a[0]}, %d{k}, %true{extra})")
            reduced = tuple(1 if i == dim else n for i, n in enumerate(a[1]))
            values.append((out, reduced))
            lines.append(f"  %r{k} : Tensor = aten::sub({a[0]}, {out}, %one)")
            values.append((f"%r{k}", a[1]))
            full_values.append(f"%r{k}")
        else:
            if len(a[1]) < 2 or a[0] not in [f"%in{i}" for i in range(len(shapes))]:
                continue
            lines.append(f"  {out} : Tensor = aten::transpose({a[0]}, %zero, %one)")
            t = (a[1][1], a[1][0]) + a[1][2:]
            lines.append(f"  %w{k} : Tensor = aten::neg({out})")
            values.append((f"%w{k}", t))
    outputs = [v[0] for v in values[len(shapes):]][-2:] or ["%in0"]
    header = ", ".join(f"%in{i} : Tensor" for i in range(len(shapes)))
    text = "\n".join([f"graph({header}):",
                      "  %zero : int = prim::Constant[value=0]()",
                      "  %one : int = prim::Constant[value=1]()",
                      "  %two : float = prim::Constant[value=2.5]()",
                      "  %half : float = prim::Constant[value=0.5]()",
                      "  %mhalf : float = prim::Constant[value=-0.5]()",
                      "  %true : bool = prim::Constant[value=1]()",
                      "  %none : NoneType = prim::Constant()",
                      *lines, f"  return ({', '.join(outputs)})"])
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    arrays = []
    for s in shapes:
        a = rng.standard_normal(s).astype(dtype)
        if draw(st.booleans()) and len(s) >= 2:  # a non-contiguous layout with the same values
            a = np.ascontiguousarray(a.swapaxes(0, 1)).swapaxes(0, 1)
        arrays.append(a)
    return text, arrays


def _run(text, arrays):
    expected = Interpreter(parse_ir(text)).run([Tensor(a.copy()) for a in arrays])
    runner = NativeRunner(parse_ir(text))
    with no_grad():
        for _ in range(2):  # the first call profiles (interpreted), the second runs native units
            got = runner.run([Tensor(a) for a in arrays])
    for e, g in zip(expected, got):
        assert g.data.shape == e.data.shape and g.data.dtype == e.data.dtype
        tol = 1e-5 if e.data.dtype == np.float32 else 1e-12
        np.testing.assert_allclose(g.data, e.data, rtol=tol, atol=tol)
    return runner


@pytest.fixture(params=[False, True], ids=["plain", "bounds-checked"])
def checks(request, monkeypatch):
    monkeypatch.setenv("IRJIT_NATIVE_CHECKS", "1" if request.param else "0")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(graphs())
def test_native_matches_the_interpreter(checks, case):
    runner = _run(*case)
    assert runner.stats.bailouts == 0
    assert runner.stats.nodes_native > 0 or "aten::" not in case[0]
