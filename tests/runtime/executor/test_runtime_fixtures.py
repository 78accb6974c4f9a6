"""Graphs that once ran wrong under the executors (tests/fixtures/runtime, written by
`tools/fixturegen/runtime_cases.py` with PyTorch 2.13): outputs and input gradients of the
third run, with gradients on, against PyTorch's profiling executor."""

from pathlib import Path

import numpy as np
import pytest

import irjit

CASES = Path(__file__).resolve().parents[2] / "fixtures" / "runtime"
NAMES = sorted(p.name for p in CASES.iterdir() if (p / "expected.npz").exists())


def _npz(path: Path) -> dict:
    if not path.exists():
        return {}
    with np.load(path) as f:
        return {k: f[k] for k in f.files}


@pytest.mark.parametrize("executor", ["interp", "legacy", "profiling"])
@pytest.mark.parametrize("name", NAMES)
def test_third_run_matches_pytorch(name, executor):
    case = CASES / name
    fn = irjit.load(case / "graph.ir", params=_npz(case / "params.npz") or None, executor=executor)
    inputs = _npz(case / "inputs.npz")
    args = [inputs[f"arg{i}"] for i in range(len(inputs))]
    expected = _npz(case / "expected.npz")
    for _ in range(3):
        out = fn(*args)
        grads = fn.backward()
    np.testing.assert_allclose(out, expected["out0"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(grads["arg0"], expected["grad.arg0"], rtol=1e-4, atol=1e-5)


def test_cast_to_int64_carries_no_gradient_inside_a_differentiable_graph():
    """d/dx of (int64(x) + float64(x)) * x is (int64(x) + x) + x: the int64 branch is a
    constant to autograd, in the DifferentiableGraph's `df` as in the tape."""
    case = CASES / "cast_int_double"
    fn = irjit.load(case / "graph.ir", executor="profiling")
    x = _npz(case / "inputs.npz")["arg0"]
    for _ in range(3):
        fn(x)
        grad = fn.backward()["arg0"]
    assert any(n.kind == "prim::DifferentiableGraph" for n in fn.executor.last_graph.walk())
    want = (x.astype(np.int64) + x.astype(np.float64)).astype(np.float32) + x
    np.testing.assert_allclose(grad, want, rtol=1e-6)


def test_cast_to_integral_dtype_marks_no_requires_grad():
    g = irjit.parse_ir((CASES / "cast_int_double" / "graph.ir").read_text())
    irjit.passes.run(g, "propagate_requires_grad")
    casts = {n.outputs[0].name: n.outputs[0].type.requires_grad
             for n in g.walk() if n.kind == "aten::to"}
    assert casts["a.1"] is False and casts["b.1"] is True


def _subgraphs(graph) -> list:
    return [n.attr("Subgraph") for n in graph.walk() if n.has_attr("Subgraph")]


@pytest.mark.parametrize("name", ["append_in_loop", "split_transpose_convs"])
def test_edgenext_append_then_cat_last_graph_is_the_graph_that_ran(name):
    """EdgeNeXt's pattern (a list filled by `append` in a loop or over a ModuleList, then
    `cat`), under the profiling executor with gradients (issue 12): after every run the
    executor's `last_graph` (and `last_executed_optimized_graph()`) is what that run executed:
    it still appends and concatenates, and run on its own (guards run the guarded code) it
    gives that run's output."""
    case = CASES / name
    params = _npz(case / "params.npz") or None
    fn = irjit.load(case / "graph.ir", params=params, executor="profiling")
    inputs = _npz(case / "inputs.npz")
    args = [inputs[f"arg{i}"] for i in range(len(inputs))]
    args = [a.item() if a.ndim == 0 and a.dtype.kind == "i" else a for a in args]
    graphs = []
    for _ in range(3):
        out = fn(*args)
        fn.backward()
        last = fn.executor.last_graph
        assert irjit.last_executed_optimized_graph() is last
        kinds = {n.kind for g in [last] + _subgraphs(last) for n in g.walk()}
        assert "aten::cat" in kinds and "aten::append" in kinds, str(last)  # (cat may be in a
        # DifferentiableGraph, whose Tensor[] input the ListConstruct outside it makes)
        again = irjit.load(last, params=params)(*args)
        np.testing.assert_allclose(again, out, rtol=1e-6, atol=1e-6)
        graphs.append(last)
    assert graphs[0] is not graphs[2]  # the profiled graph, then the optimized one
    np.testing.assert_allclose(out, _npz(case / "expected.npz")["out0"], rtol=1e-5, atol=1e-5)
