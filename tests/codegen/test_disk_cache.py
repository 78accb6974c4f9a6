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

from irjit.compiler.codegen import library
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


def _backing_digest(root: Path) -> str:
    """The digest of the engine's own empty module, which the disk cache keeps too."""
    return DiskCache(root, library.host_key()).digest(f"{library._BACKING}|{library.target_machine().triple}")


def _unit_files(root: Path) -> list[str]:
    """The suffixes of the files of the cache's entries, but for the engine's module."""
    backing = _backing_digest(root)
    return sorted(p.suffix for p in root.rglob("*") if p.is_file() and not p.name.startswith(backing))


def _run(cache_dir: Path) -> str:
    env = dict(os.environ, IRJIT_CACHE_DIR=str(cache_dir), IRJIT_CACHE="1")
    return subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, check=True,
                          capture_output=True, text=True).stdout.strip()


def test_a_second_process_reuses_the_object_code(tmp_path):
    assert _run(tmp_path) == "False"
    assert _unit_files(tmp_path) == [".ll", ".o"]  # one complete entry, no temporary files left
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
engine.set_object_cache(lambda mod, buf: compiled.append(mod.name),
                        lambda mod: library._OBJECTS_IN.pop(mod.name, None))
""" + SCRIPT + """
print("disk_cache_probe" in compiled)
"""


def test_mcjit_only_links_the_object_code_a_library_brings(tmp_path):
    """A library compiles its optimized module to object code itself (or reads it from disk)
    and MCJIT links that code: MCJIT never compiles a library's module (it would compile it
    unoptimized), and its own empty module, compiled at the first link, never takes the object
    code meant for the first library."""
    env = dict(os.environ, IRJIT_CACHE_DIR=str(tmp_path), IRJIT_CACHE="1")
    run = lambda: subprocess.run([sys.executable, "-c", COMPILED], cwd=ROOT, env=env, check=True,  # noqa: E731
                                 capture_output=True, text=True).stdout.split()
    assert run() == ["False", "False"]  # compiled by the library, not from disk
    assert run() == ["True", "False"]  # from disk


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
    assert _unit_files(tmp_path / "cache") == [".json", ".ll", ".o"]
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


PROGRAM_BY_GRAPH = """
import sys
import numpy as np
from irjit.compiler.codegen import cache, scalar_program_unit
from irjit.compiler.codegen.scalar_program_unit import ScalarProgramUnit
from irjit.compiler.parser import parse_ir
if sys.argv[1] == "no-lowering":
    def refuse(*args, **kwargs):
        raise AssertionError("lowered a program the disk cache holds")
    scalar_program_unit.ProgramLowering = refuse
    scalar_program_unit.new_module = refuse
g = parse_ir('''graph(%t : Float(2, 3, strides=[3, 1], device=cpu), %o : Tensor?, %n : int, %x : float):
  %none : NoneType = prim::Constant()
  %true : bool = prim::Constant[value=1]()
  %numel : int = aten::numel(%t)
  %is_none : bool = aten::__is__(%o, %none)
  %out : int[] = prim::ListConstruct()
  %acc : float = prim::Loop(%n, %true, %x)
    block0(%i : int, %a : float):
      %sq : int = aten::mul(%i, %i)
      %l : int[] = aten::append(%out, %sq)
      %b : float = aten::mul(%a, %x)
      -> (%true, %b)
  return (%numel, %is_none, %out, %acc)''')
