"""Native creation ops, copies and identities (ops/lowering_creation.py): fills and ranges in
every dtype fuse with what reads them; clone/contiguous/eval dropout/`to` keep PyTorch's
aliasing; training dropout stays interpreted."""

from __future__ import annotations

import numpy as np
import pytest

from .lowering_check import assert_native_matches, run_native

# ScalarType codes: 4 int64, 6 float32, 7 float64, 11 bool
DTYPE_CODES = {np.int64: 4, np.float32: 6, np.float64: 7, np.bool_: 11}


@pytest.fixture(params=[False, True], ids=["plain", "bounds-checked"], autouse=True)
def checks(request, monkeypatch):
    monkeypatch.setenv("IRJIT_NATIVE_CHECKS", "1" if request.param else "0")


def _x(dtype=np.float32, shape=(3, 4)):
    return (np.arange(np.prod(shape)).reshape(shape) - 5).astype(dtype)


@pytest.mark.parametrize("dtype", list(DTYPE_CODES))
@pytest.mark.parametrize("fill", ["aten::zeros_like(%x, %dt, %none, %none, %none, %none)",
                                  "aten::ones_like(%x, %dt, %none, %none, %none, %none)",
                                  "aten::full_like(%x, %v, %dt, %none, %none, %none, %none)",
                                  "aten::empty_like(%x, %dt, %none, %none, %none, %none)",
                                  "aten::zeros(%size, %dt, %none, %none, %none)",
                                  "aten::ones(%size, %dt, %none, %none, %none)",
                                  "aten::full(%size, %v, %dt, %none, %none, %none)",
                                  "aten::new_full(%x, %size, %v, %dt, %none, %none, %none)"])
def test_fills_in_every_dtype(dtype, fill):
    text = f"""graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %dt : int = prim::Constant[value={DTYPE_CODES[dtype]}]()
  %v : float = prim::Constant[value=2.5]()
  %size : int[] = prim::Constant[value=[3, 4]]()
  %f : Tensor = {fill}
  return (%f)"""
    assert_native_matches(text, [_x()])


def test_a_fill_fuses_with_its_reader():
    text = """graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %one : int = prim::Constant[value=1]()
  %z : Tensor = aten::zeros_like(%x, %none, %none, %none, %none, %none)
  %c : Tensor = aten::gt(%x, %one)
  %w : Tensor = aten::where(%c, %x, %z)
  return (%w)"""
    runner = assert_native_matches(text, [_x()])
    assert runner.stats.units == 1 and runner.stats.nodes_native == 3


@pytest.mark.parametrize("args, dtype", [
    ("%n, %none, %none, %none, %none", None),
    ("%n, %f64, %none, %none, %none", None),
    ("%one, %n, %none, %none, %none, %none", None),
    ("%one, %n, %two, %none, %none, %none, %none", None),
    ("%half, %n, %step, %none, %none, %none, %none", None),
    ("%one, %n, %two, %f32, %none, %none, %none", None),
])
def test_arange(args, dtype):
    text = f"""graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %n : int = prim::Constant[value=9]()
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %half : float = prim::Constant[value=0.5]()
  %step : float = prim::Constant[value=0.75]()
  %f32 : int = prim::Constant[value=6]()
  %f64 : int = prim::Constant[value=7]()
  %r : Tensor = aten::arange({args})
  %s : Tensor = aten::add(%r, %one, %one)
  return (%s)"""
    assert_native_matches(text, [_x()])


def test_an_arange_of_a_number_argument_bails_out_when_its_length_changes():
    """Numbers are keyed by type: the plan made for n = 4 runs natively for n = 4 and bails
    out (the interpreter's result) for any other n, never returning the old length."""
    from irjit.compiler import parse_ir
    from irjit.ops.tensor import Tensor
    from irjit.runtime import no_grad
    from irjit.runtime.native import NativeRunner
    runner = NativeRunner(parse_ir("""graph(%x : Tensor, %n : int):
  %none : NoneType = prim::Constant()
  %one : int = prim::Constant[value=1]()
  %r : Tensor = aten::arange(%n, %none, %none, %none, %none)
  %s : Tensor = aten::add(%r, %x, %one)
  return (%s)"""))
    x = Tensor(np.ones(1, np.float32))
    with no_grad():
        for n, bailouts in [(4, 0), (4, 0), (5, 1), (0, 2), (7, 3), (4, 3)]:
            out = runner.run([x, n])[0]
            np.testing.assert_array_equal(out.data, np.arange(n) + 1.0)
            assert runner.stats.bailouts == bailouts and runner.stats.nodes_interpreted == 0


def test_an_arange_from_a_start_to_a_number_argument_stays_interpreted():
    from irjit.compiler import parse_ir
    from irjit.runtime import no_grad
    from irjit.runtime.native import NativeRunner
    runner = NativeRunner(parse_ir("""graph(%n : int):
  %none : NoneType = prim::Constant()
  %one : int = prim::Constant[value=1]()
  %r : Tensor = aten::arange(%one, %n, %none, %none, %none, %none)
  return (%r)"""))
    with no_grad():
        for n in [4, 4, 6]:
            np.testing.assert_array_equal(runner.run([n])[0].data, np.arange(1, n))
    assert runner.stats.nodes_native == 0


