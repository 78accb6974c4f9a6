"""Views at native group boundaries: a group may output a view of one of its inputs (or of a
buffer it computes), handed out as a numpy view built from fixed metadata. Outputs and their
aliasing equal the interpreter's, in-place writes through such a view reach the base, a
changed layout is a bailout, and a run-time select index out of range raises as interpreted."""

import numpy as np
import pytest

from irjit.compiler.codegen.cache import get_unit
from irjit.compiler.codegen.partition import GROUP
from irjit.compiler.codegen.view_outputs import ViewUnit
from irjit.compiler.parser import parse_ir
from irjit.ops.tensor import Tensor
from irjit.runtime.autograd import no_grad
from irjit.runtime.interpreter import Interpreter
from irjit.runtime.native import NativeRunner


@pytest.fixture(params=[False, True], ids=["plain", "bounds-checked"])
def checks(request, monkeypatch):
    monkeypatch.setenv("IRJIT_NATIVE_CHECKS", "1" if request.param else "0")


def _graph(lines: str, inputs: str = "%x : Tensor") -> str:
    return f"""graph({inputs}):
  %m1 : int = prim::Constant[value=-1]()
  %m2 : int = prim::Constant[value=-2]()
  %0 : int = prim::Constant[value=0]()
  %1 : int = prim::Constant[value=1]()
  %2 : int = prim::Constant[value=2]()
  %3 : int = prim::Constant[value=3]()
{lines}"""


def _layouts():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    return {"contiguous": a, "transposed": np.ascontiguousarray(a.transpose(2, 1, 0)).transpose(2, 1, 0),
            "strided": np.arange(48, dtype=np.float32).reshape(2, 3, 8)[:, :, ::2]}


# (view op lines on %x of shape (2, 3, 4) returning %y)
VIEWS = {
    "transpose": "  %y : Tensor = aten::transpose(%x, %0, %2)",
    "permute": "  %d : int[] = prim::Constant[value=[2, 0, 1]]()\n  %y : Tensor = aten::permute(%x, %d)",
    "expand": "  %s : int[] = prim::Constant[value=[2, 2, -1, -1]]()\n  %u : Tensor = aten::unsqueeze(%x, %1)\n"
              "  %y : Tensor = aten::expand(%u, %s, %false)",
    "slice_step": "  %y : Tensor = aten::slice(%x, %2, %1, %3, %2)",
    "slice_to_end": "  %e : int = prim::Constant[value=9223372036854775807]()\n"
                    "  %y : Tensor = aten::slice(%x, %1, %1, %e, %1)",
    "select_negative": "  %y : Tensor = aten::select(%x, %1, %m1)",
    "unsqueeze": "  %y : Tensor = aten::unsqueeze(%x, %m1)",
    "squeeze": "  %u : Tensor = aten::unsqueeze(%x, %0)\n  %y : Tensor = aten::squeeze(%u)",
    "narrow": "  %y : Tensor = aten::narrow(%x, %2, %1, %2)",
    "t": "  %s : Tensor = aten::select(%x, %0, %1)\n  %y : Tensor = aten::t(%s)",
    "chain": "  %s : Tensor = aten::select(%x, %2, %m2)\n  %u : Tensor = aten::unsqueeze(%s, %0)\n"
             "  %y : Tensor = aten::transpose(%u, %0, %2)",
    "flatten": "  %y : Tensor = aten::flatten(%x, %1, %2)",
    "view": "  %s : int[] = prim::Constant[value=[-1, 2]]()\n  %y : Tensor = aten::view(%x, %s)",
    "reshape": "  %s : int[] = prim::Constant[value=[2, -1]]()\n  %y : Tensor = aten::reshape(%x, %s)",
    "contiguous": "  %y : Tensor = aten::contiguous(%x, %0)",
}
# these layouts need a copy (numpy's and torch's rule): not a view output
COPIES = {("flatten", "transposed"), ("reshape", "transposed"), ("contiguous", "transposed"),
          ("contiguous", "strided")}
CASES = [(op, layout) for op in sorted(VIEWS) for layout in ("contiguous", "transposed", "strided")
         if (op, layout) != ("view", "transposed")]  # an error (see the last test)


