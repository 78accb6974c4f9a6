"""Specialization-time folds of native plans (runtime/native_specialization.py): only what the
plan's key (tensor layouts, int-list values, None) determines becomes a constant."""

from __future__ import annotations

import numpy as np

from irjit.compiler import parse_ir
from irjit.ops.tensor import Tensor
from irjit.runtime import no_grad
from irjit.runtime.interpreter import Interpreter
from irjit.runtime.native import NativeRunner
from irjit.runtime.native_specialization import (determined_values, fold_defined_gradients,
                                                 hoist_loop_products, sink_views,
                                                 specialize_shapes, transpose_products)


def _kinds(graph) -> list[str]:
    return [n.kind for n in graph.walk() if n.kind != "prim::Constant"]


def _names(values) -> set[str]:
    return {v.name for v in values}


def test_sizes_computed_from_a_number_input_are_not_folded():
    """Numbers are keyed by type only: a shape made from one differs between calls."""
    text = """graph(%x : Tensor, %n : int):
  %none : NoneType = prim::Constant()
  %s : int[] = prim::ListConstruct(%n)
  %z : Tensor = aten::zeros(%s, %none, %none, %none, %none)
  %sz : int[] = aten::size(%z)
  return (%sz)"""
    runner = NativeRunner(parse_ir(text))
    x = Tensor(np.zeros(3, np.float32))
    with no_grad():
        assert runner.run([x, 2]) == [[2]]
        assert runner.run([x, 3]) == [[3]]


def test_determined_values_inside_loops_are_the_loop_invariant_ones():
    g = parse_ir("""graph(%x : Float(2, 3, strides=[3, 1], device=cpu), %n : int):
  %true : bool = prim::Constant[value=1]()
  %r : Tensor = prim::Loop(%n, %true, %x)
    block0(%i : int, %acc : Tensor):
      %inv : Tensor = aten::tanh(%x)
      %var : Tensor = aten::mul(%acc, %inv)
      %cnt : Tensor = aten::mul(%x, %i)
      -> (%true, %var)
  %after : Tensor = aten::relu(%r)
  return (%after)""")
    known = _names(determined_values(g))
    assert {"x", "inv", "cnt"} <= known  # a pointwise op's shape ignores its number operands
    assert not {"n", "i", "acc", "var", "r", "after"} & known


def test_mutated_lists_and_in_place_tensors_are_not_determined():
    g = parse_ir("""graph(%x : Float(2, 3, strides=[3, 1], device=cpu), %s : int[]):
  %one : int = prim::Constant[value=1]()
  %l : int[] = prim::ListConstruct(%one)
  %a : int[] = aten::append(%l, %one)
  %y : Tensor = aten::relu(%x)
  %z : Tensor = aten::unsqueeze_(%y, %one)
  return (%l, %z, %s)""")
    known = _names(determined_values(g))
    assert "s" in known and not {"l", "y"} & known


def test_shape_bookkeeping_of_a_backward_graph_folds_away():
    """`_size_if_not_equal` of folded sizes is constant, `_grad_sum_to_size` by None or by
    the input's own sizes is the identity, and a real reduction stays."""
    text = """graph(%g : Tensor, %b : Tensor, %none : int[]?):
  %sg : int[] = aten::size(%g)
  %sb : int[] = aten::size(%b)
  %k : int[]? = aten::_size_if_not_equal(%sb, %sg)
  %same : int[]? = aten::_size_if_not_equal(%sg, %sg)
  %r : Tensor = aten::_grad_sum_to_size(%g, %none)
  %q : Tensor = aten::_grad_sum_to_size(%r, %same)
  %gb : Tensor = aten::_grad_sum_to_size(%q, %k)
  return (%q, %gb)"""
    rng = np.random.default_rng(0)
    g, b = Tensor(rng.standard_normal((4, 5)).astype(np.float32)), Tensor(np.zeros(5, np.float32))
    runner = NativeRunner(parse_ir(text))
    expected = Interpreter(parse_ir(text)).run([g, b, None])
    for _ in range(2):
        with no_grad():
            got = runner.run([g, b, None])
        for x, y in zip(got, expected):
            np.testing.assert_allclose(x.data, y.data, rtol=1e-6)
    plan = next(iter(runner._plans.values())).graph
    kinds = [n.kind for n in plan.walk()] + [m.kind for n in plan.walk() if n.has_attr("Subgraph")
                                             for m in n.attr("Subgraph").walk()]
    assert "aten::size" not in kinds and "aten::_size_if_not_equal" not in kinds
    assert kinds.count("aten::_grad_sum_to_size") == 1  # the sum over the broadcast dim


