"""specialize_autograd_zero: PyTorch's specializeAutogradZero pair and unit cases."""

from pathlib import Path


from irjit import parse_ir
from irjit.compiler.passes import get_pass
from . import run_example as run_pair, run_text as run

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "passes"


def test_pytorch_pair():
    run_pair("specialize_autograd_zero", "specialize_autogradzero__hand_autograd_zero")


def test_forward_graphs_are_untouched():
    g, changed = run("specialize_autograd_zero", "graph(%x : Tensor):\n  return (%x)\n")
    assert not changed


NON_PROFILED = """graph(%g : Tensor(requires_grad=0)[Undefined], %h : Float(2, strides=[1], requires_grad=0, device=cpu), %k : Float(2, strides=[1], requires_grad=0, device=cpu)):
  %1 : Tensor = prim::AutogradAdd(%g, %h)
  %2 : Tensor = prim::AutogradAdd(%1, %k)
  %c : int = prim::AutogradAnyNonZero(%g)
  %3 : Tensor = prim::If(%c)
    block0():
      %4 : Tensor = aten::neg(%g)
      -> (%4)
    block1():
      %5 : Tensor = prim::AutogradZero()
      -> (%5)
  return (%2, %3)
"""


def test_states_from_input_types():
    src = NON_PROFILED.replace("%h : Float(2, strides=[1], requires_grad=0, device=cpu)",
                               "%h : Float(2, strides=[1], requires_grad=0, device=cpu)")
    g = parse_ir(src)
    # the parser leaves  unset for printed complete types; mark h, k defined
    for v in g.inputs[1:]:
        v.type = v.type.with_(undefined=False)
    assert get_pass("specialize_autograd_zero").run(g, profiling=0)
    g.lint()
    text = str(g)
    assert "prim::AutogradAdd" not in text
    assert "aten::add(%h, %k" in text
    assert "prim::If" not in text and "prim::AutogradZero()" in text


def test_profiled_inputs_version_the_graph():
    src = """graph(%g : Tensor, %h : Tensor):
  %p : Tensor = prim::profile[profiled_type=Tensor(requires_grad=0)[Undefined], seen_none=0](%g)
  %q : Tensor = prim::profile[profiled_type=Float(2, strides=[1], requires_grad=0, device=cpu), seen_none=0](%h)
  %1 : Tensor = prim::AutogradAdd(%p, %q)
  return (%1)
"""
    g = parse_ir(src)
    tq = g.inputs[1].uses[0].user.attr("profiled_type")
    g.inputs[1].uses[0].user.set_attr("profiled_type", "ty", tq.with_(undefined=False))
    assert get_pass("specialize_autograd_zero").run(g)
    g.lint()
    text = str(g)
    assert "prim::AutogradAllZero(%g" in text and "prim::AutogradAllNonZero(%h" in text
    assert "aten::all" in text and "prim::FallbackGraph" in text
    assert text.count("prim::AutogradAdd") == 1  # only in the fallback subgraph
