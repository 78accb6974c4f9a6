"""`prim::CallFunction` of torch.nn.functional's script helpers without their graphs, and the
run-time mode queries modules make (`torch.is_autocast_enabled()`, `torch.is_grad_enabled()`)."""

from pathlib import Path

import numpy as np
import pytest

import irjit
from irjit.runtime.library_functions import LIBRARY_FUNCTIONS

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
POOLING = FIXTURES / "generated" / "run" / "pooling_script"


@pytest.mark.parametrize("executor", ["interp", "legacy", "profiling"])
def test_scripted_graph_calling_max_pool2d_matches_pytorch_without_its_graph(executor):
    """The un-inlined `Pooling.graph` calls `_max_pool2d`, `adaptive_avg_pool2d` and
    `_adaptive_max_pool2d`; PyTorch's results are those of the inlined run fixture."""
    fn = irjit.load(FIXTURES / "generated" / "roundtrip" / "0070_script_pooling_graph.ir",
                    executor=executor)
    x = np.load(POOLING / "inputs.npz")["arg0"]
    expected = np.load(POOLING / "expected.npz")
    for _ in range(3):
        outs = fn(x)
        for i, out in enumerate(outs):
            np.testing.assert_allclose(out, expected[f"out{i}"], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(fn.backward()["arg0"], expected["grad.arg0"], rtol=1e-4,
                                   atol=1e-5)


def test_max_pool1d_with_default_stride_uses_the_kernel_size():
    fn = irjit.load(FIXTURES / "generated" / "roundtrip" / "0399_script_fn_pool_f.ir")
    x = np.arange(2 * 3 * 4 * 6, dtype=np.float32).reshape(2, 3, 4, 6)
    a, b, c, d = fn(x)
    np.testing.assert_array_equal(a, x.reshape(2, 3, 2, 2, 3, 2).max(axis=(3, 5)))
    flat = x.reshape(2, 3, 24)
    np.testing.assert_array_equal(d, flat.reshape(2, 3, 8, 3).max(axis=3))
    np.testing.assert_allclose(c, x.mean(axis=(2, 3), keepdims=True), rtol=1e-6)


def test_softmax_without_dim_picks_pytorch_default_dim():
    x = irjit.Tensor(np.arange(6, dtype=np.float64).reshape(2, 3))
    out = LIBRARY_FUNCTIONS["softmax"](x, None, 3, None)
    e = np.exp(x.data - x.data.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out.data, e / e.sum(axis=1, keepdims=True))


def test_missing_function_that_is_not_a_library_helper_is_still_an_error():
    g = irjit.parse_ir("""graph(%x.1 : Tensor):
  %f : Function = prim::Constant[name="my_helper"]()
  %y : Tensor = prim::CallFunction(%f, %x.1)
  return (%y)
""")
    with pytest.raises(Exception, match="my_helper"):
        irjit.load(g)(np.ones(2, np.float32))


@pytest.mark.parametrize("executor", ["interp", "legacy", "profiling"])
def test_autocast_and_grad_mode_queries_answer_at_run_time(executor):
    fn = irjit.load(FIXTURES / "runtime" / "mode_queries.ir", executor=executor)
    x = np.ones(2, np.float32)
    for _ in range(3):
        y, grad_on = fn(x)
        np.testing.assert_array_equal(y, 2 * x)  # autocast is off: the add branch
        assert grad_on is True
        (_, grad_off) = fn.run(x, requires_grad=False)[0]
        assert grad_off is False


def test_mode_queries_are_not_folded_by_constant_propagation():
    g = irjit.parse_ir((FIXTURES / "runtime" / "mode_queries.ir").read_text())
    irjit.passes.run(g, "constant_propagation")
    kinds = {n.kind for n in g.walk()}
    assert {"aten::is_grad_enabled", "aten::is_autocast_enabled"} <= kinds


@pytest.mark.parametrize("executor", ["interp", "legacy", "profiling"])
def test_tensor_queries_scripted_code_makes(executor):
    """torch.is_nonzero / is_same_size / is_signed / is_inference / is_conj / is_neg and
    Tensor.is_leaf, as PyTorch 2.13 scripts them."""
    fn = irjit.load(FIXTURES / "runtime" / "tensor_queries.ir", executor=executor)
    x = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]], np.float32)
    for _ in range(3):
        assert fn(x, np.zeros((2, 3), np.float32)) == (True, True, True, False, False, False, True)
    assert fn(-x, np.zeros((3, 2), np.float32))[:2] == (False, False)


def test_is_nonzero_of_several_values_is_ambiguous_as_in_pytorch():
    from irjit.runtime.autograd import run_op
    with pytest.raises(RuntimeError, match="more than one value is ambiguous"):
        run_op("aten::is_nonzero", irjit.Tensor(np.ones(2)))
