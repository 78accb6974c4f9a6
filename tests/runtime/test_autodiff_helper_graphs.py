"""The graphs of symbolic_script's helpers (runtime/autodiff_helper_graphs.py) compute what the
Python library functions compute, and a native runner inlines or folds them so that a `df`
that calls them (matmul, mm, bmm, permute, squeeze) runs its products natively."""

from __future__ import annotations

import numpy as np
import pytest

from irjit.compiler import parse_ir
from irjit.ops.tensor import Tensor
from irjit.runtime import no_grad
from irjit.runtime.autodiff_helper_graphs import helper_graphs
from irjit.runtime.interpreter import Interpreter
from irjit.runtime.native import NativeRunner

# matmul's backward as autodiff emits it when shapes are not static (ops/linalg.py)
MATMUL_BACKWARD = """graph(%g : Tensor, %a : Tensor, %b : Tensor):
  %bw : Function = prim::Constant[name="AD_matmul_bw_size"]()
  %tr : Function = prim::Constant[name="AD_mat_transpose"]()
  %a_size : int[] = aten::size(%a)
  %b_size : int[] = aten::size(%b)
  %bt : Tensor = prim::CallFunction(%tr, %b)
  %ga0 : Tensor = prim::CallFunction(%bw, %g, %bt, %a_size)
  %ga : Tensor = aten::_grad_sum_to_size(%ga0, %a_size)
  %at : Tensor = prim::CallFunction(%tr, %a)
  %gb0 : Tensor = prim::CallFunction(%bw, %at, %g, %b_size)
  %gb : Tensor = aten::_grad_sum_to_size(%gb0, %b_size)
  return (%ga, %gb)"""

# every branch of AD_matmul_bw_size: plain, batched (special fold), vector x matrix,
# matrix x vector (fold of a column), broadcast batches
SHAPES = [((3, 4), (4, 5)), ((2, 3, 4), (4, 5)), ((2, 3, 4), (2, 4, 5)), ((4,), (4, 5)),
          ((3, 4), (4,)), ((2, 3, 4), (4,)), ((4,), (2, 4, 5)), ((2, 1, 3, 4), (5, 4, 6)),
          ((4,), (4,))]


