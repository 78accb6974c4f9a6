"""The disk cache of object code: a second process reuses the first one's object code (no
optimization, no code generation) and computes the same results; entries are per host key."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from irjit.compiler.codegen.disk_cache import DiskCache

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import numpy as np
from irjit.compiler.codegen.unit import NativeUnit
from tests.codegen import typed_graph
g = typed_graph('''graph(%x : Tensor, %y : Tensor):
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::mul(%x, %y)
  %b : Tensor = aten::add(%a, %x, %one)
  return (%b)''', "Float(4, 8), Float(8)")
unit = NativeUnit(g, "disk_cache_probe")
x, y = np.arange(32, dtype=np.float32).reshape(4, 8), np.full(8, 2, np.float32)
status, (out,) = unit.call([x, y])
assert status == 0 and np.array_equal(out, x * y + x)
print(unit.library.from_disk)
"""


def _run(cache_dir: Path) -> str:
    env = dict(os.environ, IRJIT_CACHE_DIR=str(cache_dir), IRJIT_CACHE="1")
    return subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, check=True,
                          capture_output=True, text=True).stdout.strip()


def test_a_second_process_reuses_the_object_code(tmp_path):
    assert _run(tmp_path) == "False"
    files = sorted(p.suffix for p in tmp_path.rglob("*") if p.is_file())
    assert files == [".ll", ".o"]  # one complete entry, no temporary files left
    assert _run(tmp_path) == "True"


def test_entries_are_kept_per_host_key(tmp_path):
    a, b = DiskCache(tmp_path, "znver3|+avx2|0.50.0"), DiskCache(tmp_path, "skylake|+avx2|0.50.0")
    a.store(a.digest("ir"), b"object", "optimized")
    assert a.load(a.digest("ir")) == (b"object", "optimized")
    assert b.load(b.digest("ir")) is None and a.digest("ir") != b.digest("ir")


COMPILED = """
from irjit.compiler.codegen import library
engine = library._engine()
compiled = []  # names of the modules MCJIT generated code for in this process
engine.set_object_cache(
    lambda mod, buf: (compiled.append(mod.name), library._OBJECTS_OUT.__setitem__(mod.name, buf)),
    lambda mod: library._OBJECTS_IN.pop(mod.name, None))
""" + SCRIPT + """
print("disk_cache_probe" in compiled)
"""


def test_the_first_library_of_a_process_uses_its_cached_code(tmp_path):
    """The engine's own (empty) module is compiled at the first finalize; it must not take the
    object code meant for the first library, which MCJIT would then compile unoptimized."""
    env = dict(os.environ, IRJIT_CACHE_DIR=str(tmp_path), IRJIT_CACHE="1")
    run = lambda: subprocess.run([sys.executable, "-c", COMPILED], cwd=ROOT, env=env, check=True,  # noqa: E731
                                 capture_output=True, text=True).stdout.split()
    assert run() == ["False", "True"]  # compiled, not from disk
    assert run() == ["True", "False"]  # from disk, nothing compiled
