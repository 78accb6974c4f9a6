"""The persistent thread pool (thread_pool.py): loops from several Python threads at once all
finish with the right results (the one that finds the pool busy runs alone), as do loops of
different sizes back to back (a pool thread may wake after its loop ended), a forked child
runs threaded loops without its parent's pool threads, and a failing chunk's status comes
back through the pool; pool threads that sleep at once (IRJIT_POOL_SPIN_US=0) miss no loop."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from irjit.compiler.codegen import threads
from irjit.compiler.codegen.unit import NativeUnit

from . import typed_graph

CHAIN = """graph(%x : Tensor, %a : Tensor, %b : Tensor):
  %one : int = prim::Constant[value=1]()
  %m : Tensor = aten::mul(%x, %a)
  %s : Tensor = aten::add(%m, %b, %one)
  %t : Tensor = aten::tanh(%s)
  return (%t)"""


def threaded_unit(n: int, cores: int, monkeypatch, name: str) -> NativeUnit:
    monkeypatch.setattr(threads, "thread_count", lambda: cores)
    monkeypatch.setattr(threads, "WORK_THRESHOLD", 0)
    unit = NativeUnit(typed_graph(CHAIN, f"Float({n}), Float({n}), Float({n})"), name)
    assert threads.planned_threads(unit.kernel)[0] == cores
    return unit


def _inputs(n: int, seed: int):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(n).astype(np.float32) for _ in range(3)]


def test_loops_from_several_python_threads_at_once(monkeypatch):
    n = 50_000
    unit = threaded_unit(n, 3, monkeypatch, "pool_concurrent")
    failures = []

    def work(seed: int):
        x, a, b = _inputs(n, seed)
        want = np.tanh(x * a + b)
        for _ in range(100):
            status, (out,) = unit.call([x, a, b])
            if status or not np.allclose(out, want, rtol=1e-5, atol=1e-6):
                failures.append(seed)
                return

    workers = [threading.Thread(target=work, args=(seed,)) for seed in range(4)]
    for t in workers:
        t.start()
    for t in workers:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in workers) and not failures


def _exited_within(pid: int, seconds: float) -> bool:
    """Whether child `pid` exits with status 0 within `seconds` (killed otherwise)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
        time.sleep(0.01)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return False


def test_a_forked_child_runs_threaded_loops(monkeypatch):
    n = 20_000
    unit = threaded_unit(n, 2, monkeypatch, "pool_fork")
    args = _inputs(n, 1)
    assert unit.call(args)[0] == 0  # the parent's pool threads exist now
    pid = os.fork()
    if pid == 0:
        try:
            status, (out,) = unit.call(args)
            ok = status == 0 and np.allclose(out, np.tanh(args[0] * args[1] + args[2]), rtol=1e-5, atol=1e-6)
        except BaseException:
            ok = False
        os._exit(0 if ok else 1)
    assert _exited_within(pid, 60)


def test_back_to_back_loops_of_different_sizes(monkeypatch):
    """Loops that end before a pool thread wakes (it then joins a later loop, or none): every
    result is the one-thread result, whatever the interleaving."""
    units = {n: threaded_unit(n, 2, monkeypatch, f"pool_back_to_back_{n}") for n in (64, 3000, 40_000)}
    args = {n: _inputs(n, n) for n in units}
    want = {n: np.tanh(x * a + b) for n, (x, a, b) in args.items()}
    for i in range(600):
        n = (64, 3000, 40_000)[i % 3 if i % 7 else 0]
        status, (out,) = units[n].call(args[n])
        assert status == 0 and np.allclose(out, want[n], rtol=1e-5, atol=1e-6), (i, n)


def test_the_pool_allocates_stack_only_in_entry_blocks():
    """A stack slot made inside a loop would grow a pool thread's stack on every job."""
    from irjit.compiler.codegen import thread_pool
    thread_pool.register_symbols()
    ir_text = thread_pool._library.llvm_ir
    for function in ir_text.split("\ndefine ")[1:]:
        blocks = function.split("\n\n")
        assert not any("alloca" in block for block in blocks[1:]), function.split("(")[0]