def test_gradient_bookkeeping_folds_on_defined_tensors():
    g = parse_ir("""graph(%a : Tensor, %b : Tensor):
  %z : Tensor = prim::AutogradZero()
  %s : Tensor = prim::AutogradAdd(%a, %z)
  %c : int = prim::AutogradAnyNonZero(%s)
  %r : Tensor = prim::If(%c)
    block0():
      %t : Tensor = aten::tanh(%s)
      -> (%t)
    block1():
      %u : Tensor = prim::AutogradZero()
      -> (%u)
  %o : Tensor = prim::AutogradAdd(%r, %b)
  return (%o)""")
    assert fold_defined_gradients(g.block, set(g.inputs))
    assert [n.kind for n in g.nodes() if n.outputs and n.output.uses] == ["aten::tanh", "prim::Constant",
                                                                          "aten::add"]


def test_an_undefined_gradient_keeps_its_branch():
    g = parse_ir("""graph(%a : Tensor, %b : Tensor?):
  %c : int = prim::AutogradAnyNonZero(%b)
  %r : Tensor = prim::If(%c)
    block0():
      %t : Tensor = aten::tanh(%b)
      -> (%t)
    block1():
      %u : Tensor = prim::AutogradZero()
      -> (%u)
  return (%r)""")
    assert not fold_defined_gradients(g.block, {g.inputs[0]})
    assert "prim::If" in _kinds(g)


def test_a_transposed_product_becomes_a_product_of_transposes():
    text = """graph(%x : Float(6, 4, strides=[4, 1], device=cpu), %g : Float(6, 3, strides=[3, 1], device=cpu)):
  %xt : Float(4, 6, strides=[1, 4], device=cpu) = aten::t(%x)
  %m : Float(4, 3, strides=[3, 1], device=cpu) = aten::matmul(%xt, %g)
  %w : Float(3, 4, strides=[1, 3], device=cpu) = aten::t(%m)
  return (%w)"""
    g = parse_ir(text)
    assert transpose_products(g)
    assert _kinds(g) == ["aten::t", "aten::t", "aten::t", "aten::matmul"]
    assert g.outputs[0].type.strides == (4, 1)
    rng = np.random.default_rng(0)
    xs = [Tensor(rng.standard_normal(s).astype(np.float32)) for s in [(6, 4), (6, 3)]]
    with no_grad():
        np.testing.assert_allclose(Interpreter(g).run(xs)[0].data,
                                   Interpreter(parse_ir(text)).run(xs)[0].data, rtol=1e-5)


def test_a_product_used_elsewhere_is_not_rewritten():
    g = parse_ir("""graph(%a : Float(2, 3, strides=[3, 1], device=cpu), %b : Float(3, 2, strides=[2, 1], device=cpu)):
  %m : Float(2, 2, strides=[2, 1], device=cpu) = aten::matmul(%a, %b)
  %w : Float(2, 2, strides=[1, 2], device=cpu) = aten::t(%m)
  return (%w, %m)""")
    assert not transpose_products(g)


