"""lower_graph against PyTorch 2.13's `_jit_pass_lower_graph` pair (tests/fixtures/passes_frozen):
torch lowers the ConvMul module after inlining its conv's forward; we lower the same module's
inlined graph (the freeze_module pair's before-graph) and must print torch's after-graph."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from irjit import parse_ir
from irjit.compiler.passes import get_pass
from irjit.compiler.passes.lower_graph import LoweringError, lower_graph
from irjit.runtime.loader import load

from . import renumber

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "passes_frozen"
INLINED = FIXTURES / "freeze_module__conv_mul_before.ir"
PARAMS = FIXTURES / "freeze_module__conv_mul_params.npz"
PARAMETERS = ("conv.weight", "conv.bias")  # the nn.Parameters; `scale` is a buffer


def _lowered():
    g = parse_ir(INLINED.read_text())
    slots = lower_graph(g, dict(np.load(PARAMS)), PARAMETERS)
    g.lint()
    return g, slots


def test_matches_pytorch_and_lists_the_slots_in_input_order():
    g, slots = _lowered()
    assert renumber(str(g)) == renumber((FIXTURES / "lower_graph__conv_mul_after.ir").read_text())
    assert slots == ["scale", "conv.bias", "conv.weight"]


def test_lowered_graph_computes_what_the_module_did():
    x = np.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype(np.float32)
    params = dict(np.load(PARAMS))
    want = load(INLINED.read_text(), params=PARAMS).run(x)
    g, slots = _lowered()
    got = load(g).run(x, *[params[s] for s in slots])
    np.testing.assert_allclose(got[0].data, want[0].data, rtol=1e-6)


def test_attribute_read_twice_is_one_input():
    g = parse_ir("graph(%self : __torch__.M, %x : Tensor):\n"
                 "  %a : Tensor = prim::GetAttr[name=\"w\"](%self)\n"
                 "  %b : Tensor = prim::GetAttr[name=\"w\"](%self)\n"
                 "  %c : Tensor = aten::mul(%a, %b)\n"
                 "  %d : int = prim::GetAttr[name=\"k\"](%self)\n"
                 "  %e : Tensor = aten::mul(%c, %d)\n"
                 "  return (%e)\n")
    assert get_pass("lower_graph").run(g, params={"w": np.ones((2,), np.float32)})
    assert renumber(str(g)) == renumber(
        "graph(%x : Tensor,\n      %7 : int,\n      %8 : Float(2, strides=[1], requires_grad=0, device=cpu)):\n"
        "  %c : Tensor = aten::mul(%8, %8)\n  %e : Tensor = aten::mul(%c, %7)\n  return (%e)\n")


@pytest.mark.parametrize("text,message", [
    ((FIXTURES / "lower_graph__conv_mul_before.ir").read_text(), "inline method calls first"),
    ("graph(%self : __torch__.M):\n  %a : Tensor = prim::GetAttr[name=\"w\"](%self)\n  return (%a)\n",
     "no value for attribute 'w'"),
])
def test_errors_name_the_problem(text, message):
    with pytest.raises(LoweringError, match=message):
        lower_graph(parse_ir(text), {})
