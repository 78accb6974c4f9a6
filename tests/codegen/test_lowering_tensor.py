"""Native flip, roll, repeat, tril, triu, slice_backward, detach (ops/lowering_tensor.py) and
cumprod (ops/lowering_reductions.py) give the interpreter's results in float32, float64 and
int64, with negative dims, NaN, non-contiguous inputs and bounds checks on and off; arguments
the interpreter rejects, and empty tensors, stay interpreted."""

from __future__ import annotations

import numpy as np
import pytest

from irjit.compiler import parse_ir
from irjit.compiler.codegen.lower import lower_group
from irjit.ops.lowering_common import NotLowerable

from .lowering_check import assert_native_matches, interpreted

DTYPES = [np.float32, np.float64, np.int64]


@pytest.fixture(params=[False, True], ids=["plain", "bounds-checked"])
def checks(request, monkeypatch):
    monkeypatch.setenv("IRJIT_NATIVE_CHECKS", "1" if request.param else "0")


def _input(shape, dtype, seed=0, transposed=False, nan=False):
    a = (np.random.default_rng(seed).standard_normal(shape) * 4).astype(dtype)
    if nan and a.dtype.kind == "f":
        a.flat[1] = np.nan
    if transposed and len(shape) >= 2:  # same values, non-contiguous layout
        a = np.ascontiguousarray(a.swapaxes(0, 1)).swapaxes(0, 1)
    return a


def _unary(call: str, then: str = "") -> str:
    """A graph applying `call` (with %x) and, when given, `then` to its result %y."""
    tail = f"  %z : Tensor = {then}\n  return (%z)" if then else "  return (%y)"
    return f"graph(%x : Tensor):\n  %y : Tensor = {call}\n{tail}"


def _list(values) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]"


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dims", [[0], [-1], [0, 2], [-3, -2, -1], []])
def test_flip(checks, dtype, dims):
    text = (f"graph(%x : Tensor):\n  %d : int[] = prim::Constant[value={_list(dims)}]()\n"
            "  %y : Tensor = aten::flip(%x, %d)\n  return (%y)")
    assert_native_matches(text, [_input((2, 3, 4), dtype, transposed=True, nan=True)])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shifts, dims", [([1], [0]), ([-5], [-1]), ([2, 7], [0, 1]), ([3], []),
                                          ([-13], []), ([1, 1], [1, 1])])
def test_roll(checks, dtype, shifts, dims):
    text = (f"graph(%x : Tensor):\n  %s : int[] = prim::Constant[value={_list(shifts)}]()\n"
            f"  %d : int[] = prim::Constant[value={_list(dims)}]()\n"
            "  %y : Tensor = aten::roll(%x, %s, %d)\n  return (%y)")
    assert_native_matches(text, [_input((3, 4), dtype, transposed=True, nan=True)])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape, repeats", [((3, 4), [2, 3]), ((1, 4), [3, 1]), ((3, 1), [2, 2, 3]),
                                            ((4,), [2, 1, 2])])
def test_repeat(checks, dtype, shape, repeats):
    text = (f"graph(%x : Tensor):\n  %r : int[] = prim::Constant[value={_list(repeats)}]()\n"
            "  %y : Tensor = aten::repeat(%x, %r)\n  return (%y)")
    assert_native_matches(text, [_input(shape, dtype, transposed=True)])


@pytest.mark.parametrize("dtype", DTYPES + [np.bool_])
@pytest.mark.parametrize("op", ["tril", "triu"])
@pytest.mark.parametrize("diagonal", [0, 1, -2, 9])
def test_tril_and_triu_fuse_with_what_reads_them(checks, dtype, op, diagonal):
    text = (f"graph(%x : Tensor):\n  %k : int = prim::Constant[value={diagonal}]()\n"
            f"  %y : Tensor = aten::{op}(%x, %k)\n  %z : Tensor = aten::mul(%y, %y)\n  return (%z)")
    x = _input((2, 4, 5), dtype, nan=True) if dtype != np.bool_ else _input((2, 4, 5), np.float32) > 0
    runner = assert_native_matches(text, [x])
    assert runner.stats.units == 1


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("dim, start, end, step", [(0, 1, 3, 1), (-1, 0, 5, 2), (1, -3, 100, 1),
                                                   (1, 1, 4, 3)])
