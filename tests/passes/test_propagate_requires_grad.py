"""propagate_requires_grad: PyTorch's RequiresGradAnalysis, through prim::If."""

import irjit
from irjit.compiler.passes.registry import get_pass


def test_if_and_comparisons():
    g = irjit.parse_ir("""graph(%x : Float(2, requires_grad=1), %y : Float(2, requires_grad=0), %c : bool):
  %1 : Tensor = aten::neg(%y)
  %2 : Tensor = prim::If(%c)
    block0():
      -> (%x)
    block1():
      -> (%1)
  %3 : int = prim::Constant[value=0]()
  %4 : Tensor = aten::gt(%x, %3)
  return (%2, %4)
""")
    assert get_pass("propagate_requires_grad").run(g)
    n1, n2 = [n for n in g.nodes() if n.kind in ("aten::neg", "prim::If")]
    assert n1.outputs[0].type.requires_grad is False
    assert n2.outputs[0].type.requires_grad is True
    assert g.outputs[1].type.requires_grad is False
