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