def test_views_sink_to_their_first_user_unless_something_writes_in_between():
    g = parse_ir("""graph(%x : Float(2, 3, strides=[3, 1], device=cpu), %y : Float(2, 3, strides=[3, 1], device=cpu)):
  %v : Float(3, 2, strides=[1, 3], device=cpu) = aten::t(%x)
  %a : Float(2, 3, strides=[3, 1], device=cpu) = aten::tanh(%y)
  %r : Float(3, 2, strides=[2, 1], device=cpu) = aten::relu(%v)
  return (%r, %a)""")
    assert sink_views(g)
    assert _kinds(g) == ["aten::tanh", "aten::t", "aten::relu"]
    blocked = parse_ir("""graph(%x : Float(2, 3, strides=[3, 1], device=cpu)):
  %v : Float(3, 2, strides=[1, 3], device=cpu) = aten::t(%x)
  %w : Float(2, 3, strides=[3, 1], device=cpu) = aten::relu_(%x)
  %r : Float(3, 2, strides=[2, 1], device=cpu) = aten::relu(%v)
  return (%r)""")
    assert not sink_views(blocked)


def test_specialize_shapes_folds_dtype_dim_and_numel_of_determined_tensors():
    g = parse_ir("""graph(%x : Float(2, 3, strides=[3, 1], device=cpu)):
  %d : int = prim::dtype(%x)
  %k : int = aten::dim(%x)
  %n : int = aten::numel(%x)
  return (%d, %k, %n)""")
    specialize_shapes(g, [Tensor(np.zeros((2, 3), np.float32))])
    assert _kinds(g) == []
    assert [v.node.attr("value") for v in g.outputs] == [6, 2, 6]


def test_module_attributes_the_graph_reads_are_part_of_the_plans_key():
    """A parameter's sizes fold like an input's: replacing it by one of another shape makes
    a new plan, never a stale constant."""
    from irjit.runtime.module import Module
    text = """graph(%self : __torch__.M, %x : Tensor):
  %w : Tensor = prim::GetAttr[name="w"](%self)
  %b : Tensor? = prim::GetAttr[name="b"](%self)
  %s : int[] = aten::size(%w)
  %y : Tensor = aten::add(%x, %w, %b)
  return (%s, %y)"""
    runner = NativeRunner(parse_ir(text))
    m = Module("__torch__.M")
    x = Tensor(np.ones((2, 3), np.float32))
    for shape in [(2, 3), (3,), (2, 3)]:
        m.set("w", Tensor(np.ones(shape, np.float32)))
        m.set("b", 2)
        with no_grad():
            sizes, y = runner.run([m, x])
        assert sizes == list(shape)
        np.testing.assert_array_equal(y.data, np.full((2, 3), 3, np.float32))
    assert len(runner._plans) == 2


def test_a_graph_that_writes_attributes_does_not_key_them():
    g = parse_ir("""graph(%self : __torch__.M, %x : Tensor):
  %w : Tensor = prim::GetAttr[name="w"](%self)
   = prim::SetAttr[name="w"](%self, %x)
  return (%w)""")
    from irjit.runtime.native_specialization import attribute_reads
    assert attribute_reads(g) == {}


def test_a_three_argument_where_has_a_determined_shape():
    """`aten::where` is data-dependent only in its one-argument form (indices of nonzeros)."""
    g = parse_ir("""graph(%x : Float(2, 3, strides=[3, 1], device=cpu), %y : Float(3, strides=[1], device=cpu)):
  %zero : int = prim::Constant[value=0]()
  %c : Tensor = aten::gt(%x, %zero)
  %w : Tensor = aten::where(%c, %x, %y)
  %idx : Tensor[] = aten::where(%c)
  return (%w, %idx)""")
    known = _names(determined_values(g))
    assert {"c", "w"} <= known and "idx" not in known