def _run_with_spin(spin: str) -> subprocess.CompletedProcess:
    code = """
import numpy as np
from irjit.compiler.codegen import threads
from irjit.compiler.codegen.unit import NativeUnit
from tests.codegen import typed_graph
from tests.codegen.test_thread_pool import CHAIN
threads.thread_count = lambda: 2
threads.WORK_THRESHOLD = 0
unit = NativeUnit(typed_graph(CHAIN, "Float(30000), Float(30000), Float(30000)"), "pool_spin")
rng = np.random.default_rng(0)
x, a, b = (rng.standard_normal(30000).astype(np.float32) for _ in range(3))
for i in range(200):
    status, (out,) = unit.call([x, a, b])
    assert status == 0 and np.allclose(out, np.tanh(x * a + b), rtol=1e-5, atol=1e-6), i
print("ok")
"""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, IRJIT_POOL_SPIN_US=spin)
    return subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True,
                          text=True, timeout=120)


def test_threads_that_sleep_at_once_still_run_every_loop():
    """IRJIT_POOL_SPIN_US=0: pool threads sleep as soon as a loop ends, so every loop goes
    through the futex wake (counted sleepers) path."""
    done = _run_with_spin("0")
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_a_malformed_spin_time_is_refused_with_its_name(monkeypatch):
    from irjit.compiler.codegen import thread_pool
    monkeypatch.setenv("IRJIT_POOL_SPIN_US", "lots")
    with pytest.raises(ValueError, match="IRJIT_POOL_SPIN_US.*'lots'"):
        thread_pool.spin_microseconds()
    monkeypatch.setenv("IRJIT_POOL_SPIN_US", "150")
    assert thread_pool.spin_microseconds() == 150
    monkeypatch.delenv("IRJIT_POOL_SPIN_US")
    assert thread_pool.spin_microseconds() == thread_pool.SPIN_US


def test_the_pools_cached_object_follows_its_spin_time(monkeypatch):
    """The pool's disk-cache note names an object made with one spin time: another spin time
    is another note (its IR differs), never the old object."""
    from irjit.compiler.codegen import thread_pool
    monkeypatch.setenv("IRJIT_POOL_SPIN_US", "150")
    short = thread_pool._reference()
    monkeypatch.setenv("IRJIT_POOL_SPIN_US", "2000")
    assert thread_pool._reference() != short


def test_the_pool_compiles_on_its_own_thread_while_the_first_unit_is_made(tmp_path):
    """With an empty disk cache the pool compiles on a thread of its own (`start`) and a unit
    that needs it links once it is made; a process reading the cache links it at once."""
    code = """
import numpy as np
from irjit.compiler.codegen import thread_pool, threads
from irjit.compiler.codegen.unit import NativeUnit
from tests.codegen import typed_graph
from tests.codegen.test_thread_pool import CHAIN
threads.thread_count = lambda: 2
threads.WORK_THRESHOLD = 0
thread_pool.start()
print("compiling" if thread_pool._compiling is not None else "linked", flush=True)
unit = NativeUnit(typed_graph(CHAIN, "Float(30000), Float(30000), Float(30000)"), "pool_start")
assert thread_pool._library is not None
rng = np.random.default_rng(0)
x, a, b = (rng.standard_normal(30000).astype(np.float32) for _ in range(3))
for i in range(50):
    status, (out,) = unit.call([x, a, b])
    assert status == 0 and np.allclose(out, np.tanh(x * a + b), rtol=1e-5, atol=1e-6), i
print("ok")
"""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, IRJIT_CACHE_DIR=str(tmp_path), IRJIT_CACHE="1")
    runs = [subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True,
                           text=True, timeout=120) for _ in range(2)]
    for done in runs:
        assert done.returncode == 0, done.stderr
    assert [done.stdout.split() for done in runs] == [["compiling", "ok"], ["linked", "ok"]]