@pytest.mark.parametrize("op", ["aten::clone(%x, %none)", "aten::contiguous(%x, %zero)",
                                "aten::dropout(%x, %p, %false)", "aten::alpha_dropout(%x, %zero_p, %true)"])
@pytest.mark.parametrize("transposed", [False, True])
def test_copies_and_identities_fuse(op, transposed):
    text = f"""graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %zero : int = prim::Constant[value=0]()
  %p : float = prim::Constant[value=0.5]()
  %zero_p : float = prim::Constant[value=0.]()
  %false : bool = prim::Constant[value=0]()
  %true : bool = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %y : Tensor = aten::mul(%x, %two)
  %z : Tensor = {op}
  %w : Tensor = aten::add(%z, %y, %two)
  return (%w)"""
    x = _x((np.float32), (4, 3)).T if transposed else _x()
    assert_native_matches(text, [x])


def test_a_non_contiguous_contiguous_is_a_native_copy():
    text = """graph(%x : Tensor):
  %zero : int = prim::Constant[value=0]()
  %y : Tensor = aten::contiguous(%x, %zero)
  return (%y)"""
    got, runner = run_native(text, [_x(np.float32, (4, 3)).T])
    assert got[0].data.flags.c_contiguous and runner.stats.nodes_native == 1


def test_training_dropout_stays_interpreted():
    text = """graph(%x : Tensor):
  %p : float = prim::Constant[value=0.5]()
  %true : bool = prim::Constant[value=1]()
  %y : Tensor = aten::dropout(%x, %p, %true)
  return (%y)"""
    _, runner = run_native(text, [_x()])
    assert runner.stats.nodes_native == 0 and runner.stats.nodes_interpreted == 1


def test_an_alias_and_its_source_are_not_two_outputs_of_one_unit():
    """`y` and `dropout(y)` (eval) are one tensor to PyTorch: a unit storing them as two
    arrays would let a later in-place op on one miss the other, so the alias stays outside."""
    text = """graph(%x : Tensor):
  %p : float = prim::Constant[value=0.5]()
  %false : bool = prim::Constant[value=0]()
  %two : int = prim::Constant[value=2]()
  %y : Tensor = aten::mul(%x, %two)
  %z : Tensor = aten::dropout(%y, %p, %false)
  %w : Tensor = aten::add_(%z, %x, %two)
  return (%y, %w)"""
    got, _ = run_native(text, [_x()])
    np.testing.assert_array_equal(got[0].data, got[1].data)
    np.testing.assert_array_equal(got[0].data, _x() * 2 + 2 * _x())


@pytest.mark.parametrize("src", list(DTYPE_CODES))
@pytest.mark.parametrize("dst", list(DTYPE_CODES))
def test_to_dtype_casts(src, dst):
    text = f"""graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %false : bool = prim::Constant[value=0]()
  %dt : int = prim::Constant[value={DTYPE_CODES[dst]}]()
  %y : Tensor = aten::to(%x, %dt, %false, %false, %none)
  %z : Tensor = aten::mul(%y, %y)
  return (%z)"""
    assert_native_matches(text, [_x(src)], all_native=not (dst == np.bool_))


def test_type_as_and_to_other():
    text = """graph(%x : Tensor, %i : Tensor):
  %false : bool = prim::Constant[value=0]()
  %none : NoneType = prim::Constant()
  %a : Tensor = aten::type_as(%x, %i)
  %b : Tensor = aten::to(%i, %x, %false, %false, %none)
  %one : int = prim::Constant[value=1]()
  %c : Tensor = aten::add(%a, %b, %one)
  return (%c)"""
    assert_native_matches(text, [_x() / 3, _x(np.int64)])


def test_a_cast_to_a_dtype_a_number_argument_gives_is_specialized_for_each_dtype():
    """An int input used only as a dtype (the `self.dtype` a forward graph hands its backward)
    is keyed by value: each dtype gets its own plan, whose cast runs natively with that dtype,
    and no call bails out."""
    from irjit.compiler import parse_ir
    from irjit.ops.tensor import Tensor
    from irjit.runtime import no_grad
    from irjit.runtime.native import NativeRunner
    runner = NativeRunner(parse_ir("""graph(%x : Tensor, %d : int):
  %none : NoneType = prim::Constant()
  %f : bool = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %y : Tensor = aten::to(%x, %d, %f, %f, %none)
  %z : Tensor = aten::add(%y, %one, %one)
  return (%z)"""))
    x = Tensor(np.full(3, 1.5, np.float32))
    with no_grad():
        for code, want in [(7, np.full(3, 2.5)), (7, np.full(3, 2.5)), (6, np.full(3, 2.5, np.float32)),
                           (4, np.full(3, 2, np.int64)), (7, np.full(3, 2.5))]:
            got = runner.run([x, code])[0].data
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)
    assert runner.stats.bailouts == 0 and len(runner._plans) == 3
    assert runner.stats.nodes_interpreted == 0
