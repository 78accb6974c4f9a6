"""Scripted functions called through the graph executor (profiled, then specialized with
autodiff) give the outputs and gradients the plain interpreter gives on the same graph."""

from __future__ import annotations

import numpy as np
import pytest

import irjit
import irjit.jit
from irjit.ops.tensor import Tensor
from irjit.runtime.autograd import backward

from .script_support import load_cases

M = load_cases()


def _tensors(*shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [Tensor(rng.standard_normal(s), requires_grad=True) for s in shapes]


CASES = [
    (M.add_mul, [(3, 4), (3, 4)], ()),
    (M.tanh_linear, [(3, 4), (4, 5), (5,)], ()),
    (M.decision_gate, [(2, 3)], ()),
    (M.for_range, [(2, 3)], (3,)),
    (M.nested_if_in_loop, [(2, 3)], (6,)),
    (M.call_helper, [(2, 3)], ()),
    (M.methods, [(3, 4)], ()),
    (M.keyword_args, [(3, 4)], ()),
    (M.index_slice, [(4, 4)], ()),
    (M.early_return_loop, [(2, 3)], (5,)),
    (M.tuple_unpack, [(2, 3)], ()),
    (M.optional_scale, [(2, 3)], (0.5,)),
]


@pytest.mark.parametrize("fn,shapes,extra", CASES,
                         ids=[(c.values[0] if hasattr(c, "values") else c[0]).__name__ for c in CASES])
def test_outputs_and_gradients_equal_the_interpreters(fn, shapes, extra):
    scripted = irjit.jit.script(fn)
    reference = irjit.load(scripted.inlined_graph)
    for seed in range(3):  # the executor profiles on the first call and specializes after
        inputs = _tensors(*shapes, seed=seed)
        out = scripted(*inputs, *extra)
        want = reference.run(*[t.data for t in inputs], *extra)[0]
        np.testing.assert_allclose(out.data, want.data, rtol=1e-6, atol=1e-9)
        backward([out])
        want_grads = reference.backward()
        for i, t in enumerate(inputs):
            np.testing.assert_allclose(t.grad, want_grads[f"arg{i}"], rtol=1e-6, atol=1e-9)


def test_tuple_results_come_back_as_a_python_tuple():
    x, y = _tensors((2, 2), (2, 2))
    a, b = irjit.jit.script(M.tuple_return)(x, y)
    np.testing.assert_allclose(a.data, x.data + y.data)
    np.testing.assert_allclose(b.data, x.data - y.data)


def test_graph_for_shows_the_differentiable_graph_after_profiling():
    scripted = irjit.jit.script(M.tanh_linear)
    x, w, b = _tensors((3, 4), (4, 4), (4,))
    scripted(x, w, b)
    g = scripted.graph_for(x, w, b)
    kinds = [n.kind for n in g.walk()]
    assert "prim::RequiresGradCheck" in kinds and "prim::DifferentiableGraph" in kinds
    assert irjit.last_executed_optimized_graph() is not None


def test_keyword_arguments_and_defaults_bind_like_python():
    scripted = irjit.jit.script(M.optional_scale)
    (x,) = _tensors((2, 2))
    np.testing.assert_allclose(scripted(x).data, x.data)
    np.testing.assert_allclose(scripted(x, scale=3.0).data, 3 * x.data)
    with pytest.raises(TypeError, match="unexpected keyword argument 'bias'"):
        scripted(x, bias=1.0)


def test_callees_are_call_functions_in_graph_and_inlined_in_inlined_graph():
    scripted = irjit.jit.script(M.call_helper)
    assert [n.kind for n in scripted.graph.walk()].count("prim::CallFunction") == 2
    inlined = [n.kind for n in scripted.inlined_graph.walk()]
    assert "prim::CallFunction" not in inlined and inlined.count("aten::tanh") == 2
