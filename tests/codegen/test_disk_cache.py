"""The disk cache of object code: a second process reuses the first one's object code (no
optimization, no code generation; for units found by their graph, no lowering either) and
computes the same results; entries are per host key, layout and bounds-check setting."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

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


UNIT_BY_GRAPH = """
import sys
import numpy as np
from irjit.compiler.codegen import cache, unit
from tests.codegen import typed_graph
lowered = []  # the products of a group lowered in this process
if sys.argv[1] == "no-lowering":
    def refuse(*args, **kwargs):
        raise AssertionError("lowered a unit the disk cache holds")
    unit.lower_group = refuse
else:
    lower = unit.lower_group
    def record(*args, **kwargs):
        got = lower(*args, **kwargs)
        lowered.extend(got.products)
        return got
    unit.lower_group = record
g = typed_graph('''graph(%x : Tensor, %w : Tensor, %y : Tensor):
  %a : Tensor = aten::mm(%x, %w)
  %b : Tensor = aten::tanh(%a)
  %c : Tensor = aten::mul(%b, %y)
  return (%c)''', sys.argv[2])
u, hit = cache.get_unit(g)
rng = np.random.default_rng(0)
status, outs = u.call([rng.standard_normal(a.type.sizes).astype(np.float32) for a in g.inputs])
assert status == 0
np.save(sys.argv[3], np.concatenate([o.ravel() for o in outs]))
print(u.library.from_disk, u.kernel is not None or any(p.epilogue is not None for p in lowered))
"""


def _unit_process(tmp_path: Path, mode: str, types: str, out: Path, **env) -> str:
    env = dict(os.environ, IRJIT_CACHE_DIR=str(tmp_path / "cache"), IRJIT_CACHE="1", **env)
    return subprocess.run([sys.executable, "-c", UNIT_BY_GRAPH, mode, types, str(out)], cwd=ROOT,
                          env=env, check=True, capture_output=True, text=True).stdout.strip()


@pytest.mark.parametrize("types", [
    "Float(48, 64), Float(64, 8), Float(8)",  # a narrow product calls BLAS: its symbols are known before linking
    "Float(48, 64), Float(64, 32), Float(32)",  # a tiled one, its loop nest as its epilogue
])
def test_a_unit_from_the_disk_cache_is_found_by_its_graph_and_computes_the_same(tmp_path, types):
    assert _unit_process(tmp_path, "compile", types, tmp_path / "fresh.npy") == "False True"
    assert sorted(p.suffix for p in (tmp_path / "cache").rglob("*") if p.is_file()) == [".json", ".ll", ".o"]
    # found by graph: nothing is lowered (no kernel), and the results are the same
    assert _unit_process(tmp_path, "no-lowering", types, tmp_path / "cached.npy") == "True False"
    np.testing.assert_array_equal(np.load(tmp_path / "fresh.npy"), np.load(tmp_path / "cached.npy"))


def test_the_disk_key_includes_the_layout_and_the_bounds_checks(tmp_path):
    # (without bounds checks even when the suite runs with IRJIT_NATIVE_CHECKS=1)
    _unit_process(tmp_path, "compile", "Float(48, 64), Float(64, 32), Float(32)", tmp_path / "a.npy",
                  IRJIT_NATIVE_CHECKS="0")
    # another layout, and the same one with bounds checks, are new entries (compiled again)
    assert _unit_process(tmp_path, "compile", "Float(40, 64), Float(64, 32), Float(32)", tmp_path / "b.npy",
                         IRJIT_NATIVE_CHECKS="0") == "False True"
    assert _unit_process(tmp_path, "compile", "Float(48, 64), Float(64, 32), Float(32)", tmp_path / "c.npy",
                         IRJIT_NATIVE_CHECKS="1") == "False True"
    np.testing.assert_array_equal(np.load(tmp_path / "a.npy"), np.load(tmp_path / "c.npy"))