def test_a_bool_module_attribute_is_a_constant_of_its_plan():
    """Batch norm's `training` flag read from the module: each value gets its own plan, in
    which the flag is a constant (so the op decomposes), never a stale one."""
    from irjit.runtime.module import Module
    text = """graph(%self : __torch__.M, %x : Tensor):
  %t : bool = prim::GetAttr[name="training"](%self)
  %y : Tensor = prim::If(%t)
    block0():
      %one : int = prim::Constant[value=1]()
      %a : Tensor = aten::add(%x, %one, %one)
      -> (%a)
    block1():
      -> (%x)
  return (%y)"""
    runner = NativeRunner(parse_ir(text))
    m = Module("__torch__.M")
    x = Tensor(np.zeros((2, 3), np.float32))
    for training in [True, False, True, False]:
        m.set("training", training)
        with no_grad():
            (y,) = runner.run([m, x])
        np.testing.assert_array_equal(y.data, np.full((2, 3), float(training), np.float32))
    assert len(runner._plans) == 2
    for plan in runner._plans.values():
        assert not any(n.kind in ("prim::GetAttr", "prim::If") for n in plan.graph.walk())


def test_a_multi_output_backward_op_with_a_full_constant_mask_returns_defined_gradients():
    """linear_backward with output_mask [True, True, True] makes three defined tensors, so a
    branch on one of them folds; with a mask that leaves one out nothing is assumed."""
    text = """graph(%x : Float(6, 4, strides=[4, 1], device=cpu),
      %g : Float(6, 3, strides=[3, 1], device=cpu), %w : Float(3, 4, strides=[4, 1], device=cpu),
      %mask : bool[]):
  %gi : Float(6, 4, strides=[4, 1], device=cpu), %gw : Float(3, 4, strides=[4, 1], device=cpu), %gb : Float(3, strides=[1], device=cpu) = aten::linear_backward(%x, %g, %w, %mask)
  %c : int = prim::AutogradAnyNonZero(%gw)
  %r : Tensor = prim::If(%c)
    block0():
      %t : Tensor = aten::t(%gw)
      -> (%t)
    block1():
      %u : Tensor = prim::AutogradZero()
      -> (%u)
  return (%gi, %r)"""

    def with_mask(mask):
        g = parse_ir(text)
        g.set_insert_point(g.block.first_node)
        g.inputs[3].replace_all_uses_with(g.insert_constant(mask))
        g.erase_input(3)
        return g
    full = with_mask([True, True, True])
    assert fold_defined_gradients(full.block, set(full.inputs))
    assert "prim::If" not in _kinds(full)
    partial = with_mask([True, False, True])
    assert not fold_defined_gradients(partial.block, set(partial.inputs))
    assert "prim::If" in _kinds(partial)


def test_an_undefined_input_folds_like_autograd_zero():
    """A vjp the plan's key records as None is a None constant: AutogradAdd passes the other
    side through, and a branch on it alone takes its zero side."""
    g = parse_ir("""graph(%a : Tensor, %b : Tensor?):
  %s : Tensor = prim::AutogradAdd(%b, %a)
  %c : int = prim::AutogradAnyNonZero(%b)
  %r : Tensor = prim::If(%c)
    block0():
      %t : Tensor = aten::tanh(%b)
      -> (%t)
    block1():
      %u : Tensor = prim::AutogradZero()
      -> (%u)
  return (%s, %r)""")
    specialize_shapes(g, [Tensor(np.zeros(2, np.float32)), None])
    assert _kinds(g) == ["prim::AutogradZero"]
    assert g.outputs[0] is g.inputs[0]


