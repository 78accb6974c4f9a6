import pytest

from irjit.compiler.passes import get_pass

from . import fixture_pairs, parse, read_fixture, renumber

INLINE = get_pass("inline").run

# Callee graphs PyTorch inlined, written out from the fixtures' after-graphs (the fixtures do
# not carry the callee functions themselves).
CONV2D_FORWARD = """graph(%self : __torch__.torch.nn.modules.conv.Conv2d,
      %input : Tensor):
  %5 : int = prim::Constant[value=0]() # /usr/local/lib/python3.11/site-packages/torch/nn/modules/conv.py:561:46
  %6 : int = prim::Constant[value=1]() # /usr/local/lib/python3.11/site-packages/torch/nn/modules/conv.py:561:33
  %weight : Tensor = prim::GetAttr[name="weight"](%self)
  %bias : Tensor? = prim::GetAttr[name="bias"](%self)
  %9 : int[] = prim::ListConstruct(%6, %6)
  %10 : int[] = prim::ListConstruct(%5, %5)
  %11 : int[] = prim::ListConstruct(%6, %6)
  %12 : Tensor = aten::conv2d(%input, %weight, %bias, %9, %10, %11, %6) # /usr/local/lib/python3.11/site-packages/torch/nn/modules/conv.py:560:15
  return (%12)
"""

FALLBACK = """graph(%x.1 : Tensor,
      %y.1 : Tensor):
  %10 : int = prim::Constant[value=1]()
  %11 : float = prim::Constant[value=1.]()
  %12 : Tensor = aten::mul(%x.1, %y.1) # /home/user/models.py:380:12
  %z.2 : Tensor = aten::add(%12, %11, %10) # /home/user/models.py:380:12
  %14 : Tensor = aten::tanh(%z.2) # /home/user/models.py:381:15
  %15 : Tensor = aten::sigmoid(%14) # /home/user/models.py:381:15
  %16 : Tensor = aten::mul(%15, %x.1) # /home/user/models.py:381:15
  %17 : (Tensor) = prim::TupleConstruct(%16)
  return (%17)
"""

CALLEES = {
    "uninlined_conv_relu": {"__torch__.torch.nn.modules.conv.Conv2d.forward": CONV2D_FORWARD},
    "profiled_run2_pw": {"fallback_function": FALLBACK},
}


@pytest.mark.parametrize("pair", fixture_pairs("inline"), ids=lambda p: p["example"])
def test_pytorch_pairs(pair):
    g = parse(read_fixture(pair["before"]))
    functions = {k: parse(v) for k, v in CALLEES[pair["example"]].items()}
    assert INLINE(g, functions=functions)
    g.lint()
    assert renumber(str(g)) == renumber(read_fixture(pair["after"]))


def test_nested_calls_are_inlined_and_recursion_stops():
    inner = parse("""graph(%a : Tensor):
  %b : Tensor = aten::neg(%a)
  return (%b)
""")
    outer = parse("""graph(%a : Tensor):
  %f : Function = prim::Constant[name="inner"]()
  %b : Tensor = prim::CallFunction(%f, %a)
  %c : Tensor = aten::exp(%b)
  return (%c)
""")
    selfrec = parse("""graph(%a : Tensor):
  %f : Function = prim::Constant[name="selfrec"]()
  %b : Tensor = prim::CallFunction(%f, %a)
  return (%b)
""")
    g = parse("""graph(%x : Tensor):
  %f : Function = prim::Constant[name="outer"]()
  %g : Function = prim::Constant[name="selfrec"]()
  %y : Tensor = prim::CallFunction(%f, %x)
  %z : Tensor = prim::CallFunction(%g, %y)
  return (%z)
""")
    assert INLINE(g, functions={"inner": inner, "outer": outer, "selfrec": selfrec})
    g.lint()
    kinds = [n.kind for n in g.nodes() if n.kind != "prim::Constant"]
    assert kinds == ["aten::neg", "aten::exp", "prim::CallFunction"]


def test_unknown_callee_is_left_alone():
    g = parse("""graph(%x : Tensor):
  %f : Function = prim::Constant[name="nope"]()
  %y : Tensor = prim::CallFunction(%f, %x)
  return (%y)
""")
    assert not INLINE(g)
