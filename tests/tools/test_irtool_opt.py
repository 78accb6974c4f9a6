"""`irtool opt`: passes over a file, printed in PyTorch's format; clean one-line errors."""

from pathlib import Path

import pytest

from irjit.tools.irtool import main

GRAPH = """graph(%x : Tensor,
      %n : int):
  %1 : int = prim::Constant[value=1]()
  %2 : int = prim::Constant[value=1]()
  %3 : Tensor = aten::add(%x, %x, %1)
  %4 : Tensor = aten::add(%x, %x, %2)
  %5 : Tensor = aten::mul(%3, %4)
  %6 : Tensor = aten::relu(%5)
  return (%5)
"""


@pytest.fixture
def graph_file(tmp_path):
    p = tmp_path / "g.ir"
    p.write_text(GRAPH)
    return str(p)


def test_opt_prints_rewritten_graph(graph_file, capsys):
    assert main(["opt", "--passes=cse,dce", "--verify", graph_file]) == 0
    out, err = capsys.readouterr()
    assert out == """graph(%x : Tensor,
      %n : int):
  %1 : int = prim::Constant[value=1]()
  %3 : Tensor = aten::add(%x, %x, %1)
  %5 : Tensor = aten::mul(%3, %3)
  return (%5)
"""
    assert err == ""


def test_opt_input_types_print_after_all_and_timing(graph_file, capsys):
    assert main(["opt", "--passes=dce", "--input-types", "Float(1, 3, 8, 8, requires_grad=1), int",
                 "--print-after-all", "--time-passes", graph_file]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("graph(%x : Float(1, 3, 8, 8, requires_grad=1),\n      %n : int):")
    assert "# after dce\n" in err and "total" in err
    assert "# after" not in out


def test_opt_skips_self_for_input_types(tmp_path, capsys):
    p = tmp_path / "m.ir"
    p.write_text("graph(%self : __torch__.M,\n      %x : Tensor):\n  return (%x)\n")
    assert main(["opt", "--passes=dce", "--input-types", "Float(2)", str(p)]) == 0
    assert "%x : Float(2)" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["--passes=bogus"], "unknown pass 'bogus'"),
    (["--passes=dce{nope=1}"], "no option 'nope'"),
    (["--passes=peephole{disabel-shape-peepholes=1}"],
     "pass peephole has no option 'disabel-shape-peepholes' "
     "(valid options: disable-shape-peepholes)"),
    (["--passes=peephole{disable-shape-peepholes=2}"],
     "option disable-shape-peepholes of pass peephole takes true/false, not 2"),
    (["--passes=dce,"], "bad pipeline"),
    (["--passes=dce", "--input-types", "Float(2)"], "1 input types given but the graph takes 2"),
    (["--passes=dce", "--input-types", "int, int"], "cannot take type int"),
    (["--passes=dce", "--input-types", "Float(2, int"], "bad type"),
])
def test_opt_errors_are_one_line(graph_file, capsys, argv, message):
    assert main(["opt", *argv, graph_file]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("irtool: error: ") and message in err
    assert err.count("\n") == 1


def test_opt_missing_file(capsys):
    assert main(["opt", "--passes=dce", "/nonexistent/x.ir"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and "no such file" in err


def test_opt_list(capsys):
    assert main(["opt", "--list"]) == 0
    out = capsys.readouterr().out
    for name in ("eliminate_dead_code", "eliminate_common_subexpression", "constant_pooling",
                 "constant_propagation", "constant_propagation_immutable_types", "inline",
                 "lower_tuples", "canonicalize", "dce"):
        assert name in out


@pytest.mark.parametrize("pipeline,message", [
    ("autodiff{node-threshold=x}", "option node-threshold of pass autodiff takes an integer"),
    ("insert_guards{style=weird}",
     "option style of pass insert_guards takes one of typecheck, bailout, not 'weird'"),
    ("autodiff{node-threshold=-2}", "option node-threshold of pass autodiff takes an integer >= 0, not -2"),
    ("create_autodiff_subgraphs{node-threshold=-1}",
     "option node-threshold of pass create_autodiff_subgraphs takes an integer >= 0, not -1"),
    ("inline_autodiff_subgraphs{threshold=-5}",
     "option threshold of pass inline_autodiff_subgraphs takes an integer >= 0, not -5"),
])
def test_bad_option_values_are_one_line_errors(pipeline, message, capsys):
    from irjit.tools.irtool import main
    seed = Path(__file__).resolve().parents[1] / "fixtures" / "seed" / "script_conv_relu.ir"
    assert main(["opt", f"--passes={pipeline}", str(seed)]) == 1
    captured = capsys.readouterr()
    assert message in captured.err and captured.out == ""


def test_misspelled_option_exits_1_from_the_command_line(graph_file):
    """The installed-script path: a misspelled option is one line on stderr and exit status 1."""
    import subprocess
    import sys
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, "-m", "irjit.tools.irtool", "opt",
                           "--passes=peephole{disabel-shape-peepholes=1}", graph_file],
                          cwd=root, capture_output=True, text=True)
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert proc.stderr == ("irtool: error: pass peephole has no option 'disabel-shape-peepholes'"
                           " (valid options: disable-shape-peepholes)\n")
