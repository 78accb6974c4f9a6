"""inline_autodiff_subgraphs: groups below the threshold are inlined back; the global switch
turns the pipeline's thresholds to 1 as torch._C._debug_set_autodiff_subgraph_inlining does."""

from irjit import compiler
from irjit.compiler.settings import debug_set_autodiff_subgraph_inlining, get_settings
from irjit.compiler.passes.registry import get_pass

from .test_create_autodiff_subgraphs import POINTWISE, _dgs


def test_small_subgraphs_are_inlined():
    g = compiler.parse_ir(POINTWISE)
    get_pass("create_autodiff_subgraphs").run(g)
    assert not get_pass("inline_autodiff_subgraphs").run(g, threshold=5)  # 5 nodes stay
    assert get_pass("inline_autodiff_subgraphs").run(g, threshold=100)
    g.lint()
    assert not _dgs(g)
    assert [n.kind for n in g.nodes() if n.kind != "prim::Constant"].count("aten::mul") == 2


def test_switch():
    assert get_settings().autodiff_subgraph_inlining
    assert get_settings().autodiff_thresholds() == (2, 5)
    debug_set_autodiff_subgraph_inlining(False)
    try:
        assert get_settings().autodiff_thresholds() == (1, 1)
    finally:
        debug_set_autodiff_subgraph_inlining(True)