def _both(text: str, inputs: list, calls: int = 3):
    """(the interpreter's outputs, the native runner's outputs on its last call, the runner)."""
    expected = Interpreter(parse_ir(text)).run([Tensor(x.copy()) for x in inputs])
    runner = NativeRunner(parse_ir(text))
    with no_grad():
        for _ in range(calls):
            got = runner.run([Tensor(x) for x in inputs])
    return expected, got, runner


@pytest.mark.parametrize("op,layout", CASES)
def test_a_view_output_equals_the_interpreters_and_aliases_as_it_does(op, layout, checks):
    x = _layouts()[layout]
    text = _graph("  %false : bool = prim::Constant[value=0]()\n" + VIEWS[op] + "\n  return (%y)")
    xs = [Tensor(x)]
    want = Interpreter(parse_ir(text)).run(xs)[0]
    runner = NativeRunner(parse_ir(text))
    with no_grad():
        for _ in range(3):
            got = runner.run(xs)[0]
    np.testing.assert_array_equal(got.data, want.data)
    assert np.shares_memory(got.data, x) == np.shares_memory(want.data, x)
    assert np.shares_memory(got.data, x) == ((op, layout) not in COPIES)
    assert runner.stats.bailouts == 0
    assert runner.stats.nodes_interpreted == 0 and runner.stats.nodes_native > 0


def test_a_view_only_group_is_a_unit_with_nothing_compiled():
    text = _graph("  %y : Tensor = aten::transpose(%x, %0, %1)\n  %z : Tensor = aten::select(%y, %0, %m1)\n"
                  "  return (%y, %z)")
    _, got, runner = _both(text, [_layouts()["strided"]])
    plan = next(iter(runner._plans.values()))
    groups = [n for n in plan.graph.nodes() if n.kind == GROUP]
    assert len(groups) == 1
    unit, _ = get_unit(groups[0].attr("Subgraph"))
    assert isinstance(unit, ViewUnit) and unit.library is None
    # the consumers' types say the views' real strides
    assert [tuple(o.type.strides) for o in groups[0].outputs] == [(8, 24, 2), (24, 2)]
    assert [o.data.strides for o in got] == [(32, 96, 8), (96, 8)]


def test_the_output_types_are_the_layouts_the_unit_hands_out():
    text = _graph("  %y : Tensor = aten::transpose(%x, %0, %2)\n  %z : Tensor = aten::select(%x, %1, %1)\n"
                  "  return (%y, %z)")
    x = _layouts()["strided"]
    _, got, runner = _both(text, [x])
    plan = next(iter(runner._plans.values()))
    group = next(n for n in plan.graph.nodes() if n.kind == GROUP)
    for value, out in zip(plan.graph.outputs, got):
        assert tuple(value.type.sizes) == out.data.shape
        assert tuple(s * out.data.itemsize for s in value.type.strides) == out.data.strides


def test_a_view_of_a_computed_buffer_is_an_output_of_its_unit():
    text = _graph("  %p : Tensor = aten::mm(%a, %b)\n  %y : Tensor = aten::t(%p)\n  return (%y, %p)",
                  "%a : Tensor, %b : Tensor")
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal((4, 5)).astype(np.float32)
    want, got, runner = _both(text, [a, b])
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.data, w.data, rtol=1e-5, atol=1e-5)
        assert g.data.strides == w.data.strides
    assert runner.stats.nodes_interpreted == 0 and runner.stats.bailouts == 0
    # the view shares the product's memory, version counter and base, as interpreted
    assert np.shares_memory(got[0].data, got[1].data) and np.shares_memory(want[0].data, want[1].data)
    assert got[0]._base is got[1] and want[0]._base is want[1]
    got[1].bump_version()
    assert got[0].version == got[1].version


def test_in_place_writes_through_a_boundary_view_reach_the_base():
    text = _graph("  %s : Tensor = aten::select(%x, %1, %m1)\n  %y : Tensor = aten::add_(%s, %1, %1)\n"
                  "  %t : Tensor = aten::transpose(%x, %0, %1)\n  %z : Tensor = aten::mul_(%t, %2)\n"
                  "  return (%x, %y, %z)")
    x = _layouts()["contiguous"]
    ours = Tensor(x.copy())
    runner = NativeRunner(parse_ir(text))
    with no_grad():
        for _ in range(3):
            theirs = Tensor(x.copy())
            want = Interpreter(parse_ir(text)).run([theirs])
            ours = Tensor(x.copy())
            got = runner.run([ours])
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.data, w.data)
    assert np.shares_memory(got[0].data, ours.data) and np.shares_memory(got[1].data, ours.data)
    assert ours.version == theirs.version and got[1].version == want[1].version
    assert runner.stats.nodes_native == 2 and runner.stats.bailouts == 0