def test_a_failure_compiling_the_pool_is_raised_where_the_pool_is_waited_for(monkeypatch):
    from irjit.compiler.codegen import library, thread_pool

    def fails(context):
        raise RuntimeError("no pool today")
    for name, value in (("_library", None), ("_compiling", None), ("_compiled", []), ("_compile", fails)):
        monkeypatch.setattr(thread_pool, name, value)
    monkeypatch.setattr(library, "load_remembered", lambda name, reference: None)
    thread_pool.start()
    with pytest.raises(RuntimeError, match="no pool today"):
        thread_pool.register_symbols()


def test_the_pool_compiles_while_another_thread_holds_llvmlites_lock():
    """llvmlite holds one lock around every call into LLVM: the pool compiled on its own
    thread under it made a process's first threaded unit wait for each of its calls. Its
    parse, verification and code generation run in a context of their own without it."""
    import llvmlite.binding as llvm

    from irjit.compiler.codegen import library, thread_pool
    text, context = thread_pool._pool_ir(), llvm.create_context()
    library.target_machine(0)
    made = []
    worker = threading.Thread(target=lambda: made.append(
        library._compile_apart(text, "pool_apart_probe", context)), daemon=True)
    with llvm.ffi.lib._lock:
        worker.start()
        worker.join(timeout=60)
        finished = not worker.is_alive()
    worker.join()
    assert finished and made and made[0][1][:4] == b"\x7fELF"


def test_ir_that_does_not_parse_or_verify_compiled_apart_raises_llvms_message():
    import llvmlite.binding as llvm

    from irjit.compiler.codegen import library
    with pytest.raises(RuntimeError, match="parsing error"):
        library._compile_apart("define i32 @f( {", "apart_bad_parse", llvm.create_context())
    undominated = ("define i32 @f(i1 %c) {\nentry:\n  br i1 %c, label %a, label %b\na:\n"
                   "  %x = add i32 1, 2\n  br label %b\nb:\n  ret i32 %x\n}\n")
    with pytest.raises(RuntimeError, match="verification error(.|\n)*dominate"):
        library._compile_apart(undominated, "apart_bad_verify", llvm.create_context())


def test_the_pool_compiles_as_the_unit_that_needs_it_starts_optimizing(tmp_path):
    """The pool's thread waits until the unit that needs it starts optimizing (a long LLVM call
    without the GIL), so its Python does not make the unit wait for the GIL; a child forked
    before then compiles a pool of its own instead of waiting for the parent's thread."""
    code = """
import os, time
import numpy as np
from irjit.compiler.codegen import library, thread_pool, threads
from irjit.compiler.codegen.unit import NativeUnit
from tests.codegen import typed_graph
from tests.codegen.test_thread_pool import CHAIN
threads.thread_count = lambda: 2
threads.WORK_THRESHOLD = 0
thread_pool.start()
time.sleep(0.3)
print("idle" if not thread_pool._compiled and not thread_pool._go.is_set() else "busy", flush=True)
x, a, b = (np.linspace(-1, 1, 3000, dtype=np.float32) for _ in range(3))
pid = os.fork()
if pid == 0:
    unit = NativeUnit(typed_graph(CHAIN, "Float(3000), Float(3000), Float(3000)"), "pool_fork_child")
    status, (out,) = unit.call([x, a, b])
    os._exit(0 if status == 0 and np.allclose(out, np.tanh(x * a + b), atol=1e-6) else 1)
_, status = os.waitpid(pid, 0)
print("child", os.WEXITSTATUS(status), flush=True)
optimize, seen = library.optimize, []
library.optimize = lambda mod: (seen.append(thread_pool._go.is_set()), optimize(mod))
unit = NativeUnit(typed_graph(CHAIN, "Float(3000), Float(3000), Float(3000)"), "pool_parent")
status, (out,) = unit.call([x, a, b])
assert status == 0 and np.allclose(out, np.tanh(x * a + b), atol=1e-6)
print("optimizing", seen)
"""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, IRJIT_CACHE_DIR=str(tmp_path), IRJIT_CACHE="1")
    done = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:3] == ["idle", "child 0", "optimizing [True]"]