def test_slice_backward(checks, dtype, dim, start, end, step):
    sizes = [4, 5]
    n = sizes[dim]
    count = len(range(*slice(start, end, step).indices(n)))
    grad_shape = [count if d == dim % 2 else s for d, s in enumerate(sizes)]
    text = (f"graph(%g : Tensor):\n  %s : int[] = prim::Constant[value={_list(sizes)}]()\n"
            f"  %d : int = prim::Constant[value={dim}]()\n  %a : int = prim::Constant[value={start}]()\n"
            f"  %b : int = prim::Constant[value={end}]()\n  %c : int = prim::Constant[value={step}]()\n"
            "  %y : Tensor = aten::slice_backward(%g, %s, %d, %a, %b, %c)\n  return (%y)")
    assert_native_matches(text, [_input(grad_shape, dtype)])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cumprod(checks, dtype, dim):
    text = _unary(f"aten::cumprod(%x, {dim}, None)".replace(f"{dim}, None", "%d, %n"))
    text = text.replace("graph(%x : Tensor):\n", f"graph(%x : Tensor):\n  %d : int = prim::Constant"
                        f"[value={dim}]()\n  %n : NoneType = prim::Constant()\n")
    x = _input((3, 4), dtype, nan=True)
    if dtype == np.int64:
        x = x % 3  # keep the products small
    assert_native_matches(text, [x])


def test_detach_is_an_alias_inside_a_group(checks):
    text = _unary("aten::detach(%x)", "aten::neg(%y)")
    assert_native_matches(text, [_input((3, 4), np.float32)])


@pytest.mark.parametrize("call", ["aten::flip(%x, %d)", "aten::roll(%x, %d, %d)",
                                  "aten::repeat(%x, %r)"])
def test_empty_tensors_stay_interpreted_with_the_interpreters_result(call):
    text = ("graph(%x : Tensor):\n  %d : int[] = prim::Constant[value=[1]]()\n"
            "  %r : int[] = prim::Constant[value=[2, 2]]()\n"
            f"  %y : Tensor = {call}\n  return (%y)")
    runner = assert_native_matches(text, [np.zeros((3, 0), np.float32)], all_native=False)
    assert runner.stats.nodes_native == 0


@pytest.mark.parametrize("call", ["aten::flip(%x, %dup)", "aten::flip(%x, %far)",
                                  "aten::roll(%x, %two, %one)", "aten::repeat(%x, %one)"])
def test_arguments_the_interpreter_rejects_are_not_lowered(call):
    """(Duplicate or out-of-range dims, misaligned shifts, fewer repeats than dims.)"""
    text = ("graph(%x : Float(2, 3, strides=[3, 1], device=cpu)):\n"
            "  %dup : int[] = prim::Constant[value=[0, -2]]()\n"
            "  %far : int[] = prim::Constant[value=[2]]()\n"
            "  %two : int[] = prim::Constant[value=[1, 2]]()\n"
            "  %one : int[] = prim::Constant[value=[0]]()\n"
            f"  %y : Float(2, 3, strides=[3, 1], device=cpu) = {call}\n  return (%y)")
    graph = parse_ir(text)
    with pytest.raises(NotLowerable):
        lower_group(graph, "k")


INDEX = """graph(%x : Tensor, %i : Tensor, %j : Tensor):
  %n : NoneType = prim::Constant()
  %l : Tensor?[] = prim::ListConstruct({indices})
  %y : Tensor = aten::index(%x, %l)
  return (%y)"""

INDEX_PUT = """graph(%x : Tensor, %i : Tensor, %j : Tensor, %v : Tensor):
  %n : NoneType = prim::Constant()
  %t : bool = prim::Constant[value=1]()
  %l : Tensor?[] = prim::ListConstruct({indices})
  %y : Tensor = aten::index_put(%x, %l, %v, %t)
  return (%y)"""