def test_a_changed_layout_is_a_bailout():
    text = _graph("  %y : Tensor = aten::transpose(%x, %0, %2)\n  return (%y)")
    _, _, runner = _both(text, [_layouts()["contiguous"]])
    group = next(n for n in next(iter(runner._plans.values())).graph.nodes() if n.kind == GROUP)
    unit = runner.unit_of(group)
    assert unit.call([_layouts()["contiguous"]])[0] == 0
    for other in (_layouts()["transposed"], _layouts()["contiguous"].astype(np.float64),
                  np.zeros((2, 3, 5), np.float32), np.zeros((2, 3), np.float32), [1.0]):
        status, outs = unit.call([other])
        assert status != 0 and outs == []


RUNTIME_SELECT = _graph("  %y : Tensor = aten::select(%x, %1, %i)\n  return (%y)", "%x : Tensor, %i : int")


@pytest.mark.parametrize("index", [0, 2, -1, -3])
def test_a_select_at_a_run_time_index_is_a_native_view(index, checks):
    x = _layouts()["strided"]
    runner = NativeRunner(parse_ir(RUNTIME_SELECT))
    with no_grad():
        runner.run([Tensor(x), 1])  # profiles
        got = runner.run([Tensor(x), index])[0]
    want = Interpreter(parse_ir(RUNTIME_SELECT)).run([Tensor(x), index])[0]
    np.testing.assert_array_equal(got.data, want.data)
    assert np.shares_memory(got.data, x)
    assert runner.stats.nodes_interpreted == 0 and runner.stats.bailouts == 0


@pytest.mark.parametrize("index", [3, -4, 2 ** 40])
def test_a_run_time_select_index_out_of_range_raises_as_interpreted(index, checks):
    x = _layouts()["contiguous"]
    with pytest.raises(Exception, match="out of range") as want:
        Interpreter(parse_ir(RUNTIME_SELECT)).run([Tensor(x), index])
    runner = NativeRunner(parse_ir(RUNTIME_SELECT))
    with no_grad():
        runner.run([Tensor(x), 1])
        with pytest.raises(Exception) as got:
            runner.run([Tensor(x), index])
    assert (got.type, str(got.value)) == (want.type, str(want.value))
    assert runner.stats.bailouts == 1


def test_a_view_of_a_layout_it_cannot_view_raises_as_interpreted():
    text = _graph("  %s : int[] = prim::Constant[value=[-1]]()\n  %y : Tensor = aten::view(%x, %s)\n  return (%y)")
    x = _layouts()["transposed"]
    with pytest.raises(Exception, match="view size is not compatible") as want:
        Interpreter(parse_ir(text)).run([Tensor(x)])
    runner = NativeRunner(parse_ir(text))
    for _ in range(2):
        with pytest.raises(Exception) as got:
            runner.run([Tensor(x)])
        assert (got.type, str(got.value)) == (want.type, str(want.value))


SELECT_BACKWARD = """graph(%g : Tensor, %i : int):
  %s : int[] = prim::Constant[value=[4, 3, 5]]()
  %d : int = prim::Constant[value=-2]()
  %y : Tensor = aten::select_backward(%g, %s, %d, %i)
  return (%y)"""


def test_select_backward_at_a_run_time_index_runs_natively_and_checks_it(checks):
    g = np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32)
    runner = NativeRunner(parse_ir(SELECT_BACKWARD))
    with no_grad():
        runner.run([Tensor(g), 0])
        for index in (0, 2, -1, -3):
            got = runner.run([Tensor(g), index])[0]
            want = Interpreter(parse_ir(SELECT_BACKWARD)).run([Tensor(g), index])[0]
            np.testing.assert_array_equal(got.data, want.data)
        assert runner.stats.nodes_interpreted == 0 and runner.stats.bailouts == 0
        with pytest.raises(Exception) as want:
            Interpreter(parse_ir(SELECT_BACKWARD)).run([Tensor(g), 3])
        with pytest.raises(Exception) as got:
            runner.run([Tensor(g), 3])
    assert (got.type, str(got.value)) == (want.type, str(want.value))
    assert runner.stats.bailouts == 1


