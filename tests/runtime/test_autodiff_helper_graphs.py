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
from irjit.ops.types import TensorType
from irjit.runtime.native import NativeRunner
from irjit.runtime.native_specialization import inline_autodiff_helpers

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


@pytest.mark.parametrize("sa,sb", SHAPES)
def test_a_profiled_call_becomes_the_ops_its_arguments_pick_typed(sa, sb):
    """After a profiling run, a call becomes its helper's graph specialized for the recorded
    arguments: no branch on ranks, no nested call, every tensor typed, the same results."""
    g = parse_ir(MATMUL_BACKWARD)
    args = _arguments(sa, sb)
    env: dict = {}
    with no_grad():
        want = Interpreter(parse_ir(MATMUL_BACKWARD)).run(args)
        Interpreter(g).run_block(g.block, list(args), env)
        assert inline_autodiff_helpers(g, None, env)
        got = Interpreter(g).run(args)
    kinds = [n.kind for n in g.walk()]
    assert not {"prim::If", "prim::CallFunction", "aten::dim"} & set(kinds)
    assert len(kinds) <= 32  # (the whole graphs: 210 nodes)
    assert all(v.type.complete_sizes() is not None for n in g.walk()
               if n.kind != "aten::_grad_sum_to_size" for v in n.outputs if isinstance(v.type, TensorType))
    for x, y in zip(got, want):
        np.testing.assert_array_equal(x.data, y.data)


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


# ---- the reduction helpers (mean, var, std, logsumexp): their graphs against numpy, and folded

def _call(name: str, args: list) -> str:
    """A graph calling helper `name` on tensor inputs and constant arguments (a list, bool,
    number or None), numbered in order."""
    params, consts, operands = [], [], []
    for i, a in enumerate(args):
        if isinstance(a, np.ndarray):
            params.append(f"%t{i} : Tensor")
            operands.append(f"%t{i}")
            continue
        kind = ("int[]" if isinstance(a, list) else "bool" if isinstance(a, bool) else
                "NoneType" if a is None else "int" if isinstance(a, int) else "float")
        value = "" if a is None else f"[value={int(a) if isinstance(a, bool) else a}]"
        consts.append(f"  %c{i} : {kind} = prim::Constant{value}()")
        operands.append(f"%c{i}")
    returns = "int" if name in ("AD_safe_size", "AD_bool_to_int") else "Tensor"
    return "\n".join([f"graph({', '.join(params)}):", f'  %fn : Function = prim::Constant[name="{name}"]()',
                      *consts, f"  %r : {returns} = prim::CallFunction(%fn, {', '.join(operands)})",
                      "  return (%r)"])


def _unsqueezed(g, dims, n):
    for d in sorted({d % n for d in dims}):
        g = np.expand_dims(g, d)
    return g


_RNG = np.random.default_rng(3)
_X = _RNG.standard_normal((2, 3, 4)).astype(np.float32)
_S = np.asarray(_X[0, 0, 0])  # a 0-dim gradient


def _var_grad(g, x, dims, correction, keepdim):
    axes = tuple(range(x.ndim)) if dims is None else tuple(d % x.ndim for d in dims)
    if dims is not None and not keepdim and x.ndim > 1:
        g = _unsqueezed(g, dims, x.ndim)
    count = int(np.prod([x.shape[a] for a in axes]))
    return g * (x - x.mean(axis=axes, keepdims=True)) * 2.0 / (count - correction)


def _lse_grad(g, x, r, dims, keepdim):
    if not keepdim:
        g, r = _unsqueezed(g, dims, x.ndim), _unsqueezed(r, dims, x.ndim)
    return g * np.exp(x - r)


def _run_and_fold(name, args):
    """The helper's result called through its graph, and again once `fold_helper_calls`
    turned the call (its tensors typed) into plain ops."""
    from irjit.runtime.autodiff_helper_graphs import fold_helper_calls
    tensors = [Tensor(np.ascontiguousarray(a)) for a in args if isinstance(a, np.ndarray)]
    with no_grad():
        (got,) = Interpreter(parse_ir(_call(name, args)), functions=helper_graphs()).run(tensors)
        folded = parse_ir(_call(name, args))
        for v, t in zip(folded.inputs, tensors):
            v.type = _tensor_type(t)
        assert fold_helper_calls(folded)
        assert all(n.kind != "prim::CallFunction" for n in folded.walk())
        (again,) = Interpreter(folded).run(tensors)
    return got, again


