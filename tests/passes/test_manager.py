import io

import pytest

from irjit.compiler.passes import get_pass
from irjit.compiler.passes.manager import (ALIASES, PassError, PassManager, describe_passes,
                                     is_pipeline, parse_pipeline, register_pipeline, resolve)

from . import parse

GRAPH = """graph(%x : Tensor):
  %1 : int = prim::Constant[value=1]()
  %2 : int = prim::Constant[value=1]()
  %3 : Tensor = aten::add(%x, %x, %1)
  %4 : Tensor = aten::add(%x, %x, %2)
  %5 : Tensor = aten::mul(%3, %4)
  %6 : Tensor = aten::relu(%5)
  return (%5)
"""


def test_parse_pipeline_converts_options():
    assert parse_pipeline("dce, cse,autodiff{node-threshold=1,inline-threshold=2, flag, "
                          "name=abc, on=true, off=False, ratio=0.5}") == [
        ("dce", {}), ("cse", {}),
        ("autodiff", {"node_threshold": 1, "inline_threshold": 2, "flag": True, "name": "abc",
                      "on": True, "off": False, "ratio": 0.5})]


@pytest.mark.parametrize("bad", ["", "dce,", ",dce", "dce{x=1", "dce cse", "dce{=1}", "1abc"])
def test_parse_pipeline_rejects_bad_syntax(bad):
    with pytest.raises(PassError):
        parse_pipeline(bad)


def test_aliases_resolve():
    assert ALIASES["dce"] == "eliminate_dead_code"
    assert resolve("cse").name == "eliminate_common_subexpression"
    assert resolve("constprop").name == "constant_propagation"
    assert resolve("inline").name == "inline"
    with pytest.raises(PassError, match="unknown pass"):
        resolve("no_such_pass")


def test_bad_option_is_reported_before_running():
    with pytest.raises(PassError, match="no option 'bogus'"):
        PassManager("dce{bogus=1}")


def test_runs_in_order_and_times_and_prints():
    g = parse(GRAPH)
    stream = io.StringIO()
    pm = PassManager("cse,dce", verify=True, print_after_all=True, stream=stream)
    assert pm.run(g)
    kinds = [n.kind for n in g.nodes()]
    assert kinds == ["prim::Constant", "aten::add", "aten::mul"]
    out = stream.getvalue()
    assert out.index("# after cse\n") < out.index("# after dce\n")
    assert [name for name, _, _ in pm.timings] == ["cse", "dce"]
    table = pm.timing_table()
    assert "cse" in table and "total" in table


def test_verify_names_the_broken_pass(monkeypatch):
    from irjit.compiler.passes import registry

    def breaker(graph):
        """Breaks the graph."""
        n = next(iter(graph.nodes()))
        n.inputs.append(graph.inputs[0])  # input without a use: lint must fail
        return True
    monkeypatch.setitem(registry._PASSES, "test_breaker",
                        registry.PassInfo("test_breaker", breaker, "breaks"))
    with pytest.raises(PassError, match="after pass test_breaker"):
        PassManager("test_breaker", verify=True).run(parse(GRAPH))


def test_pipelines_are_pass_names(monkeypatch):
    from irjit.compiler.passes import manager, registry
    monkeypatch.setattr(manager, "_PIPELINES", set(manager._PIPELINES))
    monkeypatch.setattr(registry, "_PASSES", dict(registry._PASSES))
    calls = []

    def cleanup(graph, rounds: int = 1):
        """Test pipeline: CSE then DCE."""
        calls.append(rounds)
        PassManager("cse,dce").run(graph)
    register_pipeline("test_cleanup", cleanup)
    assert is_pipeline("test_cleanup")
    assert get_pass("test_cleanup").description == "Test pipeline: CSE then DCE."
    g = parse(GRAPH)
    PassManager("test_cleanup{rounds=2},constant_pooling", verify=True).run(g)
    assert calls == [2]
    assert "aten::relu" not in str(g)
    with pytest.raises(PassError, match="no option"):
        PassManager("test_cleanup{nope=1}")
    assert ("test_cleanup", "pipeline", "Test pipeline: CSE then DCE.") in describe_passes()


def test_every_registered_pass_declares_its_options():
    """No pass swallows options it does not know (`**kwargs`): each declares them by name."""
    from irjit.compiler.passes.registry import all_passes
    infos = all_passes()
    assert {o.spelling for o in infos["peephole"].options} == {"disable-shape-peepholes"}
    assert {o.spelling for o in infos["autodiff"].options} >= {"node-threshold", "inline-threshold"}
    assert infos["remove_expands"].options == ()


def test_a_pass_taking_kwargs_cannot_be_registered():
    from irjit.compiler.passes.registry import register_pass

    def sloppy(graph, **_options) -> bool:
        return False
    with pytest.raises(AssertionError, match="must declare its options"):
        register_pass("test_sloppy")(sloppy)


def test_option_ranges_are_checked_before_running():
    """Options with a range (thresholds, enum-like names) reject values outside it, naming the
    option and what it takes; None stays allowed where it is the default."""
    with pytest.raises(PassError, match=r"^option node-threshold of pass create_autodiff_subgraphs "
                                        r"takes an integer >= 0, not -1$"):
        PassManager("create_autodiff_subgraphs{node-threshold=-1}")
    with pytest.raises(PassError, match=r"takes one of typecheck, bailout, not 'guards'$"):
        PassManager([("insert_guards", {"style": "guards"})])
    PassManager([("autodiff", {"node_threshold": None, "inline_threshold": 0})])