def test_profile_records_are_dropped_so_a_transposed_product_still_folds():
    """A profiling executor's plan keeps `prim::profile` records between ops; the runner's
    copy drops them, so `t(matmul)` becomes one product and its view joins the unit."""
    text = """graph(%x : Float(6, 4, strides=[4, 1], device=cpu), %g : Float(6, 3, strides=[3, 1], device=cpu)):
  %xt : Float(4, 6, strides=[1, 4], device=cpu) = aten::t(%x)
  %m : Float(4, 3, strides=[3, 1], device=cpu) = aten::matmul(%xt, %g)
  %p : Float(4, 3, strides=[3, 1], device=cpu) = prim::profile[profiled_type=Float(4, 3, strides=[3, 1], requires_grad=0, device=cpu), seen_none=0](%m)
  %w : Float(3, 4, strides=[1, 3], device=cpu) = aten::t(%p)
  return (%w)"""
    runner = NativeRunner(parse_ir(text))
    x = Tensor(np.random.default_rng(0).standard_normal((6, 4)).astype(np.float32))
    g = Tensor(np.random.default_rng(1).standard_normal((6, 3)).astype(np.float32))
    with no_grad():
        runner.run([x, g])
        out = runner.run([x, g])[0]
    np.testing.assert_allclose(out.data, (x.data.T @ g.data).T, rtol=1e-5, atol=1e-5)
    assert runner.stats.nodes_interpreted == 0
    plan = next(iter(runner._plans.values())).graph
    assert "prim::profile" not in _kinds(plan)


PROFILED = """graph(%x : Tensor, %y : Tensor):
  %px : Tensor = prim::profile[profiled_type=Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu), seen_none=0](%x)
  %py : Tensor = prim::profile[profiled_type=Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu), seen_none=0](%y)
  %a : Tensor = aten::mul(%px, %py)
  %pa : Tensor = prim::profile[profiled_type=%s, seen_none=0](%a)
  %t : Tensor = aten::tanh(%pa)
  %pt : Tensor = prim::profile[profiled_type=Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu), seen_none=0](%t)
  return (%pt)"""


def test_complete_profile_records_type_the_plan_so_its_first_call_runs_natively(monkeypatch):
    """Every tensor with records that agree on a complete layout: the first call with inputs
    of those layouts compiles at once instead of being interpreted to learn the layouts."""
    from .native_coverage import measured
    xs = [Tensor(np.full((2, 3), v, np.float32)) for v in (0.5, 2.0)]
    typed = NativeRunner(parse_ir(PROFILED.replace(
        "%s", "Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)")))
    with no_grad(), measured(monkeypatch) as cov:
        out = typed.run(xs)[0]
    np.testing.assert_allclose(out.data, np.tanh(np.ones((2, 3), np.float32)), rtol=1e-6)
    assert dict(cov.interpreted) == {} and cov.native["aten::tanh"] == 1
    monkeypatch.undo()
    partial = NativeRunner(parse_ir(PROFILED.replace("%s", "Float(*, 3, requires_grad=0, device=cpu)")))
    with no_grad(), measured(monkeypatch) as cov:
        partial.run(xs)
    assert cov.interpreted["aten::tanh"] == 1  # a record without a complete layout: profiled


def test_profile_records_of_other_layouts_do_not_type_the_plan():
    """Calls whose inputs differ from what the records say (another dtype, another shape)
    are profiled as before: the records are no fact about them."""
    text = PROFILED.replace("%s", "Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)")
    runner = NativeRunner(parse_ir(text))
    with no_grad():
        for dtype, shape in [(np.float64, (2, 3)), (np.float32, (4, 3)), (np.float32, (2, 3))]:
            xs = [Tensor(np.full(shape, 0.5, dtype)), Tensor(np.full(shape, 2.0, dtype))]
            for _ in range(2):
                out = runner.run(xs)[0]
            assert out.data.dtype == dtype and out.data.shape == shape
            np.testing.assert_allclose(out.data, np.tanh(np.ones(shape)), rtol=1e-6)


