"""`irtool parse` and `irtool fmt`, in process through `main([...])` and as a subprocess."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from irjit.tools.irtool import main

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
GOOD = FIXTURES / "roundtrip" / "001_script_conv_relu_graph.ir"
LOOPY = FIXTURES / "roundtrip" / "606_irparser_If2.ir"
BAD = FIXTURES / "malformed" / "028_bad_shape_bang.ir"

# parses, but is not in canonical form (spacing, tab indentation)
SLOPPY = "graph(%x   :  Tensor):\n\t%1 : Tensor = aten::relu( %x )\n\treturn (%1)\n"
CANONICAL = "graph(%x : Tensor):\n  %1 : Tensor = aten::relu(%x)\n  return (%1)\n"


def run_cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "irjit.tools.irtool", *args], cwd=ROOT, input=stdin,
                          capture_output=True, text=True, timeout=120)


# ---- parse, in process

def test_parse_ok(capsys):
    """A valid file parses: exit 0 and `name: ok (N nodes)` on stdout."""
    assert main(["parse", str(GOOD)]) == 0
    out, err = capsys.readouterr()
    assert out == f"{GOOD}: ok (3 nodes)\n" and err == ""


def test_parse_several_files_verify_quiet(capsys):
    """`--verify -q` on several valid files prints nothing and exits 0."""
    assert main(["parse", "--verify", "-q", str(GOOD), str(LOOPY)]) == 0
    assert capsys.readouterr() == ("", "")


def test_parse_malformed_reports_location(capsys):
    """A malformed file with `--verbose`: exit 1, `file:line:col: error: reason` and the line
    with a caret."""
    assert main(["parse", "--verbose", str(BAD)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert lines[0].startswith(f"{BAD}:4:16: error: ")
    assert lines[1] == "  %3 : Double(4!, 4, 5) = prim::Constant()"
    assert lines[2] == " " * 15 + "^"


@pytest.mark.parametrize("command", [["parse"], ["fmt"], ["opt", "--passes=dce"], ["run"]])
def test_parse_error_is_one_line_by_default(command, capsys):
    """Without `--verbose` (and stderr not a terminal) a parse error is the one line
    `file:line:col: error: reason`, whatever the command."""
    assert main([*command, str(BAD)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith(f"{BAD}:4:16: error: ")


def test_parse_good_then_bad_file(capsys):
    """With a good and a bad file, the good one is reported ok and the exit code is 1."""
    assert main(["parse", str(GOOD), str(BAD)]) == 1
    out, err = capsys.readouterr()
    assert out.startswith(f"{GOOD}: ok")
    assert f"{BAD}:4:16: error:" in err


def test_parse_missing_file(tmp_path, capsys):
    """A missing file: exit 1 with `irtool: error: <path>: no such file`."""
    missing = tmp_path / "nope.ir"
    assert main(["parse", str(missing)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err == f"irtool: error: {missing}: no such file\n"


def test_parse_directory_and_non_utf8(tmp_path, capsys):
    """A directory or a non-UTF-8 file is a clear one-line error, exit 1."""
    assert main(["parse", str(tmp_path)]) == 1
    assert capsys.readouterr().err == f"irtool: error: {tmp_path}: is a directory\n"
    binary = tmp_path / "bin.ir"
    binary.write_bytes(b"graph(\xff):\n")
    assert main(["parse", str(binary)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"irtool: error: {binary}: not UTF-8") and err.count("\n") == 1


def test_parse_stdin(monkeypatch, capsys):
    """`-` reads the graph from stdin and reports it as <stdin>."""
    monkeypatch.setattr(sys, "stdin", io.StringIO(CANONICAL))
    assert main(["parse", "-"]) == 0
    assert capsys.readouterr().out == "<stdin>: ok (1 nodes)\n"


def test_parse_stdin_malformed(monkeypatch, capsys):
    """Errors in stdin input are located as `<stdin>:line:col`."""
    monkeypatch.setattr(sys, "stdin", io.StringIO("graph(%x : Tensor):\n  return (%y)\n"))
    assert main(["parse", "-"]) == 1
    assert capsys.readouterr().err.startswith("<stdin>:2:11: error: undefined value %y")


def test_usage_errors_exit_2(capsys):
    """argparse usage errors (no command, no file) exit with status 2."""
    for argv in ([], ["parse"], ["fmt"]):
        with pytest.raises(SystemExit) as info:
            main(argv)
        assert info.value.code == 2
    capsys.readouterr()


# ---- fmt, in process

def test_fmt_prints_canonical_text(tmp_path, capsys):
    """`fmt` writes the canonical printout of a parseable but sloppy file."""
    sloppy = tmp_path / "sloppy.ir"
    sloppy.write_text(SLOPPY)
    assert main(["fmt", str(sloppy)]) == 0
    assert capsys.readouterr() == (CANONICAL, "")


def test_fmt_of_canonical_file_is_identity(capsys):
    """`fmt` of a file PyTorch printed reproduces it exactly."""
    assert main(["fmt", str(LOOPY)]) == 0
    assert capsys.readouterr().out == LOOPY.read_text()


def test_fmt_check_exit_codes(tmp_path, capsys):
    """`fmt --check`: 0 and silent for canonical text, 1 with a message otherwise."""
    assert main(["fmt", "--check", str(GOOD)]) == 0
    assert capsys.readouterr() == ("", "")
    sloppy = tmp_path / "sloppy.ir"
    sloppy.write_text(SLOPPY)
    assert main(["fmt", "--check", str(sloppy)]) == 1
    assert capsys.readouterr() == ("", f"{sloppy}: not in canonical form\n")
    assert sloppy.read_text() == SLOPPY  # --check never rewrites


def test_fmt_malformed_writes_nothing_to_stdout(capsys):
    """`fmt` of a malformed file exits 1 with the located error and no partial output."""
    assert main(["fmt", str(BAD)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.startswith(f"{BAD}:4:16: error:")


def test_fmt_stdin(monkeypatch, capsys):
    """`fmt -` formats stdin."""
    monkeypatch.setattr(sys, "stdin", io.StringIO(SLOPPY))
    assert main(["fmt", "-"]) == 0
    assert capsys.readouterr().out == CANONICAL


def test_fmt_check_flags_crlf(tmp_path, capsys):
    """A file with CRLF line endings is not byte-identical to the canonical form."""
    crlf = tmp_path / "crlf.ir"
    crlf.write_bytes(CANONICAL.replace("\n", "\r\n").encode())
    assert main(["fmt", "--check", str(crlf)]) == 1


def test_parse_verify_of_invalid_graph_is_a_clean_error(tmp_path):
    """`parse --verify` on a graph that is invalid (a node's output used in its own block)
    exits 1 with one error line and no traceback."""
    bad = tmp_path / "own_output.ir"
    bad.write_text("graph(%c : bool):\n  %1 : int = prim::If(%c)\n    block0():\n"
                   "      -> (%1)\n    block1():\n      -> (%1)\n  return (%1)\n")
    result = run_cli("parse", "--verify", str(bad))
    assert result.returncode == 1
    assert "Traceback" not in result.stderr and "error" in result.stderr
    assert result.stdout == ""


# ---- as a subprocess

def test_subprocess_parse_ok():
    """`python -m tools.irtool parse` exits 0 on a valid file."""
    result = run_cli("parse", str(GOOD))
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"{GOOD}: ok (3 nodes)\n"


MALFORMED = sorted((FIXTURES / "malformed").glob("*.ir"))


@pytest.mark.parametrize("path", MALFORMED, ids=[p.name for p in MALFORMED])
def test_every_malformed_fixture_is_a_located_error(path, capsys):
    """Each malformed fixture: exit 1 and stderr starting `file:line:col: error:`."""
    assert main(["parse", str(path)]) == 1
    out, err = capsys.readouterr()
    first = err.splitlines()[0]
    location, _, reason = first.partition(": error: ")
    file, line, col = location.rsplit(":", 2)
    assert (file, out) == (str(path), "")
    assert int(line) >= 1 and int(col) >= 1 and reason


def test_subprocess_malformed_has_no_traceback():
    """Malformed input in a real process: exit 1, a `file:line:col: error:` line, no traceback."""
    for name in ("001_truncated_mid_node.ir", "014_use_before_definition.ir",
                 "041_dict_type_one_arg.ir"):
        path = FIXTURES / "malformed" / name
        result = run_cli("parse", str(path))
        assert result.returncode == 1, path.name
        assert result.stderr.startswith(f"{path}:") and ": error: " in result.stderr
        assert "Traceback" not in result.stderr
        assert result.stdout == ""


def test_subprocess_missing_file():
    """A missing file: exit 1, one clear line, no traceback."""
    result = run_cli("fmt", "does/not/exist.ir")
    assert result.returncode == 1
    assert result.stderr == "irtool: error: does/not/exist.ir: no such file\n"


def test_subprocess_fmt_stdin_and_check():
    """`fmt -` formats stdin; `fmt --check -` exits 1 for sloppy stdin and 0 for canonical."""
    result = run_cli("fmt", "-", stdin=SLOPPY)
    assert (result.returncode, result.stdout, result.stderr) == (0, CANONICAL, "")
    assert run_cli("fmt", "--check", "-", stdin=SLOPPY).returncode == 1
    assert run_cli("fmt", "--check", "-", stdin=CANONICAL).returncode == 0
