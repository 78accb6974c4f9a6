"""Golden tests of the emitted code: each `golden/*.ir` gives `# EMIT: llvm|asm`,
`# INPUT-TYPES: ...` and a graph; `irtool opt --emit` output is checked against its
`# CHECK` lines by the `filecheck` package."""

from __future__ import annotations

from pathlib import Path

import pytest

from irjit.tools.irtool import main
from tests.passes.test_golden import filecheck

GOLDEN = Path(__file__).resolve().parent / "golden"


def _header(path: Path, key: str) -> str:
    for line in path.read_text().splitlines():
        if line.startswith(f"# {key}:"):
            return line.split(":", 1)[1].strip()
    raise AssertionError(f"{path}: no '# {key}:' line")


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*.ir")), ids=lambda p: p.stem)
def test_golden(path, tmp_path, capsys):
    graph = tmp_path / "graph.ir"
    graph.write_text("".join(line for line in path.read_text().splitlines(keepends=True)
                             if not line.startswith("#")))
    assert main(["opt", f"--emit={_header(path, 'EMIT')}", "--input-types",
                 _header(path, "INPUT-TYPES"), str(graph)]) == 0
    rc, err = filecheck(path, capsys.readouterr().out, tmp_path)
    assert rc == 0, err
