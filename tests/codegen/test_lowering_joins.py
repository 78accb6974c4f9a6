"""Native cat/stack (ops/lowering_joins.py) and split/chunk unpacking: random shapes, dims,
dtypes and non-contiguous pieces give the interpreter's result, with bounds checks on and
off; pieces computed in the same group stay correct; the loops split at the piece bounds."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from irjit.compiler.codegen.unit import NativeUnit

from . import typed_graph
from .lowering_check import assert_native_matches, run_native

DTYPES = [np.float32, np.float64, np.int64, np.bool_]


@pytest.fixture(params=[False, True], ids=["plain", "bounds-checked"])
def checks(request, monkeypatch):
    monkeypatch.setenv("IRJIT_NATIVE_CHECKS", "1" if request.param else "0")


def _array(rng, shape, dtype, transposed: bool) -> np.ndarray:
    a = (rng.standard_normal(shape) * 4).astype(dtype)
    if transposed and len(shape) >= 2:  # same values, non-contiguous layout
        a = np.ascontiguousarray(a.swapaxes(0, 1)).swapaxes(0, 1)
    return a


def _join_graph(op: str, n: int, dim: int, then: str = "") -> str:
    names = ", ".join(f"%x{i}" for i in range(n))
    tail = f"  %r : Tensor = {then.format('%c')}\n  return (%r)" if then else "  return (%c)"
    return (f"graph({', '.join(f'%x{i} : Tensor' for i in range(n))}):\n"
            f"  %d : int = prim::Constant[value={dim}]()\n"
            f"  %l : Tensor[] = prim::ListConstruct({names})\n"
            f"  %c : Tensor = aten::{op}(%l, %d)\n{tail}")


@st.composite
def cats(draw):
    rank = draw(st.integers(1, 3))
    base = draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank))
    dim = draw(st.integers(-rank, rank - 1))
    pieces = draw(st.integers(1, 4))
    shapes = []
    for _ in range(pieces):
        s = list(base)
        s[dim] = draw(st.integers(1, 5))
        shapes.append(tuple(s))
    dtypes = [draw(st.sampled_from(DTYPES)) for _ in range(pieces)]
    transposed = [draw(st.booleans()) for _ in range(pieces)]
    then = draw(st.sampled_from(["", "aten::neg({})" if not any(d == np.bool_ for d in dtypes) else ""]))
    return dim, shapes, dtypes, transposed, then


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cats(), st.integers(0, 2 ** 16))
def test_cat_matches_the_interpreter(checks, case, seed):
    dim, shapes, dtypes, transposed, then = case
    rng = np.random.default_rng(seed)
    arrays = [_array(rng, s, d, t) for s, d, t in zip(shapes, dtypes, transposed)]
    assert_native_matches(_join_graph("cat", len(arrays), dim, then), arrays)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.integers(1, 3), st.data())
def test_stack_matches_the_interpreter(checks, shape, pieces, data):
    dim = data.draw(st.integers(-len(shape) - 1, len(shape)))
    dtype = data.draw(st.sampled_from(DTYPES))
    rng = np.random.default_rng(0)
    arrays = [_array(rng, tuple(shape), dtype, data.draw(st.booleans())) for _ in range(pieces)]
    assert_native_matches(_join_graph("stack", pieces, dim), arrays)


def test_cat_of_pieces_computed_in_the_same_graph():
    text = """graph(%x : Tensor, %y : Tensor):
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::sigmoid(%x)
  %b : Tensor = aten::tanh(%y)
  %l : Tensor[] = prim::ListConstruct(%a, %b)
  %c : Tensor = aten::cat(%l, %one)
  %r : Tensor = aten::mul(%c, %c)
  return (%r)"""
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((3, 4), np.float32), rng.standard_normal((3, 5), np.float32)
    runner = assert_native_matches(text, [x, y])
    assert runner.stats.units == 3  # a unit per piece shape; the cat and mul read their outputs


def test_a_list_used_elsewhere_is_not_taken_into_a_group():
    text = """graph(%x : Tensor, %y : Tensor):
  %zero : int = prim::Constant[value=0]()
  %l : Tensor[] = prim::ListConstruct(%x, %y)
  %c : Tensor = aten::cat(%l, %zero)
  %n : int = aten::len(%l)
  return (%c, %n)"""
    x = np.ones((2, 3), np.float32)
    got, runner = run_native(text, [x, x])
    assert got[0].data.shape == (4, 3) and got[1] == 2
    assert runner.stats.bailouts == 0


def test_cat_loops_split_at_the_piece_bounds():
    graph = typed_graph("""graph(%x : Tensor, %y : Tensor):
  %one : int = prim::Constant[value=1]()
  %l : Tensor[] = prim::ListConstruct(%x, %y)
  %c : Tensor = aten::cat(%l, %one)
  return (%c)""", "Float(8, 64), Float(8, 32)")
    graph.outputs[0].type = graph.inputs[0].type.with_(sizes=(8, 96), strides=(96, 1))
    unit = NativeUnit(graph, "cat_split")
    x = np.arange(512, dtype=np.float32).reshape(8, 64)
    y = -np.arange(256, dtype=np.float32).reshape(8, 32)
    status, (out,) = unit.call([x, y])
    assert status == 0
    np.testing.assert_array_equal(out, np.concatenate([x, y], 1))
    assert "x float>" in unit.library.llvm_ir  # the pieces are read with vector loads


def test_a_stack_along_the_last_dim_interleaves_vectors():
    """Stacking along a new last dim splits that axis into one-iteration loops per piece, which
    are unrolled (emit.UNROLL_MAX_TRIP) so the rows of the pieces are interleaved as vectors."""
    graph = typed_graph("""graph(%x : Tensor, %y : Tensor, %z : Tensor, %w : Tensor):
  %two : int = prim::Constant[value=2]()
  %l : Tensor[] = prim::ListConstruct(%x, %y, %z, %w)
  %c : Tensor = aten::stack(%l, %two)
  return (%c)""", ", ".join(["Float(8, 64)"] * 4))
    graph.outputs[0].type = graph.inputs[0].type.with_(sizes=(8, 64, 4), strides=(256, 4, 1))
    unit = NativeUnit(graph, "stack_last")
    xs = [np.arange(512, dtype=np.float32).reshape(8, 64) * k for k in range(1, 5)]
    status, (out,) = unit.call(xs)
    assert status == 0
    np.testing.assert_array_equal(out, np.stack(xs, 2))
    widths = {int(w) for w in re.findall(r"store <(\d+) x float>", unit.library.llvm_ir)}
    assert widths and max(widths) > 4, widths  # whole vectors of the output, not one per piece


@pytest.mark.parametrize("split", ["%four, %one", "%sizes, %one"])
def test_split_pieces_become_fused_views(split):
    text = f"""graph(%x : Tensor):
  %one : int = prim::Constant[value=1]()
  %four : int = prim::Constant[value=3]()
  %sizes : int[] = prim::Constant[value=[3, 3]]()
  %l : Tensor[] = aten::split(%x, {split})
  %a : Tensor, %b : Tensor = prim::ListUnpack(%l)
  %s : Tensor = aten::mul(%a, %b)
  return (%s)"""
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    runner = assert_native_matches(text, [x])
    assert runner.stats.units == 1


def test_split_with_sizes_that_do_not_add_up_raises_the_interpreters_error():
    text = """graph(%x : Tensor):
  %one : int = prim::Constant[value=1]()
  %sizes : int[] = prim::Constant[value=[2, 2]]()
  %l : Tensor[] = aten::split(%x, %sizes, %one)
  %a : Tensor, %b : Tensor = prim::ListUnpack(%l)
  %s : Tensor = aten::mul(%a, %b)
  return (%s)"""
    with pytest.raises(Exception, match="split_with_sizes expects split_sizes to sum exactly"):
        run_native(text, [np.ones((2, 6), np.float32)])


@pytest.mark.parametrize("op", ["aten::chunk(%x, %two, %one)", "aten::unbind(%x, %one)",
                                "aten::split(%x, %two, %one)"])
def test_pieces_read_by_getitem_become_fused_views(op):
    text = f"""graph(%x : Tensor):
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %m1 : int = prim::Constant[value=-1]()
  %l : Tensor[] = {op}
  %a : Tensor = aten::__getitem__(%l, %zero)
  %b : Tensor = aten::__getitem__(%l, %m1)
  %c : Tensor = aten::__getitem__(%l, %zero)
  %s : Tensor = aten::mul(%a, %b)
  %t : Tensor = aten::add(%s, %c, %one)
  return (%t)"""
    x = np.arange(16, dtype=np.float32).reshape(4, 4)
    runner = assert_native_matches(text, [x])
    assert runner.stats.units == 1



@pytest.mark.parametrize("dim, reduced", [(0, 0), (0, 1), (1, 1), (1, 0)])
def test_cat_fuses_with_a_reduction(checks, dim, reduced):
    """The cat axis may be an inner (reduced) axis of the loop nest: its cuts split those loops."""
    text = f"""graph(%x : Tensor, %y : Tensor):
  %d : int = prim::Constant[value={dim}]()
  %rd : int[] = prim::Constant[value=[{reduced}]]()
  %false : bool = prim::Constant[value=0]()
  %none : NoneType = prim::Constant()
  %l : Tensor[] = prim::ListConstruct(%x, %y)
  %c : Tensor = aten::cat(%l, %d)
  %e : Tensor = aten::exp(%c)
  %s : Tensor = aten::sum(%e, %rd, %false, %none)
  return (%s)"""
    rng = np.random.default_rng(dim * 2 + reduced)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    y = rng.standard_normal((3, 4) if dim == 0 else (3, 2)).astype(np.float32)
    runner = assert_native_matches(text, [x, y])
    assert runner.stats.units == 1


@pytest.mark.parametrize("dim", [0, 1])
def test_a_cat_large_enough_for_threads_splits_each_threads_range(checks, dim):
    """Native threads run parts of the outer axis; a cat's cuts narrow each part's loops."""
    rng = np.random.default_rng(dim)
    x = rng.standard_normal((3000, 128)).astype(np.float32)
    y = rng.standard_normal((1000, 128) if dim == 0 else (3000, 64)).astype(np.float32)
    assert_native_matches(_join_graph("cat", 2, dim, "aten::exp({})"), [x, y])
