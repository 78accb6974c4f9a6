"""create_autodiff_subgraphs: PyTorch's slicing (bottom-up merging, node threshold, no view ops,
no crossing of blocks or side effects), up to value numbering."""

import irjit
from irjit.compiler.passes.registry import get_pass

T = "Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu)"
POINTWISE = f"""graph(%x : {T}, %y : {T}):
  %2 : int = prim::Constant[value=1]()
  %3 : float = prim::Constant[value=1.]()
  %4 : {T} = aten::mul(%x, %y)
  %5 : {T} = aten::add(%4, %3, %2)
  %6 : {T} = aten::neg(%5)
  %7 : {T} = aten::div(%6, %y)
  %8 : {T} = aten::mul(%7, %x)
  return (%8)
"""


def _dgs(g):
    return [n for n in g.walk() if n.kind == "prim::DifferentiableGraph"]


def test_merges_the_chain_like_pytorch():
    g = irjit.parse_ir(POINTWISE)
    assert get_pass("create_autodiff_subgraphs").run(g)
    g.lint()
    (dg,) = _dgs(g)
    assert [v.name for v in dg.inputs] == ["x", "y"]  # PyTorch's input order (fixture)
    kinds = [n.kind for n in dg.attr("Subgraph").nodes() if n.kind != "prim::Constant"]
    assert kinds == ["aten::mul", "aten::add", "aten::neg", "aten::div", "aten::mul"]
    assert "prim::DifferentiableGraph_0(%x, %y)" in str(g)


def test_threshold_unmerges_small_groups():
    text = f"""graph(%x : {T}):
  %1 : {T} = aten::neg(%x)
  return (%1)
"""
    g = irjit.parse_ir(text)
    assert not get_pass("create_autodiff_subgraphs").run(g)
    assert not _dgs(g)
    g = irjit.parse_ir(text)
    assert get_pass("create_autodiff_subgraphs").run(g, node_threshold=1)
    assert len(_dgs(g)) == 1


def test_side_effects_and_views_split_groups():
    g = irjit.parse_ir(f"""graph(%x : {T}):
  %1 : {T} = aten::neg(%x)
  %2 : int[] = prim::Constant[value=[16]]()
  %3 : Tensor = aten::view(%1, %2)
  %4 : {T} = aten::neg(%1)
  %5 : {T} = aten::neg(%4)
  return (%5, %3)
""")
    get_pass("create_autodiff_subgraphs").run(g, node_threshold=1)
    g.lint()
    assert any(n.kind == "aten::view" for n in g.nodes())  # views stay outside
    assert all(n.kind != "aten::view" for dg in _dgs(g) for n in dg.attr("Subgraph").nodes())


def test_never_crosses_blocks():
    g = irjit.parse_ir(f"""graph(%x : {T}, %c : bool):
  %1 : {T} = aten::neg(%x)
  %2 : Tensor = prim::If(%c)
    block0():
      %3 : {T} = aten::neg(%1)
      %4 : {T} = aten::neg(%3)
      -> (%4)
    block1():
      -> (%1)
  return (%2)
""")
    get_pass("create_autodiff_subgraphs").run(g, node_threshold=2)
    g.lint()
    dgs = _dgs(g)
    assert len(dgs) == 1 and dgs[0].owning_block is not g.block
