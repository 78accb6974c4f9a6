"""The persistent thread pool (thread_pool.py): loops from several Python threads at once all
finish with the right results (the one that finds the pool busy runs alone), as do loops of
different sizes back to back (a pool thread may wake after its loop ended), a forked child
runs threaded loops without its parent's pool threads, and a failing chunk's status comes
back through the pool."""

from __future__ import annotations

import os
import signal
import threading
import time

import numpy as np

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
