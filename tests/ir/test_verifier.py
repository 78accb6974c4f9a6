"""`graph.lint()`: control-flow nodes whose blocks take or yield the wrong number of values,
and graphs nested thousands of levels deep (checked without recursion)."""

from __future__ import annotations

import pytest

from irjit.compiler import parse_ir
from irjit.compiler.ir import IRVerificationError
from tests.tools.test_irtool_fuzz import nested_ifs

IF = """graph(%c : bool, %x : Tensor):
  %r : Tensor = prim::If(%c)
    block0():
      -> ({yield0})
    block1():
      -> (%x)
  return (%r)
"""
LOOP = """graph(%n : int, %x : Tensor):
  %t : bool = prim::Constant[value=1]()
  %r : Tensor = prim::Loop(%n, %t, %x)
    block0({params}):
      -> ({yields})
  return (%r)
"""


@pytest.mark.parametrize("text,message", [
    (IF.format(yield0="%x, %x"), "prim::If on line 2: block0 yields 2 values, the node has 1"),
    (IF.format(yield0=""), "prim::If on line 2: block0 yields 0 values"),
    (LOOP.format(params="%i : int", yields="%t, %x"), "prim::Loop on line 3: block0 takes 1"),
    (LOOP.format(params="%i : int, %a : Tensor", yields="%t"), "block0 yields 1 values"),
])
def test_control_flow_arity_is_checked(text, message):
    g = parse_ir(text)
    with pytest.raises(IRVerificationError, match=message):
        g.lint()


def test_well_formed_control_flow_lints():
    parse_ir(IF.format(yield0="%x")).lint()
    parse_ir(LOOP.format(params="%i : int, %a : Tensor", yields="%t, %a")).lint()


def test_thousands_of_nested_ifs_parse_lint_and_print():
    """Walking, linting and printing use explicit stacks: no RecursionError at 3000 levels."""
    text = nested_ifs(3000)
    g = parse_ir(text)
    g.lint()
    assert str(g) == text and sum(1 for _ in g.block.walk()) == 3001
