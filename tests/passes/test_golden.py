"""Golden tests: each `golden/**/*.ir` starts with `# RUN: <pipeline>` (and optionally
`# INPUT-TYPES: ...`); its other non-`#` lines are the input graph. The passes run with
verify=True and the printed result is checked against the file's `# CHECK` lines by the
`filecheck` package (a port of LLVM FileCheck)."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest
from filecheck.matcher import Matcher
from filecheck.options import Options

from irjit import parse_ir
from irjit.compiler.passes.manager import PassManager
from irjit.compiler.passes.specialize_input_types import parse_input_types, specialize_input_types

GOLDEN = Path(__file__).resolve().parent / "golden"
FILES = sorted(GOLDEN.rglob("*.ir"))


def load(path: Path):
    """(pipeline, input types or None, graph text) of a golden file."""
    pipeline = types = None
    graph_lines = []
    for line in path.read_text().splitlines(keepends=True):
        s = line.strip()
        if s.startswith("# RUN:"):
            pipeline = s[len("# RUN:"):].strip()
        elif s.startswith("# INPUT-TYPES:"):
            types = s[len("# INPUT-TYPES:"):].strip()
        elif not s.startswith("#"):
            graph_lines.append(line)
    assert pipeline, f"{path}: no '# RUN: <pipeline>' line"
    return pipeline, types, "".join(graph_lines)


def run_golden(path: Path) -> str:
    pipeline, types, text = load(path)
    graph = parse_ir(text, str(path))
    if types is not None:
        specialize_input_types(graph, parse_input_types(types))
    PassManager(pipeline, verify=True).run(graph)
    graph.lint()
    return str(graph)


def filecheck(check_file: Path, output: str, tmp_path: Path) -> tuple[int, str]:
    """Run FileCheck's matcher on `output` with the checks of `check_file`."""
    out_file = tmp_path / "output.ir"
    out_file.write_text(output)
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        matcher = Matcher.from_opts(Options(match_filename=str(check_file),
                                            input_file=str(out_file)))
        rc = matcher.run()
    return rc, err.getvalue()


def test_golden_files_exist():
    assert len(FILES) >= 10


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(GOLDEN)) for p in FILES])
def test_golden(path: Path, tmp_path: Path):
    assert "CHECK" in path.read_text(), f"{path} has no CHECK lines"
    output = run_golden(path)
    rc, message = filecheck(path, output, tmp_path)
    assert rc == 0, f"FileCheck failed for {path.name}:\n{message}\n--- output:\n{output}"


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(GOLDEN)) for p in FILES])
def test_golden_keeps_lint(path: Path):
    pipeline, types, text = load(path)
    graph = parse_ir(text, str(path))
    if types is not None:
        specialize_input_types(graph, parse_input_types(types))
    for name, options in PassManager(pipeline).passes:
        PassManager([(name, options)]).run(graph)
        graph.lint()
        assert parse_ir(str(graph)) is not None  # still prints as parseable IR


def test_filecheck_detects_mismatch(tmp_path: Path):
    check = tmp_path / "check.ir"
    check.write_text("# CHECK: aten::relu\n# CHECK-NOT: aten::sigmoid\n")
    rc, _ = filecheck(check, "graph(%x : Tensor):\n  %1 : Tensor = aten::sigmoid(%x)\n"
                      "  return (%1)\n", tmp_path)
    assert rc != 0