u, hit = cache.get_unit(g)
assert isinstance(u, ScalarProgramUnit)
t = np.zeros((2, 3), np.float32)
results = [u.call([t, None, 4, 1.5]), u.call([t, t, 2, -2.0]), u.call([t.T, None, 1, 1.0])[0] != 0]
print(u.library.from_disk, results)
"""


def test_a_scalar_program_from_the_disk_cache_is_found_by_its_graph(tmp_path):
    """Scalar programs are keyed by graph as tensor units are: a second process links the
    object code with the kinds, list capacities and process addresses (numpy's ndarray type,
    dtypes, None) of the sidecar, without lowering or emitting the program."""
    env = dict(os.environ, IRJIT_CACHE_DIR=str(tmp_path), IRJIT_CACHE="1")
    run = lambda mode: subprocess.run([sys.executable, "-c", PROGRAM_BY_GRAPH, mode], cwd=ROOT,  # noqa: E731
                                      env=env, check=True, capture_output=True, text=True).stdout.strip()
    fresh = run("compile")
    assert fresh.startswith("False ") and "[0, 1, 4, 9]" in fresh and "True]" in fresh
    assert _unit_files(tmp_path) == [".json", ".ll", ".o"]
    assert run("no-lowering") == "True " + fresh.split(" ", 1)[1]


ENGINE = """
from irjit.compiler.codegen import library
stored = []
cache = library.disk_cache()
store = cache.store
cache.store = lambda digest, *a, **k: (stored.append(digest), store(digest, *a, **k))
library._engine().finalize_object()  # compiles (or loads) the engine's own module
print(len(stored))
"""


def test_the_engine_module_is_compiled_once_per_cache(tmp_path):
    """The engine's empty module (compiled at a process's first link) is stored once; later
    processes link it from disk."""
    env = dict(os.environ, IRJIT_CACHE_DIR=str(tmp_path), IRJIT_CACHE="1")
    run = lambda: subprocess.run([sys.executable, "-c", ENGINE], cwd=ROOT, env=env, check=True,  # noqa: E731
                                 capture_output=True, text=True).stdout.strip()
    assert run() == "1"
    assert any(p.name.startswith(_backing_digest(tmp_path)) and p.suffix == ".o" for p in tmp_path.rglob("*"))
    assert run() == "0"


POOL_SCRIPT = """
import sys
import numpy as np
from irjit.compiler.codegen import cache, thread_pool
from tests.codegen import typed_graph
n = int(sys.argv[1])
g = typed_graph('''graph(%x : Tensor):
  %a : Tensor = aten::tanh(%x)
  %b : Tensor = aten::mul(%a, %x)
  return (%b)''', f"Float({n})")