def test_an_int_input_used_only_as_a_dtype_is_a_dtype_code():
    """`is_dtype_code`: an int every use of which is a `ScalarType` argument (or the same input
    of a fallback graph) is keyed by value; one that is also a number is not."""
    from irjit.runtime.native_specialization import is_dtype_code
    g = parse_ir("""graph(%x : Tensor, %d : int, %n : int):
  %none : NoneType = prim::Constant()
  %f : bool = prim::Constant[value=0]()
  %y : Tensor = aten::to(%x, %d, %f, %f, %none)
  %z : Tensor = aten::to(%y, %n, %f, %f, %none)
  %w : Tensor = aten::add(%z, %n, %n)
  return (%w)""")
    assert [is_dtype_code(v) for v in g.inputs] == [False, True, False]


def test_a_plan_keyed_by_a_dtype_code_runs_without_the_key_for_its_code_only():
    """The latest plan's program checks a dtype code's value itself: calls with that code run
    it without the runner's key; another code is refused there and gets its own plan."""
    text = """graph(%x : Tensor, %d : int):
  %none : NoneType = prim::Constant()
  %f : bool = prim::Constant[value=0]()
  %y : Tensor = aten::to(%x, %d, %f, %f, %none)
  %z : Tensor = aten::tanh(%y)
  return (%z)"""
    runner = NativeRunner(parse_ir(text))
    x = Tensor(np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4))
    with no_grad():
        for code, dtype in ((6, np.float32), (7, np.float64)):
            runner.run([x, code])  # (profiles)
            runner.run([x, code])
            last = runner._last
            assert last is not None and last.try_run([x, code]) is not None
            assert last.try_run([x, 13 - code]) is None  # (the other code: not this plan's)
            out = runner.run([x, code])[0]
            assert out.data.dtype == dtype
            np.testing.assert_allclose(out.data, np.tanh(x.data.astype(dtype)), rtol=1e-6)
    assert len(runner._plans) == 2


def test_a_branch_on_a_determined_condition_determines_what_both_branches_determine():
    """An inlined helper's branch on a rank: the same branch runs in every call, so its
    result is determined when both branches' are; on a condition from a number (keyed by
    its type only) it is not."""
    g = parse_ir("""graph(%x : Float(2, 3, strides=[3, 1], device=cpu), %n : int):
  %two : int = prim::Constant[value=2]()
  %f : bool = aten::eq(%n, %two)
  %d : int = aten::dim(%x)
  %c : bool = aten::eq(%d, %two)
  %r : Tensor = prim::If(%c)
    block0():
      %t : Tensor = aten::t(%x)
      -> (%t)
    block1():
      %u : Tensor = aten::neg(%x)
      -> (%u)
  %s : Tensor = prim::If(%f)
    block0():
      -> (%x)
    block1():
      %v : Tensor = aten::neg(%x)
      -> (%v)
  %w : Tensor = prim::If(%c)
    block0():
      -> (%s)
    block1():
      -> (%x)
  return (%r, %s, %w)""")
    known = _names(determined_values(g))
    assert {"c", "t", "u", "r", "v"} <= known
    assert not {"f", "s", "w"} & known


def test_a_branch_returning_tensors_either_way_returns_a_defined_gradient():
    """A branch on a rank whose every arm returns a tensor op's result (a reshape to sizes
    built at run time among them: its overload is told by the op alone) is defined, so the
    vjp check after it folds in the same walk."""
    g = parse_ir("""graph(%a : Tensor, %n : int, %k : bool):
  %m1 : int = prim::Constant[value=-1]()
  %r : Tensor = prim::If(%k)
    block0():
      %s : int[] = prim::ListConstruct(%m1, %n)
      %t : Tensor = aten::reshape(%a, %s)
      -> (%t)
    block1():
      %u : Tensor = aten::t(%a)
      -> (%u)
  %c : int = prim::AutogradAnyNonZero(%r)
  %o : Tensor = prim::If(%c)
    block0():
      %v : Tensor = aten::tanh(%r)
      -> (%v)
    block1():
      %z : Tensor = prim::AutogradZero()
      -> (%z)
  return (%o)""")
    assert fold_defined_gradients(g.block, {g.inputs[0]})
    assert [n.kind for n in g.nodes() if n.kind in ("prim::If", "aten::tanh")] == \
        ["prim::If", "aten::tanh"]  # (the check's branch taken, in place)