@pytest.mark.parametrize("dim,start,end,step", [(1, 1, 3, 1), (1, 0, 100, 2), (0, -3, 2 ** 63 - 1, 1),
                                                (2, 1, 4, 3), (-1, 0, 5, 1)])
def test_slice_backward_runs_natively(dim, start, end, step, checks):
    sizes = [4, 3, 5]
    lo, hi, st = slice(start, end, step).indices(sizes[dim])
    grad_sizes = list(sizes)
    grad_sizes[dim] = len(range(lo, hi, st))
    text = f"""graph(%g : Tensor):
  %s : int[] = prim::Constant[value={sizes}]()
  %d : int = prim::Constant[value={dim}]()
  %a : int = prim::Constant[value={start}]()
  %b : int = prim::Constant[value={end}]()
  %c : int = prim::Constant[value={step}]()
  %y : Tensor = aten::slice_backward(%g, %s, %d, %a, %b, %c)
  return (%y)"""
    g = np.random.default_rng(0).standard_normal(grad_sizes).astype(np.float32)
    want, got, runner = _both(text, [g])
    np.testing.assert_array_equal(got[0].data, want[0].data)
    assert runner.stats.nodes_interpreted == 0 and runner.stats.bailouts == 0


def test_a_reshape_that_needs_a_copy_is_a_gather_its_consumers_read():
    """The attention heads' merge: transpose then reshape copies (as numpy and torch do), inside
    the unit that also computes from it."""
    text = _graph("  %s : int[] = prim::Constant[value=[2, 4, 15]]()\n"
                  "  %t : Tensor = aten::transpose(%x, %1, %2)\n  %r : Tensor = aten::reshape(%t, %s)\n"
                  "  %y : Tensor = aten::add(%r, %r, %1)\n  return (%r, %y)")
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 5)).astype(np.float32)
    want, got, runner = _both(text, [x])
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.data, w.data)
        assert not np.shares_memory(g.data, x) and not np.shares_memory(w.data, x)
    assert runner.stats.nodes_interpreted == 0 and runner.stats.nodes_native == 3


def test_one_view_of_one_input_takes_the_short_path_with_the_general_paths_windows():
    """x[i]'s unit (one view of its one tensor input) makes its window without the general
    loops: the same views and offsets, and the same refusals."""
    x = _layouts()["contiguous"]
    runner = NativeRunner(parse_ir(RUNTIME_SELECT))
    with no_grad():
        runner.run([Tensor(x), 1])
    group = next(n for n in next(iter(runner._plans.values())).graph.nodes() if n.kind == GROUP)
    unit = runner.unit_of(group)
    assert unit._single is not None
    for args in ([x, 2], [x, -3], [x, 3], [x.astype(np.float64), 0], [[1.0], 0]):
        short = unit.windows(args)
        single, unit._single = unit._single, None
        general = unit.windows(args)
        unit._single = single
        assert short[0] == general[0] and short[2] == general[2]
        for a, b in zip(short[1], general[1]):
            assert a.shape == b.shape and a.strides == b.strides and np.shares_memory(a, b)


def test_a_select_under_grad_shares_its_window_entry_per_index(checks):
    """x[i] recorded on the tape (a ViewGroupOp of one window): calls at one index (2 and -1
    of 3 are one) share the tape entry of that window, other indices get their own, and each
    view's gradient lands in its row of x's."""
    from irjit.runtime.autograd import backward
    x = Tensor(_layouts()["contiguous"].copy(), True)
    runner = NativeRunner(parse_ir(RUNTIME_SELECT))
    for _ in range(2):
        runner.run([x, 1])  # (profiles, then specializes for gradients)
    views = [runner.run([x, i])[0] for i in (2, 0, 2, -1)]
    entries = [v.grad_fn[0].entry for v in views]
    assert entries[0] is entries[2] is entries[3] and entries[1] is not entries[0]
    for v in views:
        assert v._base is x and np.shares_memory(v.data, x.data) and v.grad_fn[0].edges == [x]
    weights = [np.full(views[0].shape, w, np.float32) for w in (1, 2, 4, 8)]
    (dx,) = backward(views, weights, inputs=[x])
    want = np.zeros_like(x.data)
    for i, w in zip((2, 0, 2, -1), weights):
        want[:, i] += w
    np.testing.assert_array_equal(dx, want)
    assert runner.stats.nodes_interpreted == 0
