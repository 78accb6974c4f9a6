"""linear_backward decomposes into BLAS products and a sum that run natively, with the
interpreter's gradients, for each output mask."""

import numpy as np
import pytest

from irjit.compiler import parse_ir
from irjit.ops.tensor import Tensor
from irjit.runtime import no_grad
from irjit.runtime.interpreter import Interpreter
from irjit.runtime.native import NativeRunner

GRAPH = """graph(%x : Tensor, %g : Tensor, %w : Tensor):
  %t : bool = prim::Constant[value=1]()
  %f : bool = prim::Constant[value=0]()
  %m : bool[] = prim::ListConstruct({mask})
  %a : Tensor, %b : Tensor, %c : Tensor = aten::linear_backward(%x, %g, %w, %m)
  return ({outs})"""


@pytest.mark.parametrize("mask", [(1, 1, 1), (0, 1, 1), (1, 0, 0)])
def test_linear_backward_runs_natively_with_the_interpreters_gradients(mask):
    names = [n for n, m in zip("abc", mask) if m]
    text = GRAPH.format(mask=", ".join("%t" if m else "%f" for m in mask),
                        outs=", ".join(f"%{n}" for n in names))
    rng = np.random.default_rng(0)
    xs = [Tensor(rng.standard_normal(s).astype(np.float32)) for s in [(2, 5, 8), (2, 5, 6), (6, 8)]]
    expected = Interpreter(parse_ir(text)).run(xs)
    runner = NativeRunner(parse_ir(text))
    with no_grad():
        for _ in range(2):
            got = runner.run(xs)
    for e, g in zip(expected, got):
        assert g.data.shape == e.data.shape
        np.testing.assert_allclose(g.data, e.data, rtol=1e-5, atol=1e-5)
    assert runner.stats.nodes_interpreted == 0 and runner.stats.nodes_native >= len(names)


def test_an_unused_output_the_mask_keeps_is_not_computed():
    """A backward whose input needs no gradient keeps linear_backward's mask [True, True,
    True] (as the symbolic formula writes it) but discards grad_input: no product for it."""
    from irjit.compiler.codegen.decompose import decompose_for_native
    from irjit.compiler.passes.specialize_input_types import parse_input_types, specialize_input_types
    text = GRAPH.format(mask="%t, %t, %t", outs="%b, %c")
    g = parse_ir(text)
    specialize_input_types(g, parse_input_types("Float(5, 8), Float(5, 6), Float(6, 8)"))
    for n in g.nodes():  # (the output types a profiled graph would carry)
        if n.kind == "aten::linear_backward":
            for o, sizes in zip(n.outputs, [(5, 8), (6, 8), (6,)]):
                o.type = n.inputs[0].type.with_(sizes=sizes, strides=(8, 1) if len(sizes) == 2 else (1,))
    assert decompose_for_native(g)
    assert [n.kind for n in g.nodes()].count("aten::matmul") == 1  # (grad_weight's only)