@pytest.mark.parametrize("name,args,want", [
    ("AD_unsqueeze_multiple", [_X[:, 0, :], [1], 3], _X[:, :1, :]),
    ("AD_unsqueeze_multiple", [_X[0, 0, :], [-3, 1], 3], _X[:1, :1, :]),
    ("AD_sum_backward", [_X[:, 0, :], [2, 3, 4], [1], False], np.broadcast_to(_X[:, :1, :], (2, 3, 4))),
    ("AD_sum_backward", [_X[:1, :, :1], [2, 3, 4], [0, 2], True], np.broadcast_to(_X[:1, :, :1], (2, 3, 4))),
    ("AD_sum_backward", [_X[0, :, 0], [2, 3, 4], [0, -1], False], np.broadcast_to(_X[:1, :, :1], (2, 3, 4))),
    ("AD_sum_backward", [_S, [2, 3, 4], None, False], np.broadcast_to(_S, (2, 3, 4))),
    ("AD_safe_size", [[2, 3, 4], [0, 2]], 8),
    ("AD_safe_size", [[2, 3, 4], None], 24),
    ("AD_safe_size", [[], [0]], 1),
    ("AD_bool_to_int", [True], 1),
    ("AD_bool_to_int", [False], 0),
    ("AD_var_backward_0", [_S, _X, 1], _var_grad(_S, _X, None, 1, False)),
    ("AD_var_backward_1", [_X[:, 0, :], _X, [1], 0, False], _var_grad(_X[:, 0, :], _X, [1], 0, False)),
    ("AD_var_backward_1", [_X[:, :1, :1], _X, [1, -1], 1, True], _var_grad(_X[:, :1, :1], _X, [1, 2], 1, True)),
    ("AD_var_backward_2", [_X[:, 0, :], _X, [1], None, False], _var_grad(_X[:, 0, :], _X, [1], 1, False)),
    ("AD_var_backward_2", [_S, _X, None, 2, False], _var_grad(_S, _X, None, 2, False)),
    ("AD_var_backward_2", [_X[0, 0, :], _X[0, 0, :], [0], 1, False],
     _var_grad(_X[0, 0, :], _X[0, 0, :], [0], 1, False)),
    ("AD_logsumexp_backward", [_X[:, 0, :], _X, _X[:, 1, :], [1], False], _lse_grad(_X[:, 0, :], _X, _X[:, 1, :], [1], False)),
    ("AD_logsumexp_backward", [_X[:, :1, :], _X, _X[:, 1:2, :], [1], True],
     _lse_grad(_X[:, :1, :], _X, _X[:, 1:2, :], [1], True)),
])
def test_the_reduction_helpers_compute_symbolic_scripts_formulas_and_fold_to_the_same(name, args, want):
    """Each graph (called as a df calls it, its list and flag arguments constants) computes
    symbolic_script's formula; `fold_helper_calls` turns the call into plain ops (or a number)
    once the tensors' types are complete, with the same values."""
    got, again = _run_and_fold(name, args)
    if isinstance(want, int):
        assert got == again == want
        return
    assert got.data.shape == np.shape(want)
    np.testing.assert_allclose(got.data, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(again.data, got.data)


def _tensor_type(t):
    from irjit.compiler.codegen.lower import contiguous_strides
    from irjit.ops.types import TensorType
    shape = tuple(t.data.shape)
    return TensorType("Float", shape, contiguous_strides(shape), None, "cpu")


def test_the_tensor_helpers_stay_calls_until_the_types_say_the_ranks():
    """`AD_var_backward_*` and `AD_logsumexp_backward` fold only when the tensor's complete
    type gives its rank and sizes (a native runner folds after profiling)."""
    from irjit.runtime.autodiff_helper_graphs import fold_helper_calls
    g = parse_ir(_call("AD_var_backward_2", [_X[:, 0, :], _X, [1], None, False]))
    assert not fold_helper_calls(g)
    assert any(n.kind == "prim::CallFunction" for n in g.nodes())


@pytest.mark.parametrize("reduction,shape", [
    ("%d : int[] = prim::Constant[value=[1]]()\n  %y : Tensor = aten::mean(%x, %d, %f, %none)", (2, 3, 4)),
    ("%d : int[] = prim::Constant[value=[0, 2]]()\n  %y : Tensor = aten::mean(%x, %d, %t, %none)", (2, 3, 4)),
    ("%y : Tensor = aten::mean(%x, %none)", (2, 3)),
    ("%d : int[] = prim::Constant[value=[1]]()\n  %y : Tensor = aten::logsumexp(%x, %d, %f)", (2, 3, 4)),
    ("%y : Tensor = aten::var(%x, %t)", (3, 4)),
    ("%d : int[] = prim::Constant[value=[-1]]()\n  %y : Tensor = aten::std(%x, %d, %t, %f)", (2, 3, 4)),
    ("%d : int[] = prim::Constant[value=[0]]()\n  %c : int = prim::Constant[value=0]()\n"
     "  %y : Tensor = aten::var(%x, %d, %c, %t)", (3, 4)),
])
def test_reductions_under_grad_run_natively_through_their_helpers(reduction, shape, monkeypatch):
    """mean/var/std/logsumexp differentiated as symbolic_script does (`AD_sum_backward`,
    `AD_safe_size`, `AD_var_backward_*`, `AD_logsumexp_backward`, a cast to the input's dtype
    code): forward and backward run natively with the interpreter's gradients."""
    from ..runtime.test_native_grad import _check
    cov, _, _ = _check(f"""graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %f : bool = prim::Constant[value=0]()
  %t : bool = prim::Constant[value=1]()
  {reduction}
  %z : Tensor = aten::tanh(%y)
  return (%z)""", [shape], monkeypatch)
    assert dict(cov.interpreted) == {}


# ---- the adaptive average pools' helpers

_P = _RNG.standard_normal((2, 3, 4, 6)).astype(np.float32)
_P3 = _RNG.standard_normal((2, 2, 3, 4, 2)).astype(np.float32)
_L = _RNG.standard_normal((2, 3, 6)).astype(np.float32)


def _pool_grad(x, g, nd):
    from irjit.ops.nn_pool import adaptive_avg_pool_backward
    return adaptive_avg_pool_backward(g, x, nd)


@pytest.mark.parametrize("name,args,want", [
    ("AD_adaptive_avg_pool2d_backward", [_P[:, :, :1, :1], _P, [1, 1]], _pool_grad(_P, _P[:, :, :1, :1], 2)),
    ("AD_adaptive_avg_pool2d_backward", [_P[:, :, :2, :3], _P, [2, 3]], _pool_grad(_P, _P[:, :, :2, :3], 2)),
    ("AD_adaptive_avg_pool2d_backward", [_P[0, :, :1, :1], _P[0], [1, 1]], _pool_grad(_P[0], _P[0, :, :1, :1], 2)),
    ("AD_adaptive_avg_pool3d_backward", [_P3[..., :1, :1, :1], _P3, [1, 1, 1]],
     _pool_grad(_P3, _P3[..., :1, :1, :1], 3)),
    ("AD_adaptive_avg_pool3d_backward", [_P3[..., :1, :2, :1], _P3, [1, 2, 1]],
     _pool_grad(_P3, _P3[..., :1, :2, :1], 3)),
    ("AD_adaptive_avg_pool1d_backward", [_L[:, :, :1], _L, [1]], _pool_grad(_L, _L[:, :, :1], 1)),
    ("AD_adaptive_avg_pool1d_backward", [_L[:, :, :4], _L, [4]], _pool_grad(_L, _L[:, :, :4], 1)),
])
def test_the_adaptive_pool_helpers_compute_the_backward_and_fold_to_the_same(name, args, want):
    """symbolic_script's `AD_adaptive_avg_pool{1,2,3}d_backward` (a global pool's gradient an
    expand over the window size, others the backward op; 1-D through 2-D) against the pooling
    backward, run through their graphs and folded with constant output sizes."""
    got, again = _run_and_fold(name, args)
    np.testing.assert_allclose(got.data, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(again.data, got.data, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("pool,shape", [
    ("%o : int[] = prim::Constant[value=[1, 1]]()\n  %y : Tensor = aten::adaptive_avg_pool2d(%x, %o)", (2, 3, 4, 4)),
    ("%o : int[] = prim::Constant[value=[2, 2]]()\n  %y : Tensor = aten::adaptive_avg_pool2d(%x, %o)", (2, 3, 4, 4)),
    ("%o : int[] = prim::Constant[value=[1]]()\n  %y : Tensor = aten::adaptive_avg_pool1d(%x, %o)", (2, 3, 6)),
    ("%k : int[] = prim::Constant[value=[2, 2]]()\n  %p : int[] = prim::Constant[value=[0, 0]]()\n"
     "  %d : int[] = prim::Constant[value=[1, 1]]()\n  %f : bool = prim::Constant[value=0]()\n"
     "  %y : Tensor = aten::max_pool2d(%x, %k, %k, %p, %d, %f)", (2, 3, 4, 4)),
    ("%k : int[] = prim::Constant[value=[2, 2]]()\n  %p : int[] = prim::Constant[value=[0, 0]]()\n"
     "  %f : bool = prim::Constant[value=0]()\n  %t : bool = prim::Constant[value=1]()\n"
     "  %n : NoneType = prim::Constant()\n  %y : Tensor = aten::avg_pool2d(%x, %k, %k, %p, %f, %t, %n)",
     (2, 3, 4, 4)),
])
def test_pools_under_grad_run_natively_through_their_helpers(pool, shape, monkeypatch):
    """Pooling differentiated as symbolic_script does (max_pool2d through
    max_pool2d_with_indices and its captured indices, the adaptive pools through their
    `AD_` helpers): forward and backward native, with the interpreter's gradients."""
    from ..runtime.test_native_grad import _check
    cov, _, _ = _check(f"""graph(%x : Tensor):
  {pool}
  %z : Tensor = aten::tanh(%y)
  return (%z)""", [shape], monkeypatch)
    assert set(cov.interpreted) <= {"aten::adaptive_avg_pool1d"}  # (1-D adaptive pooling: no lowering yet)
