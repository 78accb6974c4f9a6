"""The README's Python examples run as written, from the repository root, each from a file of
its own (as a user would run it: `irjit.jit.script` reads the source of what it compiles)."""

import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BLOCKS = re.findall(r"^```python\n(.*?)^```", (ROOT / "README.md").read_text(), re.S | re.M)


def test_the_readme_has_python_examples():
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_python_block_runs(code, capsys, tmp_path):
    path = tmp_path / "readme_example.py"
    path.write_text(code)
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        exec(compile(code, str(path), "exec"), {"__name__": "__readme__"})
    finally:
        os.chdir(cwd)
    assert capsys.readouterr().out  # each block prints what it shows