RNN = """graph(%x : Float({T}, 3, 5, strides=[15, 5, 1], device=cpu),
      %h0 : Float(3, 4, strides=[4, 1], device=cpu),
      %W : Float(5, 4, strides=[4, 1], device=cpu),
      %U : Float(4, 4, strides=[4, 1], device=cpu)):
  %one : int = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %true : bool = prim::Constant[value=1]()
  %trips : int = prim::Constant[value={trips}]()
  %h : Float(3, 4, strides=[4, 1], device=cpu) = prim::Loop(%trips, %true, %h0)
    block0(%i : int, %hc : Float(3, 4, strides=[4, 1], device=cpu)):
      %xi : Float(3, 5, strides=[5, 1], device=cpu) = aten::select(%x, %zero, %i)
      %a : Float(3, 4, strides=[4, 1], device=cpu) = aten::matmul(%xi, %W)
      %b : Float(3, 4, strides=[4, 1], device=cpu) = aten::matmul(%hc, %U)
      %s : Float(3, 4, strides=[4, 1], device=cpu) = aten::add(%a, %b, %one)
      %hn : Float(3, 4, strides=[4, 1], device=cpu) = aten::tanh(%s)
      -> (%true, %hn)
  return (%h)"""


def _rnn_inputs(T: int) -> list:
    rng = np.random.default_rng(3)
    return [Tensor(rng.standard_normal(s).astype(np.float32)) for s in [(T, 3, 5), (3, 4), (5, 4), (4, 4)]]


def test_a_loops_products_of_its_rows_become_one_product_before_it():
    """`x[i] @ W` in a loop over every row of x becomes `(x @ W)[i]`: one product before the
    loop (the recurrent `h @ U` stays in it), the same results."""
    text = RNN.format(T=6, trips=6)
    g = parse_ir(text)
    assert hoist_loop_products(g)
    loop = next(n for n in g.walk() if n.kind == "prim::Loop")
    before = [n.kind for n in g.nodes() if n.kind != "prim::Constant"]
    assert before[:2] == ["aten::matmul", "prim::Loop"]
    assert [n.kind for n in loop.blocks[0].nodes()] == ["aten::select", "aten::matmul", "aten::add",
                                                        "aten::tanh"]
    whole = next(n for n in g.nodes() if n.kind == "aten::matmul")
    assert next(iter(loop.blocks[0].nodes())).inputs[0] is whole.output
    assert whole.output.type.sizes == (6, 3, 4)
    xs = _rnn_inputs(6)
    with no_grad():
        want = Interpreter(parse_ir(text)).run(xs)[0].data
        np.testing.assert_allclose(Interpreter(g).run(xs)[0].data, want, rtol=1e-5, atol=1e-6)
        runner = NativeRunner(parse_ir(text))
        for _ in range(3):
            got = runner.run(xs)[0].data
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_a_loop_that_leaves_rows_unused_keeps_its_products():
    """Fewer trips than rows (the product would compute rows no trip reads) or a matrix the
    loop computes (another each trip): nothing moves."""
    assert not hoist_loop_products(parse_ir(RNN.format(T=6, trips=4)))
    g = parse_ir(RNN.format(T=6, trips=6).replace("%a : Float(3, 4, strides=[4, 1], device=cpu) = aten::matmul(%xi, %W)",
                                                  "%wc : Float(5, 4, strides=[4, 1], device=cpu) = aten::mul(%W, %one)\n"
                                                  "      %a : Float(3, 4, strides=[4, 1], device=cpu) = aten::matmul(%xi, %wc)"))
    assert not hoist_loop_products(g)
