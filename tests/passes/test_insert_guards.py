"""insert_guards: TypeCheck/RequiresGradCheck + fallback, and BailOut-style guards."""

from pathlib import Path

import numpy as np

from irjit import parse_ir
from irjit.ops.types import TensorType
from irjit.compiler.passes import get_pass
from irjit.runtime.interpreter import Interpreter
from irjit.runtime.profiling import record_profile
from irjit.ops.tensor import Tensor

from . import POINTWISE_SRC as SRC, renumber

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "passes"


def _profiled(shape=(4, 4)):
    g = parse_ir(SRC)
    x = Tensor(np.full(shape, 0.5, np.float32), requires_grad=True)
    y = Tensor(np.full(shape, 2.0, np.float32), requires_grad=True)
    record_profile(g, [x, y])
    return g, x, y


def test_typecheck_layout_and_fallback_runs():
    g, x, y = _profiled()
    expected = Interpreter(parse_ir(SRC)).run([x, y])[0].data
    assert get_pass("insert_guards").run(g)
    g.lint()
    text = renumber(str(g))
    t = "Float(4, 4, strides=[4, 1], requires_grad=1, device=cpu)"
    assert f"%0 : {t}, %1 : {t}, %2 : bool = prim::TypeCheck[types=[{t}, {t}]](%x.1, %y.1)" in text
    assert "%3 : Tensor = prim::If(%2)" in text
    assert '%10 : Function = prim::Constant[name="fallback_function", fallback=1]()' in text
    assert "%11 : (Tensor) = prim::CallFunction(%10, %x.1, %y.1)" in text
    assert "%12 : Tensor = prim::TupleUnpack(%11)" in text
    assert "prim::profile" not in text
    interp = Interpreter(g, functions=g.fallback_functions)
    np.testing.assert_allclose(interp.run([x, y])[0].data, expected)
    small = [Tensor(np.ones((2, 2), np.float32)), Tensor(np.ones((2, 2), np.float32))]
    assert interp.run(small)[0].data.shape == (2, 2)  # the check fails: fallback path


def test_requires_grad_check():
    g, _, _ = _profiled()
    assert get_pass("insert_guards").run(g, requires_grad_only=1)
    assert ("prim::RequiresGradCheck[types=[Tensor(requires_grad=1), Tensor(requires_grad=1)]]"
            in str(g))


def test_bailout_style():
    g, _, _ = _profiled()
    assert get_pass("insert_guards").run(g, style="bailout")
    g.lint()
    text = renumber(str(g))
    assert "%0 : int = prim::BailoutTemplate_0()" in text
    assert "= prim::BailOut[index=0](%0, %x.1, %y.1)" in text
    assert "= prim::BailOut[index=1](%0, %y.1, %1)" in text
    assert "with prim::BailoutTemplate_0 = graph(%x.1 : Tensor," in text
    template = g.block.first_node.attr("Subgraph")
    assert [n.attr("index") for n in template.walk() if n.kind == "prim::BailOut"] == list(range(7))
    assert all(isinstance(n.outputs[0].type, TensorType) and n.outputs[0].type.sizes == (4, 4)
               for n in template.walk() if n.kind == "prim::BailOut")


def test_nothing_profiled_nothing_guarded():
    g = parse_ir(SRC)
    assert not get_pass("insert_guards").run(g)
    assert not get_pass("insert_guards").run(g, style="bailout")
