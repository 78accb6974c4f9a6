"""Several units in one native call (compiler/codegen/unit_sequence.py): the units run in
order on their arguments laid end to end, a later one reading what an earlier one wrote; the
first refusal's status comes back with the units after it not run; another number of
arguments is a status, never a read past them."""

from __future__ import annotations

import numpy as np
import pytest

from irjit.compiler.codegen.entry import STATUS_ARGUMENT_COUNT, describe_status
from irjit.compiler.codegen.unit import NativeUnit
from irjit.compiler.codegen.unit_sequence import sequence

from . import typed_graph

SCALE = """graph(%x : Tensor, %a : Tensor):
  %m : Tensor = aten::mul(%x, %a)
  return (%m)"""

SHIFT = """graph(%m : Tensor, %b : Tensor):
  %one : int = prim::Constant[value=1]()
  %s : Tensor = aten::add(%m, %b, %one)
  %r : Tensor = aten::relu(%s)
  return (%r)"""


@pytest.fixture(scope="module")
def units():
    scale = NativeUnit(typed_graph(SCALE, "Float(4, 8), Float(4, 8)"), "seq_scale")
    shift = NativeUnit(typed_graph(SHIFT, "Float(4, 8), Float(8)"), "seq_shift")
    return scale, shift


def _arrays():
    rng = np.random.default_rng(3)
    return [rng.standard_normal(s).astype(np.float32) for s in ((4, 8), (4, 8), (8,))]


def test_the_units_run_in_order_in_one_call(units):
    scale, shift = units
    x, a, b = _arrays()
    m, r = np.empty((4, 8), np.float32), np.full((4, 8), np.nan, np.float32)
    call = sequence(units, [3, 3])
    assert type(call).__name__ == "builtin_function_or_method"
    assert call(x, a, m, m, b, r) == 0
    np.testing.assert_allclose(m, x * a, rtol=1e-6)
    np.testing.assert_allclose(r, np.maximum(x * a + b, 0), rtol=1e-6)


def test_the_first_refusal_comes_back_and_the_units_after_it_do_not_run(units):
    x, a, b = _arrays()
    call = sequence(units, [3, 3])
    m, r = np.full((4, 8), 7, np.float32), np.full((4, 8), 7, np.float32)
    status = call(x, a.astype(np.float64), m, m, b, r)  # (the first unit refuses a)
    assert describe_status(status) == "argument 1: dtype"
    assert (m == 7).all() and (r == 7).all()
    status = call(x, a, m, m, b[:4], r)  # (the second refuses b, after the first ran)
    assert describe_status(status) == "argument 1: size"
    np.testing.assert_allclose(m, x * a, rtol=1e-6)
    assert (r == 7).all()


def test_another_number_of_arguments_is_a_status(units):
    x, a, b = _arrays()
    m, r = np.empty((4, 8), np.float32), np.empty((4, 8), np.float32)
    call = sequence(units, [3, 3])
    assert call(x, a, m, m, b) == STATUS_ARGUMENT_COUNT
    assert call(x, a, m, m, b, r, r) == STATUS_ARGUMENT_COUNT
    assert call() == STATUS_ARGUMENT_COUNT
    # (a unit's own count is its entry's check: the table says how many each one takes)
    assert sequence(units, [2, 4])(x, a, m, m, b, r) == STATUS_ARGUMENT_COUNT


def test_one_unit_is_no_sequence(units):
    assert sequence(units[:1], [3]) is None
    assert sequence(units, [3]) is None