# (indices, i, j): adjacent and separated index tensors, broadcasting, negative entries
INDEXINGS = [("%i", [2, -1, 0, 2], [0]), ("%n, %i", [[1, 3], [0, -4]], [0]), ("%i, %j", [0, 2], [[1], [3]]),
             ("%i, %n, %j", [1, -2], [4, 0]), ("%n, %n, %i", [4, 4, 0], [0])]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("indices, i, j", INDEXINGS)
def test_index_by_integer_tensors(checks, dtype, indices, i, j):
    x = _input((3, 4, 5), dtype, transposed=True, nan=True)
    assert_native_matches(INDEX.format(indices=indices), [x, np.array(i), np.array(j)])


def test_an_index_out_of_range_bails_out_and_raises_the_interpreters_index_error(checks):
    from irjit.ops.errors import IRRuntimeError
    from irjit.ops.tensor import Tensor
    from irjit.runtime import no_grad
    from irjit.runtime.native import NativeRunner
    runner = NativeRunner(parse_ir(INDEX.format(indices="%n, %i")))
    x = Tensor(_input((3, 4), np.float32))
    with no_grad():
        runner.run([x, Tensor(np.array([1, 3])), Tensor(np.array([0]))])
        runner.run([x, Tensor(np.array([1, 3])), Tensor(np.array([0]))])
        assert runner.stats.bailouts == 0
        for bad in ([1, 4], [-5, 0]):
            with pytest.raises(IRRuntimeError, match=f"index {bad[-1] if bad[0] == 1 else bad[0]} is out "
                               "of bounds for dimension 1 with size 4"):
                runner.run([x, Tensor(np.array(bad)), Tensor(np.array([0]))])
    assert runner.stats.bailouts == 2


def test_a_mask_index_stays_interpreted():
    x = _input((3, 4), np.float32)
    runner = assert_native_matches(INDEX.format(indices="%i"), [x, np.array([True, False, True]), np.array(0)],
                                   all_native=False)
    assert runner.stats.nodes_native == 0


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
@pytest.mark.parametrize("indices, i, j", INDEXINGS)
def test_index_put_accumulates_repeated_entries(checks, dtype, indices, i, j):
    x = _input((3, 4, 5), dtype, seed=1)
    expected = interpreted(INDEX.format(indices=indices), [x, np.array(i), np.array(j)])[0].data
    values = _input(expected.shape, dtype, seed=2)
    assert_native_matches(INDEX_PUT.format(indices=indices), [x, np.array(i), np.array(j), values])


MOVED_REDUCTION = """graph(%x : Tensor):
  %d : int[] = prim::Constant[value=[1]]()
  %f : bool = prim::Constant[value=0]()
  %n : NoneType = prim::Constant()
  %z : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %s : Tensor = aten::sum(%x, %d, %f, %n)
  %u : Tensor = aten::unsqueeze(%s, %z)
  %r : Tensor = aten::add(%u, %x, %one)
  return (%r)"""

MOVED_ARANGE = """graph(%x : Tensor):
  %n : NoneType = prim::Constant()
  %three : int = prim::Constant[value=3]()
  %row : int[] = prim::Constant[value=[3, 1]]()
  %col : int[] = prim::Constant[value=[1, 3]]()
  %a : Tensor = aten::arange(%three, %n, %n, %n, %n)
  %r : Tensor = aten::reshape(%a, %row)
  %c : Tensor = aten::reshape(%a, %col)
  %lt : Tensor = aten::lt(%c, %r)
  %y : Tensor = aten::mul(%lt, %x)
  return (%y)"""


@pytest.mark.parametrize("text", [MOVED_REDUCTION, MOVED_ARANGE], ids=["reduction", "arange"])
def test_a_computed_value_a_view_moves_to_another_dim_is_not_read_along_its_old_axis(checks, text):
    """(The output would run two dims along one kernel axis: the group splits there.)"""
    assert_native_matches(text, [np.arange(9, dtype=np.float32).reshape(3, 3)])
