"""runtime.profiling: prim::profile nodes record observed types, merged across runs."""

import numpy as np

from irjit import parse_ir
from irjit.ops.types import TensorType
from irjit.runtime.autograd import no_grad
from irjit.runtime.profiling import ProfilingInterpreter, merge_profiled, record_profile
from irjit.ops.tensor import Tensor

SRC = """graph(%x : Tensor, %c : bool):
  %y : Tensor = prim::If(%c)
    block0():
      %a : Tensor = aten::relu(%x)
      -> (%a)
    block1():
      %b : Tensor = aten::neg(%x)
      -> (%b)
  return (%y)
"""


def _profiles(g):
    return [n for n in g.walk() if n.kind == "prim::profile" and n.inputs]


def test_records_observed_type_in_pytorch_form():
    g = parse_ir(SRC)
    x = Tensor(np.zeros((1, 3, 8, 8), np.float32), requires_grad=True)
    out = record_profile(g, [x, True])
    assert out[0].data.shape == (1, 3, 8, 8)
    text = str(g)
    assert ("prim::profile[profiled_type=Float(1, 3, 8, 8, strides=[192, 64, 8, 1], "
            "requires_grad=1, device=cpu), seen_none=0](%x)") in text
    # the branch that did not run keeps the unobserved `Tensor`
    assert "prim::profile[profiled_type=Tensor, seen_none=0](%x)" in text
    assert "   = prim::profile()\n  return (" in text


def test_runs_merge_sizes_into_stars():
    g = parse_ir(SRC)
    interp = ProfilingInterpreter(g)
    record_profile(g, [Tensor(np.zeros((2, 3), np.float32)), True])
    interp.run([Tensor(np.zeros((5, 3), np.float32)), True])
    types = {str(n.attr("profiled_type")) for n in _profiles(g)}
    assert "Float(*, 3, strides=[3, 1], requires_grad=0, device=cpu)" in types


def test_requires_grad_is_recorded_under_grad_mode_only():
    g = parse_ir(SRC)
    x = Tensor(np.zeros((2,), np.float32), requires_grad=True)
    with no_grad():
        record_profile(g, [x, True])
    assert "requires_grad=0" in str(g.inputs[0].uses[0].user.attr("profiled_type"))


def test_merge_keeps_common_fields():
    a = TensorType("Float", (2, 3), (3, 1), True, "cpu", False)
    b = TensorType("Float", (2, 4), (4, 1), True, "cpu", False)
    m = merge_profiled(a, b)
    assert m.sizes == (2, None) and m.strides == (None, 1) and m.requires_grad
    assert merge_profiled(a, TensorType("Float", (2,), (1,), True, "cpu", False)).sizes is None