u, hit = cache.get_unit(g)
x = np.linspace(-3, 3, n, dtype=np.float32)
status, (out,) = u.call([x])
assert status == 0 and np.allclose(out, np.tanh(x) * x, atol=1e-6)
print(u.library.from_disk, thread_pool._library is not None)
"""


@pytest.mark.parametrize("n, threaded", [(64, False), (1 << 22, True)])
def test_a_unit_from_the_disk_cache_builds_the_thread_pool_only_when_it_runs_on_threads(tmp_path, n, threaded):
    """Building the pool costs a process ~30 ms: a process whose cached units run on one
    thread never builds it (the unit's metadata says whether it calls the pool)."""
    from irjit.compiler.codegen import threads
    if threaded and threads.thread_count() < 2:
        pytest.skip("one core: no unit runs on threads")
    env = dict(os.environ, IRJIT_CACHE_DIR=str(tmp_path), IRJIT_CACHE="1")

    def run() -> str:
        return subprocess.run([sys.executable, "-c", POOL_SCRIPT, str(n)], cwd=ROOT, env=env, check=True,
                              capture_output=True, text=True).stdout.strip()
    assert run() == f"False {threaded}"
    assert run() == f"True {threaded}"


POOL_FROM_DISK = """
import sys
import numpy as np
from irjit.compiler.codegen import thread_pool, threads
from irjit.compiler.codegen.lower import lower_group
from irjit.compiler.codegen.unit import NativeUnit
from tests.codegen import typed_graph
mode = sys.argv[1]
emitted = []
emit = thread_pool._PoolEmitter.emit
def counted(self):
    emitted.append(1)
    emit(self)
thread_pool._PoolEmitter.emit = counted
if mode == "edited":  # another source version whose emitter makes other IR
    thread_pool.generator_version = lambda: "edited"
    thread_pool.SPIN_US += 1
elif mode == "renamed":  # another source version, the same IR
    thread_pool.generator_version = lambda: "renamed"
g = typed_graph('''graph(%x : Tensor):
  %a : Tensor = aten::tanh(%x)
  return (%a)''', "Float(4194304)")
assert threads.planned_threads(lower_group(g, "probe").kernel)[0] > 1
unit = NativeUnit(g, "pool_from_disk_probe_" + mode)
x = np.linspace(-3, 3, 1 << 22, dtype=np.float32)
status, (out,) = unit.call([x])
assert status == 0 and np.allclose(out, np.tanh(x), atol=1e-6)
print(len(emitted), thread_pool._library.from_disk)
"""


def test_the_thread_pool_is_linked_from_the_disk_cache_without_emitting_its_ir(tmp_path):
    """A process's first threaded unit used to emit and print the pool's IR (~2.5 ms) to find
    its object code: a note keyed by the generator's source version names the entry (keyed by
    the IR text), so an unchanged source links it directly; another source version emits the
    IR again and reuses the entry when the text is the same, makes a new one when it is not."""
    from irjit.compiler.codegen import threads
    if threads.thread_count() < 2:
        pytest.skip("one core: no unit runs on threads")
    env = dict(os.environ, IRJIT_CACHE_DIR=str(tmp_path), IRJIT_CACHE="1")
    run = lambda mode: subprocess.run([sys.executable, "-c", POOL_FROM_DISK, mode], cwd=ROOT, env=env,  # noqa: E731
                                      check=True, capture_output=True, text=True).stdout.strip()
    assert run("same") == "1 False"  # emitted and compiled
    assert run("same") == "0 True"  # linked from disk, nothing emitted
    assert run("renamed") == "1 True"  # emitted: the same text, the same entry
    assert run("renamed") == "0 True"
    assert run("edited") == "1 False"  # other IR: never the old object
    assert run("edited") == "0 True"
    assert run("same") == "0 True"
    for ref in tmp_path.rglob("*.ref"):  # a note naming no entry: emitted, found by its text, noted again
        ref.write_text("0" * 64)
    assert run("same") == "1 True"
    assert run("same") == "0 True"


UNOPTIMIZED = """
import ctypes, sys
from llvmlite import ir
from irjit.compiler.codegen.library import CodeLibrary, new_module
module = new_module("unoptimized_probe")
fn = ir.Function(module, ir.FunctionType(ir.IntType(64), [ir.IntType(64)]), "triple_it")
b = ir.IRBuilder(fn.append_basic_block())
b.ret(b.mul(fn.args[0], ir.Constant(ir.IntType(64), 3)))
library = CodeLibrary(module, optimized=sys.argv[1] == "optimized")
library.finalize()
assert ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64)(library.address("triple_it"))(14) == 42
print(library.from_disk)
"""


def test_unoptimized_code_is_kept_apart_from_optimized_code_of_the_same_ir(tmp_path):
    """`CodeLibrary(optimized=False)` (the thread pool's) makes other object code from the same
    IR: its disk entry is its own, so neither kind is ever linked for the other."""
    env = dict(os.environ, IRJIT_CACHE_DIR=str(tmp_path), IRJIT_CACHE="1")
    run = lambda kind: subprocess.run([sys.executable, "-c", UNOPTIMIZED, kind], cwd=ROOT, env=env,  # noqa: E731
                                      check=True, capture_output=True, text=True).stdout.strip()
    assert run("unoptimized") == "False"
    assert run("optimized") == "False"  # not the unoptimized entry
    assert run("unoptimized") == "True" and run("optimized") == "True"
    assert _unit_files(tmp_path) == [".ll", ".ll", ".o", ".o"]
