"""`irtool run`: outputs, gradients and files as the fixtures' conventions say, and one-line
errors (exit 1, no traceback, nothing written) for every kind of bad input."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from irjit.tools.irtool import main

ROOT = Path(__file__).resolve().parents[2]
CASE = ROOT / "tests" / "fixtures" / "run" / "conv_relu_script"

ADD_MUL = """graph(%x : Float(2, 3), %y : Float(2, 3)):
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::mul(%x, %y)
  %b : Tensor = aten::add(%a, %x, %one)
  return (%b, %a)
"""


def _write(tmp_path, text, name="g.ir"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_run_with_npz_inputs_writes_outputs_and_gradients(tmp_path, capsys):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = np.full((2, 3), 2.0, dtype=np.float32)
    np.savez(tmp_path / "in.npz", arg0=x, arg1=y)
    out = tmp_path / "out.npz"
    rc = main(["run", str(_write(tmp_path, ADD_MUL)), "--inputs", str(tmp_path / "in.npz"),
               "--grad", "--out", str(out)])
    assert rc == 0
    printed = capsys.readouterr().out
    assert "out0 [0]: float32 [2, 3]" in printed and "grad.arg0: float32 [2, 3]" in printed
    with np.load(out) as f:
        np.testing.assert_allclose(f["out0"], x * y + x)
        np.testing.assert_allclose(f["out1"], x * y)
        # d/dx sum(x*y + x + x*y) = 2y + 1, d/dy = 2x
        np.testing.assert_allclose(f["grad.arg0"], 2 * y + 1)
        np.testing.assert_allclose(f["grad.arg1"], 2 * x)


def test_random_inputs_from_types(tmp_path, capsys):
    assert main(["run", str(_write(tmp_path, ADD_MUL)), "--seed", "3"]) == 0
    assert "out1 [1]: float32 [2, 3]" in capsys.readouterr().out


def _run_cli(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "irjit.tools.irtool", *args], cwd=ROOT, input=stdin,
                          capture_output=True, text=True)


@pytest.mark.parametrize("text,args,message", [
    (ADD_MUL.replace("Float(2, 3)", "Tensor"), [], "gives no complete shape"),
    ("graph(%x : Tensor):\n  %y : Tensor = aten::no_such_op(%x)\n  return (%y)\n",
     ["--inputs", "IN"], "g.ir:2: aten::no_such_op: unknown operator"),
    ("graph(%x : Tensor, %y : Tensor):\n  %z : Tensor = aten::mm(%x, %y)\n  return (%z)\n",
     ["--inputs", "IN"], "g.ir:2: aten::mm:"),
    (ADD_MUL, ["--inputs", "MISSING"], "missing arg1"),
])
def test_bad_input_is_one_line_exit_1_and_nothing_written(tmp_path, text, args, message):
    np.savez(tmp_path / "in.npz", arg0=np.ones((2, 3), np.float32), arg1=np.ones((2, 3), np.float32))
    np.savez(tmp_path / "missing.npz", arg0=np.ones((2, 3), np.float32))
    args = [{"IN": str(tmp_path / "in.npz"), "MISSING": str(tmp_path / "missing.npz")}.get(a, a)
            for a in args]
    out = tmp_path / "out.npz"
    r = _run_cli("run", str(_write(tmp_path, text)), *args, "--out", str(out))
    assert r.returncode == 1
    assert message in r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not out.exists()


def test_missing_param_names_the_attribute(tmp_path):
    r = _run_cli("run", str(CASE / "graph.ir"), "--inputs", str(CASE / "inputs.npz"))
    assert r.returncode == 1
    assert "conv.weight" in r.stderr and "prim::GetAttr" in r.stderr and "Traceback" not in r.stderr


def test_wrong_input_dtype_is_reported(tmp_path):
    np.savez(tmp_path / "in.npz", arg0=np.ones((2, 3), np.int64), arg1=np.ones((2, 3), np.float32))
    r = _run_cli("run", str(_write(tmp_path, ADD_MUL)), "--inputs", str(tmp_path / "in.npz"))
    assert r.returncode == 1 and "input %x expects Float(2, 3)" in r.stderr


def test_unreadable_inputs_file(tmp_path):
    (tmp_path / "bad.npz").write_text("not a zip")
    r = _run_cli("run", str(_write(tmp_path, ADD_MUL)), "--inputs", str(tmp_path / "bad.npz"))
    assert r.returncode == 1 and "bad.npz" in r.stderr and "Traceback" not in r.stderr


def test_unknown_backend_from_the_environment_is_a_one_line_error(tmp_path):
    import os
    graph = _write(tmp_path, ADD_MUL)
    env = dict(os.environ, IRJIT_BACKEND="bogus")
    proc = subprocess.run([sys.executable, "-m", "irjit.tools.irtool", "run", str(graph),
                           "--executor", "legacy"], cwd=ROOT, env=env, capture_output=True,
                          text=True)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.startswith("irtool: error: unknown backend 'bogus' (valid backends: interp")
    assert proc.stderr.count("\n") == 1
