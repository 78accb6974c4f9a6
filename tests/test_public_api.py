"""`import irjit` is the public API: every name in `irjit.__all__` resolves, importing the
package alone loads none of the layers (names load on first use), and `irjit.passes` runs
pipeline strings."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import irjit

ROOT = Path(__file__).resolve().parents[1]
GRAPH = """graph(%x : Tensor):
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::add(%x, %x, %one)
  %b : Tensor = aten::add(%x, %x, %one)
  %c : Tensor = aten::mul(%a, %b)
  %d : Tensor = aten::relu(%c)
  return (%c)
"""


@pytest.mark.parametrize("name", irjit.__all__)
def test_every_public_name_resolves(name):
    assert getattr(irjit, name) is not None
    assert name in dir(irjit)


def test_the_public_api_has_what_users_need():
    assert {"parse_ir", "print_graph", "Graph", "IRParseError", "IRTypeError", "IRRuntimeError",
            "load", "grad", "Function", "passes", "differentiate", "Gradient", "GraphExecutor",
            "set_profiling_executor", "set_num_profiled_runs", "set_autodiff_thresholds",
            "set_guard_style", "debug_set_autodiff_subgraph_inlining", "set_backend",
            "last_executed_optimized_graph", "manual_seed", "no_grad",
            "structural_hash", "compile"} <= set(irjit.__all__)
    with pytest.raises(AttributeError, match="no attribute 'compiel'"):
        irjit.compiel  # noqa: B018


def test_import_irjit_loads_no_layer_until_a_name_is_used():
    code = ("import sys, irjit\n"
            "print(sorted(m for m in sys.modules if m.startswith('irjit.')))\n"
            "irjit.parse_ir\n"
            "print('irjit.compiler.parser' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout.splitlines()
    assert out == ["[]", "True"]


def test_passes_run_a_pipeline_string_and_list_the_names():
    g = irjit.parse_ir(GRAPH)
    assert irjit.passes.run(g, "cse,dce", verify=True)
    assert [n.kind for n in g.nodes()] == ["prim::Constant", "aten::add", "aten::mul"]
    assert {"dce", "cse", "autodiff", "peephole", "eliminate_dead_code"} <= set(irjit.passes.names())
    with pytest.raises(irjit.passes.PassError, match="valid options: disable-shape-peepholes"):
        irjit.passes.run(g, "peephole{disabel-shape-peepholes=true}")


def test_graph_executor_takes_numpy_arrays_like_load_does():
    """A PyTorch user passes tensors; an irjit user passes numpy arrays (as to `irjit.load`)
    or irjit Tensors, and gets irjit Tensors back."""
    g = irjit.parse_ir(GRAPH)
    x = np.arange(6, dtype=np.float32).reshape(2, 3) - 2
    for profiling in (True, False):
        previous = irjit.set_profiling_executor(profiling)
        try:
            ex = irjit.GraphExecutor(g)
            for _ in range(3):
                (out,) = ex.run(x)
                assert isinstance(out, irjit.Tensor)
                np.testing.assert_array_equal(out.data, (2 * x) ** 2)
            (out,) = ex.run(irjit.Tensor(x))
            np.testing.assert_array_equal(out.data, (2 * x) ** 2)
        finally:
            irjit.set_profiling_executor(previous)
    with pytest.raises(irjit.IRTypeError, match="expects Tensor"):
        irjit.GraphExecutor(g).run([1.0, 2.0])
