"""DifferentiableGraphs whose inputs or outputs are `Tensor[]` (cat of a list built outside
the graph, split whose list is unpacked outside it), as PyTorch's slicer makes them: under the
profiling executor (with the interpreter and with native code) and the legacy one, results and
gradients are the interpreter's, and the list elements get their gradients through the
DifferentiableGraphOp."""

from __future__ import annotations

import numpy as np
import pytest

import irjit

CAT = """graph(%x : Tensor, %y : Tensor):
  %one : int = prim::Constant[value=1]()
  %m : Tensor = aten::gt(%x, %y)
  %z : Tensor = aten::where(%m, %x, %y)
  %s : Tensor = aten::sub(%x, %y, %one)
  %l : Tensor[] = prim::ListConstruct(%z, %s)
  %c : Tensor = aten::cat(%l, %one)
  %t : Tensor = aten::tanh(%c)
  return (%t)"""

SPLIT = """graph(%x : Tensor, %y : Tensor):
  %two : int = prim::Constant[value=2]()
  %zero : int = prim::Constant[value=0]()
  %q : Tensor = aten::tanh(%x)
  %e : Tensor = aten::exp(%q)
  %p : Tensor[] = aten::split(%e, %two, %zero)
  %a : Tensor, %b : Tensor = prim::ListUnpack(%p)
  %r : Tensor = aten::mul(%a, %b)
  %w : Tensor = aten::mul(%r, %y)
  %v : Tensor = aten::sigmoid(%w)
  return (%v, %a)"""


def _list_typed_differentiable_graphs(graph) -> list:
    return [n for n in graph.walk() if n.kind == "prim::DifferentiableGraph"
            and any(str(v.type) == "Tensor[]" for v in list(n.inputs) + list(n.outputs))]


@pytest.mark.parametrize("executor,backend", [("profiling", "interp"), ("profiling", "native"),
                                              ("legacy", "interp")])
@pytest.mark.parametrize("text,shapes", [(CAT, [(4, 3), (4, 3)]), (SPLIT, [(4, 3), (2, 3)])],
                         ids=["cat", "split"])
def test_tensor_lists_cross_a_differentiable_graph(text, shapes, executor, backend):
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    fn = irjit.load(irjit.parse_ir(text), executor=executor, backend=backend)
    ref = irjit.load(irjit.parse_ir(text), executor="interp")
    for _ in range(4):
        outs = fn.run(*args, requires_grad=True)
        want = ref.run(*args, requires_grad=True)
        for o, w in zip(outs, want):
            np.testing.assert_allclose(o.data, w.data, rtol=1e-5, atol=1e-6)
        got, expected = fn.backward(), ref.backward()
        assert sorted(got) == sorted(expected) == ["arg0", "arg1"]
        for k in expected:
            np.testing.assert_allclose(got[k], expected[k], rtol=1e-5, atol=1e-6, err_msg=k)
    assert _list_typed_differentiable_graphs(fn.executor.last_graph)
    assert getattr(fn.executor, "bailouts", 0) == 0  # (the legacy executor has no guards)


def test_cat_of_a_list_built_outside_matches_pytorch_2_13():
    """PyTorch 2.13's `last_executed_optimized_graph()` after run 2 of `where(c > 0, c, 0.1 *
    c)` for `c = cat([x, y], 1)` with inputs that require grad (fixture 0569): the list is built
    outside the DifferentiableGraph, which takes it as a `Tensor[]` and, having no tensor
    input, is not guarded (the comparison is inside: it needs no formula); the same graph up
    to value numbering (top level), with the interpreter's gradients."""
    import re
    from pathlib import Path
    from irjit.runtime.loader import Function
    fixtures = Path(__file__).resolve().parents[2] / "fixtures" / "generated" / "roundtrip"
    want = (fixtures / "0569_prof_fn_cat_where_grad_run2.ir").read_text()
    fn = Function(irjit.parse_ir((fixtures / "0344_script_fn_cat_where.ir").read_text()),
                  executor="profiling")
    ref = Function(irjit.parse_ir((fixtures / "0344_script_fn_cat_where.ir").read_text()),
                   executor="interp")
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    for _ in range(2):
        out, want_out = fn.run(x, x.copy()), ref.run(x, x.copy())
        np.testing.assert_allclose(out[0].data, want_out[0].data, rtol=1e-6)
        got, expected = fn.backward(), ref.backward()
        for k in expected:
            np.testing.assert_allclose(got[k], expected[k], rtol=1e-6, err_msg=k)

    def top(text):
        head = text.split("\nwith ")[0]
        names: dict = {}
        return re.sub(r"%(\d+)\b", lambda m: "%" + names.setdefault(m.group(1), str(len(names))), head)
    assert top(str(fn.executor.last_graph)) == top(want)


@pytest.mark.parametrize("executor,backend", [("profiling", "interp"), ("profiling", "native"),
                                              ("legacy", "interp")])
def test_backward_leaves_the_forward_graph_last_executed(executor, backend):
    """`df` runs through an executor of its own that does not record itself (nor do the
    executors it makes) as `last_executed_optimized_graph()`: after backward the graph shown
    is still the one the forward call ran, as PyTorch's backward leaves it. f's executor
    records nothing either: the forward's executor records its own graph after f ran."""
    from irjit.runtime.executor.counters import last_executed_optimized_graph
    rng = np.random.default_rng(1)
    args = [rng.standard_normal((4, 3)).astype(np.float32) for _ in range(2)]
    fn = irjit.load(irjit.parse_ir(CAT), executor=executor, backend=backend)
    for _ in range(4):
        fn.run(*args, requires_grad=True)
        forward = last_executed_optimized_graph()
        assert forward is fn.executor.last_graph
        fn.backward()
        assert last_executed_optimized_graph() is forward
    assert any(n.kind == "prim::DifferentiableGraph" for n in forward.walk())
    plans = [p for p in [getattr(fn.executor, "optimized_plan", None)] +
             list(getattr(fn.executor, "plans", {}).values()) if p is not None]
    ops = [op for p in plans for op in p._ops.values()]
    assert ops
    for p in plans:
        for op in p._ops.values():
            df = p._executors[id(op.gradient.df)]
            assert not df.shows_last and df._make_child(op.gradient.df).shows_last is False
            # (nor does f's: the executor running the forward records its graph after it)
            assert not p._executors[id(op.gradient.f)].shows_last
