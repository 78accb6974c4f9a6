"""Installing the project puts one package, `irjit`, and the `irtool` script in place: from
another directory `import irjit` works and the generic folder names do not import."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ["pyproject.toml", "README.md", "irjit", "ops", "grammar", "compiler", "runtime", "tools"]


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """`pip install --no-deps --target` of a copy of the sources (so the build writes nothing
    into the checkout); skipped only when pip or its build backend cannot run here."""
    tmp = tmp_path_factory.mktemp("install")
    src = tmp / "src"
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            src.mkdir(exist_ok=True)
            shutil.copy(path, src / name)
    target = tmp / "site"
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--quiet",
                           "--disable-pip-version-check", "--target", str(target), str(src)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        if "No module named pip" in proc.stderr or "setuptools" in proc.stderr:
            pytest.skip(f"pip cannot build the package here: {proc.stderr.strip()[-300:]}")
        pytest.fail(f"pip install failed:\n{proc.stderr}")
    return target


def _python(target: Path, code: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(target))
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True,
                          text=True)


def test_installed_package_imports_from_another_directory(installed, tmp_path):
    proc = _python(installed, "import irjit, numpy as np\n"
                              "print(irjit.__file__)\n"
                              "g = irjit.parse_ir('graph(%x : Tensor):\\n  return (%x)\\n')\n"
                              "print(irjit.load(g)(np.ones(2)).sum())\n", tmp_path)
    assert proc.returncode == 0, proc.stderr
    location, total = proc.stdout.splitlines()
    assert Path(location).is_relative_to(installed)
    assert total == "2.0"


@pytest.mark.parametrize("name", ["tools", "compiler", "runtime", "grammar", "ops"])
def test_no_generic_top_level_names_are_installed(installed, tmp_path, name):
    assert not (installed / name).exists()
    proc = _python(installed, f"import {name}", tmp_path)
    assert proc.returncode == 1 and "ModuleNotFoundError" in proc.stderr


def test_installed_irtool_script_runs(installed, tmp_path):
    script = installed / "bin" / "irtool"
    graph = tmp_path / "g.ir"
    graph.write_text("graph(%x : Tensor):\n  %y : Tensor = aten::relu(%x)\n  return (%y)\n")
    env = dict(os.environ, PYTHONPATH=str(installed))
    proc = subprocess.run([sys.executable, str(script), "fmt", str(graph)], cwd=tmp_path,
                          env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == graph.read_text()
    bad = subprocess.run([sys.executable, str(script), "opt",
                          "--passes=peephole{disabel-shape-peepholes=1}", str(graph)],
                         cwd=tmp_path, env=env, capture_output=True, text=True)
    assert bad.returncode == 1 and bad.stderr.count("\n") == 1
