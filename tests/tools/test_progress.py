"""Progress bars: drawn (tqdm, on stderr) for parsing, pass pipelines, native units and
Graphviz layouts when stderr is a terminal; nothing at all when it is not."""

from __future__ import annotations

import fcntl
import io
import os
import pty
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from irjit.compiler import progress as layer_progress
from irjit.tools import progress
from irjit.tools.irtool import main

ROOT = Path(__file__).resolve().parents[2]


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def chain(nodes: int) -> str:
    """A graph of `nodes` relu nodes in a chain (about 60 bytes per node)."""
    lines = ["graph(%x0 : Float(2, 3)):"]
    lines += [f"  %x{i + 1} : Tensor = aten::relu(%x{i})" for i in range(nodes)]
    return "\n".join(lines + [f"  return (%x{nodes})", ""])


@pytest.fixture
def no_delay(monkeypatch):
    monkeypatch.setattr(progress, "DELAY", 0)


def test_nothing_is_drawn_when_stderr_is_not_a_terminal(tmp_path, capsys):
    path = tmp_path / "big.ir"
    path.write_text(chain(3000))
    assert main(["opt", "--passes=dce,cse", str(path)]) == 0
    assert capsys.readouterr().err == ""
    assert not layer_progress.listening()


def test_parsing_and_passes_draw_bars_on_a_terminal(tmp_path, no_delay):
    import irjit
    text = chain(3000)
    screen = FakeTerminal()
    with progress.showing_progress(screen):
        assert layer_progress.listening()
        g = irjit.parse_ir(text, "big.ir")
        irjit.passes.run(g, "dce,cse,canonicalize")
        for _ in range(3):
            layer_progress.tick("native units", "unit", "unit_x")
    assert not layer_progress.listening()  # the previous listener (none) is back
    out = screen.getvalue()
    # (bars are cleared when their work ends, so their last state need not be drawn)
    assert "parsing big.ir:" in out and "/112k" in out
    assert "running passes:" in out and "/3 " in out
    assert "native units:" in out and "unit/s" in out


def test_parse_many_files_counts_files(tmp_path, no_delay, monkeypatch):
    files = []
    for i in range(3):
        files.append(tmp_path / f"g{i}.ir")
        files[-1].write_text(chain(5))
    screen = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", screen)
    assert main(["parse", "-q", *map(str, files)]) == 0
    assert "files:" in screen.getvalue() and "/3 " in screen.getvalue()


def test_a_real_terminal_shows_the_parse_bar(tmp_path):
    """`irtool parse` of a big file in a pseudo-terminal: the bar appears after DELAY seconds
    and is cleared when the parse ends (leave=False)."""
    path = tmp_path / "big.ir"
    path.write_text(chain(30000))  # about 1.5 s of parsing, past the bar's DELAY
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    try:
        done = subprocess.run([sys.executable, "-m", "irjit.tools.irtool", "parse", str(path)],
                              cwd=ROOT, stdout=subprocess.PIPE, stderr=follower, timeout=120)
        os.close(follower)
        follower = None
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        if follower is not None:
            os.close(follower)
        os.close(leader)
    screen = b"".join(chunks).decode("utf-8", "replace")
    assert done.returncode == 0 and done.stdout.decode().endswith("ok (30000 nodes)\n")
    assert f"parsing {path}" in screen and "%" in screen


def test_compiling_native_units_counts_them(no_delay, monkeypatch, capsys):
    """`opt --emit=llvm` compiles the graph's native units: each is counted on a terminal."""
    screen = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", screen)
    graph = ROOT / "tests" / "fixtures" / "bench" / "tiny_linear_tanh.ir"
    assert main(["opt", str(graph), "--input-types", "Float(3, 4), Float(3, 4), Float(4, 4), Float(4)",
                 "--passes=propagate_input_shapes,native_partition", "--emit=llvm"]) == 0
    assert "define" in capsys.readouterr().out
    assert "native units:" in screen.getvalue() and "unit_" in screen.getvalue()
