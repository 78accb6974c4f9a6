"""Bad input to any irtool command ends in one clear error: exit 1, no traceback, never
`internal error`, nothing written. Fixed cases for each kind of mistake, then a seeded fuzz
over mangled graphs, option values and files, through `main` (and a subprocess sample)."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from irjit.tools import sources
from irjit.tools.irtool import main

ROOT = Path(__file__).resolve().parents[2]
GRAPH = """graph(%x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu),
      %c : bool):
  %one : int = prim::Constant[value=1]()
  %r : Tensor = prim::If(%c)
    block0():
      %a : Tensor = aten::relu(%x)
      -> (%a)
    block1():
      %b : Tensor = aten::add(%x, %x, %one)
      -> (%b)
  %n : str = prim::Constant[value="name"]()
  return (%r)
"""
BAD_IF = GRAPH.replace("-> (%a)", "-> (%a, %a)")
BAD_LOOP = """graph(%n : int, %x : Tensor):
  %t : bool = prim::Constant[value=1]()
  %r : Tensor = prim::Loop(%n, %t, %x)
    block0(%i : int):
      -> (%t, %x)
  return (%r)
"""


def nested_ifs(depth: int) -> str:
    """A graph of `depth` prim::If nodes, each inside the first block of the one before."""
    head, tail = [], []
    for d in range(depth):
        pad = "  " + "    " * d
        head += [f"{pad}%r{d} : Tensor = prim::If(%c)", f"{pad}  block0():"]
        tail = [f"{pad}    -> (%r{d + 1})", f"{pad}  block1():", f"{pad}    -> (%x)"] + tail
    pad = "  " + "    " * depth
    body = head + [f"{pad}%r{depth} : Tensor = aten::neg(%x)"] + tail
    return "graph(%c : bool,\n      %x : Tensor):\n" + "\n".join(body) + "\n  return (%r0)\n"


def check_clean_failure(code: int, err: str, out_file: Path | None = None) -> None:
    """Exit 1; stderr is one error line (for a parse error, followed by the offending line and
    a caret under the column); no traceback or internal error; no output file."""
    lines = err.splitlines()
    assert code == 1, err
    assert "Traceback" not in err and "internal error" not in err, err
    assert lines and ": error: " in lines[0] or lines[0].startswith("irtool: error:"), err
    assert len(lines) == 1 or (len(lines) == 3 and lines[2].strip() == "^"), err
    if out_file is not None:
        assert not out_file.exists() and not list(out_file.parent.glob(".irtool-*"))


def run_main(capsys, argv) -> tuple[int, str]:
    code = main(argv)
    return code, capsys.readouterr().err


@pytest.fixture
def files(tmp_path):
    good = tmp_path / "g.ir"
    good.write_text(GRAPH)
    np.save(tmp_path / "one.npy", np.ones((2, 3), np.float32))
    np.savez(tmp_path / "ok.npz", arg0=np.ones((2, 3), np.float32), arg1=np.array(True))
    data = (tmp_path / "ok.npz").read_bytes()
    (tmp_path / "truncated.npz").write_bytes(data[: len(data) // 2])
    (tmp_path / "empty.npz").write_bytes(b"")
    (tmp_path / "text.npz").write_text("not a zip")
    np.savez(tmp_path / "strings.npz", arg0=np.array(["a", "b"]), arg1=np.array(True))
    (tmp_path / "afile").write_text("")
    return tmp_path


def test_fixed_bad_invocations(files, capsys):
    """Each mistake the issue lists: one error line, exit 1, no --out file."""
    g, out = str(files / "g.ir"), files / "out.npz"
    bad_if = files / "bad_if.ir"
    bad_if.write_text(BAD_IF)
    bad_loop = files / "bad_loop.ir"
    bad_loop.write_text(BAD_LOOP)
    cases = [
        ["run", g, "--inputs", str(files / name), "--out", str(out)]
        for name in ("one.npy", "truncated.npz", "empty.npz", "text.npz", "strings.npz",
                     "missing.npz", ".")
    ] + [
        ["run", g, "--params", str(files / "one.npy"), "--out", str(out)],
        ["run", g, "--constants", str(files / "truncated.npz"), "--out", str(out)],
        ["run", g, "--seed", "-1", "--out", str(out)],
        ["run", g, "--runs", "-2", "--out", str(out)],
        ["run", g, "--executor", "profiling", "--profiled-runs", "-1", "--out", str(out)],
        ["run", g, "--autodiff-node-threshold", "-1", "--out", str(out)],
        ["run", g, "--autodiff-inline-threshold", "-5", "--out", str(out)],
        ["run", g, "--out", str(files / "missing" / "o.npz")],
        ["run", g, "--out", str(files / "afile" / "o.npz")],
        ["run", g, "--out", str(files)],
        ["run", str(bad_if), "--out", str(out)],
        ["opt", "--passes=dce", str(bad_if)],
        ["opt", "--passes=cse,peephole", str(bad_loop)],
        ["parse", "--verify", str(bad_if)],
        ["opt", "--passes=dce", "--input-types", "(" * 3000 + "int" + ")" * 3000, g],
        ["opt", "--passes=dce", "--input-types", "int[]" * 3000, g],
        ["opt", "--passes=dce", "--input-types", "(" * 30000 + "int" + ")" * 30000, g],
        ["opt", "--passes=dce", "--input-types", "Float(-1, 3), bool", g],
    ]
    for argv in cases:
        code, err = run_main(capsys, argv)
        check_clean_failure(code, err, out if "--out" in argv else None)


def test_out_into_read_only_folder_is_refused_before_running(files, capsys, monkeypatch):
    """A folder that cannot be written (checked with os.access: root may write anywhere, so
    the check is simulated) fails before the graph runs."""
    monkeypatch.setattr(sources.os, "access", lambda path, mode: False)
    code, err = run_main(capsys, ["run", str(files / "g.ir"), "--out", str(files / "o.npz")])
    check_clean_failure(code, err, files / "o.npz")
    assert "is not writable" in err and "out0" not in capsys.readouterr().out


def test_random_inputs_too_large_to_allocate(files, capsys):
    huge = files / "huge.ir"
    huge.write_text("graph(%x : Float(100000000000, 100000000000)):\n"
                    "  %1 : Tensor = aten::neg(%x)\n  return (%1)\n")
    code, err = run_main(capsys, ["run", str(huge)])
    check_clean_failure(code, err)
    assert "more than can be allocated" in err


def test_parse_reports_every_bad_file(files, capsys):
    """`parse` goes on after a bad file: each bad file gets its error, good ones their ok."""
    bad_if = files / "bad_if.ir"
    bad_if.write_text(BAD_IF)
    broken = files / "broken.ir"
    broken.write_text(GRAPH[:60])
    code = main(["parse", "--verify", str(broken), str(files / "g.ir"), str(files / "nope.ir"),
                 str(bad_if)])
    out, err = capsys.readouterr()
    assert code == 1 and out == f"{files / 'g.ir'}: ok (5 nodes)\n"
    errors = [line for line in err.splitlines() if "error:" in line]
    assert [e.split(":")[0] if not e.startswith("irtool") else e.split()[2].rstrip(":")
            for e in errors] == [str(broken), str(files / "nope.ir"), str(bad_if)]


@pytest.mark.parametrize("depth,argv", [
    (2500, ["parse", "--verify"]), (2500, ["fmt"]),
    (600, ["opt", "--passes=dce,cse,canonicalize,peephole,constant_propagation,"
                  "constant_pooling"])])
def test_deeply_nested_ifs(tmp_path, capsys, depth, argv):
    """Hundreds of nested prim::If: parse, verify, fmt and opt succeed (no RecursionError)."""
    path = tmp_path / "deep.ir"
    text = nested_ifs(depth)
    path.write_text(text)
    code, err = run_main(capsys, [*argv, str(path)])
    assert (code, err) == (0, "")


def mangled(text: str, rng: random.Random) -> str:
    """`text` cut short, or with a few characters deleted, duplicated or replaced."""
    how = rng.randrange(4)
    if how == 0:
        return text[: rng.randrange(len(text))]
    chars = list(text)
    for _ in range(rng.randint(1, 4)):
        i = rng.randrange(len(chars))
        if how == 1:
            del chars[i]
        elif how == 2:
            chars.insert(i, chars[i])
        else:
            chars[i] = rng.choice('%()[]:,=-"#\n 0a?*<>{}.')
    return "".join(chars)


COMMANDS = [["parse"], ["parse", "--verify"], ["fmt"], ["fmt", "--check"],
            ["opt", "--passes=dce,cse,peephole"], ["run", "--seed", "0"],
            ["dot"], ["dot", "--depth", "0", "--passes=dce"], ["view", "--passes=cse"],
            ["export-onnx"]]
# the file each command writes (checked to be absent after a failure)
OUTPUTS = {"run": ("--out", "out.npz"), "view": ("-o", "page.html"),
           "export-onnx": ("-o", "model.onnx")}


def test_fuzzed_graphs_and_flags(tmp_path, capsys):
    """400 mangled graphs through every command (with an output file for those that write
    one): each either works or fails cleanly; option values out of range always fail
    cleanly."""
    rng = random.Random(12)
    out = tmp_path / "out.npz"
    failures = 0
    for i in range(400):
        path = tmp_path / f"m{i}.ir"
        path.write_text(mangled(GRAPH, rng))
        argv = [*rng.choice(COMMANDS), str(path)]
        target = None
        if argv[0] in OUTPUTS:
            flag, name = OUTPUTS[argv[0]]
            target = tmp_path / name
            argv += [flag, str(target)]
        code = main(argv)
        captured = capsys.readouterr()
        if code == 0:
            if target is not None:
                target.unlink()
            continue
        failures += 1
        if argv[:2] == ["fmt", "--check"] and captured.err.endswith("not in canonical form\n"):
            continue
        check_clean_failure(code, captured.err, target)
    assert failures > 100  # the mangling does break most graphs
    g = tmp_path / "g.ir"
    g.write_text(GRAPH)
    for _ in range(40):
        flag = rng.choice(["--seed", "--runs", "--profiled-runs", "--autodiff-node-threshold",
                           "--autodiff-inline-threshold"])
        argv = ["run", str(g), flag, str(-rng.randint(1, 10**6)), "--out", str(out)]
        code, err = run_main(capsys, argv)
        check_clean_failure(code, err, out)
    for _ in range(10):
        depth = str(-rng.randint(1, 10**6))
        for argv in (["dot", str(g), "--depth", depth, "-o", str(tmp_path / "g.svg")],
                     ["view", str(g), "--depth", depth, "-o", str(tmp_path / "g.html")]):
            code, err = run_main(capsys, argv)
            check_clean_failure(code, err, Path(argv[-1]))


def test_bad_picture_and_export_invocations(files, capsys):
    """dot, view and export-onnx: unknown formats, bad depths, unwritable outputs, bad pipelines
    and files each give one error line and write nothing."""
    g = str(files / "g.ir")
    bad_if = files / "bad_if.ir"
    bad_if.write_text(BAD_IF)
    svg, html, onnx = files / "g.svg", files / "g.html", files / "g.onnx"
    cases = [
        (["dot", g, "-o", str(files / "g.jpg")], files / "g.jpg"),
        (["dot", g, "-o", str(files / "g")], files / "g"),
        (["dot", g, "--depth", "-1", "-o", str(svg)], svg),
        (["dot", g, "--timeout", "0", "-o", str(svg)], svg),
        (["dot", g, "--timeout", "nan", "-o", str(svg)], svg),
        (["view", g, "--timeout", "inf", "-o", str(html)], html),
        (["dot", g, "-o", str(files / "missing" / "g.svg")], None),
        (["dot", g, "-o", str(files / "afile" / "g.svg")], None),
        (["dot", g, "-o", str(files)], None),
        (["dot", g, "--passes=nosuchpass", "-o", str(svg)], svg),
        (["dot", g, "--passes=peephole{bad-option=1}", "-o", str(svg)], svg),
        (["dot", g, "--input-types", "Float(2, 3)", "-o", str(svg)], svg),
        (["dot", str(bad_if), "-o", str(svg)], svg),
        (["dot", str(files / "nope.ir"), "-o", str(svg)], svg),
        (["view", g, "-o", str(files / "g.svg")], files / "g.svg"),
        (["view", g, "--depth", "-3", "-o", str(html)], html),
        (["view", g, "--passes=dce{x=1}", "-o", str(html)], html),
        (["view", str(bad_if), "-o", str(html)], html),
        (["view", g, "-o", str(files / "missing" / "g.html")], None),
        (["export-onnx", g, "-o", str(files / "g.txt")], files / "g.txt"),
        (["export-onnx", g, "--params", str(files / "one.npy"), "-o", str(onnx)], onnx),
        (["export-onnx", g, "--inputs", str(files / "truncated.npz"), "-o", str(onnx)], onnx),
        (["export-onnx", str(bad_if), "-o", str(onnx)], onnx),
        (["export-onnx", g, "-o", str(files / "missing" / "g.onnx")], None),
    ]
    for argv, written in cases:
        code, err = run_main(capsys, argv)
        check_clean_failure(code, err, written)


def test_subprocess_sample_of_bad_input(tmp_path):
    """A real process: bad files and flags give exit 1 and one error line, no traceback."""
    g = tmp_path / "g.ir"
    g.write_text(GRAPH)
    deep = tmp_path / "deep.ir"
    deep.write_text(nested_ifs(700))
    bad_if = tmp_path / "bad_if.ir"
    bad_if.write_text(BAD_IF)
    for argv in (["run", str(g), "--seed", "-1"], ["run", str(g), "--inputs", str(g)],
                 ["opt", "--passes=dce", str(bad_if)],
                 ["run", str(g), "--out", str(tmp_path / "no" / "o.npz")]):
        result = subprocess.run([sys.executable, "-m", "irjit.tools.irtool", *argv], cwd=ROOT,
                                capture_output=True, text=True, timeout=120)
        check_clean_failure(result.returncode, result.stderr)
    result = subprocess.run([sys.executable, "-m", "irjit.tools.irtool", "opt", "--passes=dce",
                             str(deep)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and result.stderr == ""