def _arguments(sa, sb, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(sa).astype(np.float32)
    b = rng.standard_normal(sb).astype(np.float32)
    g = rng.standard_normal(np.matmul(a, b).shape).astype(np.float32)
    return [Tensor(g), Tensor(a), Tensor(b)]


@pytest.mark.parametrize("sa,sb", SHAPES)
def test_the_helper_graphs_compute_what_the_library_functions_compute(sa, sb):
    args = _arguments(sa, sb)
    with no_grad():
        want = Interpreter(parse_ir(MATMUL_BACKWARD)).run(args)
        got = Interpreter(parse_ir(MATMUL_BACKWARD), functions=helper_graphs()).run(args)
    for x, y in zip(got, want):
        assert x.data.shape == y.data.shape
        np.testing.assert_allclose(x.data, y.data, rtol=1e-6, atol=1e-6)


def test_the_scalar_branch_multiplies():
    text = """graph(%a : Tensor, %b : Tensor, %s : int[]):
  %bw : Function = prim::Constant[name="AD_matmul_bw_size"]()
  %r : Tensor = prim::CallFunction(%bw, %a, %b, %s)
  return (%r)"""
    args = [Tensor(np.float32(2.0)), Tensor(np.arange(3, dtype=np.float32)), [3]]
    with no_grad():
        want = Interpreter(parse_ir(text)).run(args)[0].data
        got = Interpreter(parse_ir(text), functions=helper_graphs()).run(args)[0].data
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("sa,sb", SHAPES)
def test_matmul_backward_without_static_shapes_runs_natively(sa, sb):
    """The runner inlines the helpers; the ranks its key fixes fold their branches, sizes and
    sums-to-size, so the plan is native groups only (the fold of a column keeps its views
    of a view interpreted) and the gradients are the interpreter's."""
    runner = NativeRunner(parse_ir(MATMUL_BACKWARD))
    args = _arguments(sa, sb)
    with no_grad():
        want = Interpreter(parse_ir(MATMUL_BACKWARD)).run(args)
        runner.run(args)
        got = runner.run(_arguments(sa, sb))
    for x, y in zip(got, want):
        np.testing.assert_allclose(x.data, y.data, rtol=1e-5, atol=1e-5)
    plan = next(iter(runner._plans.values())).graph
    kinds = {n.kind for n in plan.walk()}
    assert not kinds & {"prim::CallFunction", "prim::If", "aten::size", "aten::_grad_sum_to_size"}
    if (sa, sb) != ((2, 3, 4), (4,)):
        assert runner.stats.nodes_interpreted == 0 and runner.stats.nodes_native > 0


def test_a_function_the_graph_defines_is_not_replaced():
    """A `functions` graph named like a helper is what the call runs: it stays a call."""
    own = parse_ir("""graph(%mat : Tensor):
  %r : Tensor = aten::neg(%mat)
  return (%r)""")
    text = """graph(%a : Tensor):
  %tr : Function = prim::Constant[name="AD_mat_transpose"]()
  %r : Tensor = prim::CallFunction(%tr, %a)
  return (%r)"""
    runner = NativeRunner(parse_ir(text), functions={"AD_mat_transpose": own})
    x = Tensor(np.ones((2, 3), np.float32))
    with no_grad():
        runner.run([x])
        out = runner.run([x])[0]
    np.testing.assert_array_equal(out.data, -np.ones((2, 3), np.float32))


# ---- the helpers df graphs spelled as symbolic_script call for views and mm/bmm

@pytest.mark.parametrize("name,args,want", [
    ("AD_mm_backward_self", [(2, 4), (3, 4)], lambda g, m: g @ m.T),
    ("AD_mm_backward_mat2", [(2, 4), (2, 3)], lambda g, s: s.T @ g),
    ("AD_bmm_backward_self", [(5, 2, 4), (5, 3, 4)], lambda g, m: g @ m.transpose(0, 2, 1)),
    ("AD_bmm_backward_mat2", [(5, 2, 4), (5, 2, 3)], lambda g, s: s.transpose(0, 2, 1) @ g),
])
def test_the_mm_helpers_compute_the_products(name, args, want):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in args]
    (got,) = Interpreter(helper_graphs()[name]).run([Tensor(a) for a in arrays])
    np.testing.assert_allclose(got.data, want(*arrays), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name,args,want_shape", [
    ("AD_permute_backward", [(4, 2, 3), [2, 0, -2]], (2, 3, 4)),
    ("AD_unsqueeze_to_0", [(2, 3), [1, 2, 1, 3]], (1, 2, 1, 3)),
    ("AD_unsqueeze_to_1", [(2, 3), 1, [2, 1, 3]], (2, 1, 3)),
    ("AD_unsqueeze_to_1", [(2, 3), 1, [2, 3]], (2, 3)),
])
def test_the_view_helpers_invert_the_view_and_fold_to_the_same(name, args, want_shape):
    """Run through their graphs, and folded (fold_helper_calls, constant lists) into a permute
    or a reshape: the same values."""
    from irjit.runtime.autodiff_helper_graphs import fold_helper_calls
    x = np.random.default_rng(1).standard_normal(args[0]).astype(np.float32)
    (got,) = Interpreter(helper_graphs()[name]).run([Tensor(x)] + args[1:])
    assert got.data.shape == want_shape
    consts = "\n".join(f"  %c{i} : {'int[]' if isinstance(a, list) else 'int'} = "
                       f"prim::Constant[value={a}]()" for i, a in enumerate(args[1:]))
    call = parse_ir(f"""graph(%g : Tensor):
  %fn : Function = prim::Constant[name="{name}"]()
{consts}
  %r : Tensor = prim::CallFunction(%fn, %g, {", ".join(f"%c{i}" for i in range(len(args) - 1))})
  return (%r)""")
    assert fold_helper_calls(call)
    assert all(n.kind != "prim::CallFunction" for n in call.nodes())
    (folded,) = Interpreter(call).run([Tensor(x)])
    np.testing.assert_array_equal(folded.data, got.data)


@pytest.mark.parametrize("view,shape", [
    ("%d : int[] = prim::Constant[value=[2, 0, -2]]()\n  %v : Tensor = aten::permute(%x, %d)", (3, 4, 2)),
    ("%v : Tensor = aten::squeeze(%x)", (3, 1, 4)),
    ("%d : int = prim::Constant[value=1]()\n  %v : Tensor = aten::squeeze(%x, %d)", (3, 1, 4)),
    ("%d : int[] = prim::Constant[value=[4, 3]]()\n  %v : Tensor = aten::view(%x, %d)", (3, 4)),
])
def test_views_under_grad_run_natively_through_their_helpers(view, shape, monkeypatch):
    from ..runtime.test_native_grad import _check
    cov, _, _ = _check(f"""graph(%x : Tensor):
  {view}
  %y : Tensor = aten::sigmoid(%v)
  return (%y)""", [shape], monkeypatch)
    assert dict(cov.interpreted) == {}
