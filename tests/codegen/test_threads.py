"""Native threads: kernels split across threads give bit-identical results to one thread
(pointwise and reductions, sizes around the split, uneven ranges, bounds checks on), small
kernels stay single-threaded, unsafe kernels are never split, a failing range's status comes
back, and the pool's threads are created once, not per call."""

from __future__ import annotations

import os

import numpy as np
import pytest

from irjit.compiler.codegen import threads
from irjit.compiler.codegen.kernel import Access, Buffer, Const, Kernel, Load, Op, Store
from irjit.compiler.codegen.unit import NativeUnit

from . import typed_graph

CHAIN = """graph(%x : Tensor, %a : Tensor, %b : Tensor):
  %one : int = prim::Constant[value=1]()
  %m : Tensor = aten::mul(%x, %a)
  %s : Tensor = aten::add(%m, %b, %one)
  %t : Tensor = aten::tanh(%s)
  %g : Tensor = aten::sigmoid(%x)
  %p : Tensor = aten::mul(%t, %g)
  return (%p)"""

ROW_SUM = """graph(%x : Tensor):
  %dims : int[] = prim::Constant[value=[1]]()
  %false : bool = prim::Constant[value=0]()
  %none : NoneType = prim::Constant()
  %e : Tensor = aten::exp(%x)
  %s : Tensor = aten::sum(%e, %dims, %false, %none)
  return (%s)"""

SELECT_ROW = """graph(%x : Tensor, %i : int):
  %zero : int = prim::Constant[value=0]()
  %r : Float(4096, strides=[1], requires_grad=0, device=cpu) = aten::select(%x, %zero, %i)
  %y : Float(4096, strides=[1], requires_grad=0, device=cpu) = aten::neg(%r)
  return (%y)"""


def units(text: str, types: str, cores: int, monkeypatch, checks: bool = False):
    """(single-threaded unit, unit split over `cores` threads) of the same graph."""
    graph = typed_graph(text, types)
    monkeypatch.setattr(threads, "thread_count", lambda: cores)
    monkeypatch.setattr(threads, "WORK_THRESHOLD", 1 << 62)
    single = NativeUnit(graph, f"threads_single_{cores}_{int(checks)}", bounds_checks=checks)
    monkeypatch.setattr(threads, "WORK_THRESHOLD", 0)
    multi = NativeUnit(graph, f"threads_multi_{cores}_{int(checks)}", bounds_checks=checks)
    assert threads.planned_threads(multi.kernel)[0] == cores
    return single, multi


def live_threads() -> int:
    return len(os.listdir("/proc/self/task"))


@pytest.mark.parametrize("n", [2, 3, 63, 64, 65, 1023, 4097, 100_003])
@pytest.mark.parametrize("cores", [2, 3, 4])
def test_pointwise_is_bit_identical(n, cores, monkeypatch):
    if n < cores:
        pytest.skip("fewer elements than threads: not split")
    types = f"Float({n}), Float({n}), Float({n})"
    single, multi = units(CHAIN, types, cores, monkeypatch, checks=n % 2 == 1)
    rng = np.random.default_rng(n)
    args = [rng.standard_normal(n).astype(np.float32) * 4 for _ in range(3)]
    (s1, (o1,)), (s2, (o2,)) = single.call(args), multi.call(args)
    assert s1 == s2 == 0
    assert o1.tobytes() == o2.tobytes()


@pytest.mark.parametrize("rows, cols", [(2, 5000), (7, 999), (130, 257)])
@pytest.mark.parametrize("checks", [False, True])
def test_reductions_are_bit_identical(rows, cols, checks, monkeypatch):
    single, multi = units(ROW_SUM, f"Float({rows}, {cols})", 2, monkeypatch, checks)
    x = np.random.default_rng(rows).standard_normal((rows, cols)).astype(np.float32)
    (s1, (o1,)), (s2, (o2,)) = single.call([x]), multi.call([x])
    assert s1 == s2 == 0
    assert o1.tobytes() == o2.tobytes()
    np.testing.assert_allclose(o2, np.exp(x).sum(1), rtol=1e-4)


def test_a_failing_range_returns_its_status(monkeypatch):
    single, multi = units(SELECT_ROW, "Float(3, 4096), int", 2, monkeypatch)
    x = np.arange(3 * 4096, dtype=np.float32).reshape(3, 4096)
    status, (out,) = multi.call([x, 2])
    assert status == 0 and np.array_equal(out, -x[2])
    assert multi.call([x, 3])[0] == single.call([x, 3])[0] != 0


def test_threads_are_created_once_not_per_call(monkeypatch):
    _, multi = units(CHAIN, "Float(4096), Float(4096), Float(4096)", 4, monkeypatch)
    args = [np.ones(4096, np.float32)] * 3
    multi.call(args)  # the pool's threads start on first use
    before = live_threads()
    for _ in range(200):
        multi.call(args)
    assert live_threads() == before


def test_small_kernels_stay_single_threaded(monkeypatch):
    monkeypatch.setattr(threads, "thread_count", lambda: 8)
    small = NativeUnit(typed_graph(CHAIN, "Float(1000), Float(1000), Float(1000)"), "threads_small")
    assert threads.planned_threads(small.kernel) == (1, None)
    n = 1 << 20
    big = typed_graph(CHAIN, f"Float({n}), Float({n}), Float({n})")
    assert threads.planned_threads(NativeUnit(big, "threads_big").kernel) == (8, 0)


def test_one_core_means_one_thread(monkeypatch):
    monkeypatch.setattr(threads, "thread_count", lambda: 1)
    monkeypatch.setattr(threads, "WORK_THRESHOLD", 0)
    unit = NativeUnit(typed_graph(CHAIN, "Float(100), Float(100), Float(100)"), "threads_one_core")
    assert threads.planned_threads(unit.kernel) == (1, None)


def _kernel(store_strides, loads_output=False) -> Kernel:
    f32 = np.dtype(np.float32)
    bufs = [Buffer(0, f32, (64, 64), (64, 1), False), Buffer(1, f32, (64, 64), (64, 1), True)]
    value = Op("neg", (Load(Access(1 if loads_output else 0, (64, 1)), f32),), f32)
    return Kernel("k", (64, 64), (), bufs, [Store(Access(1, store_strides), value)])


def test_split_axis_needs_disjoint_writes():
    assert threads.split_axis(_kernel((64, 1)), 2) == 0
    assert threads.split_axis(_kernel((0, 1)), 2) == 1  # axis 0 writes the same row: split axis 1
    assert threads.split_axis(_kernel((0, 0)), 2) is None
    assert threads.split_axis(_kernel((64, 1), loads_output=True), 2) is None
    f32 = np.dtype(np.float32)
    short = Kernel("k", (1, 64), (), [Buffer(0, f32, (1, 64), (64, 1), True)],
                   [Store(Access(0, (64, 1)), Const(1.0, f32))])
    assert threads.split_axis(short, 2) == 1


@pytest.mark.parametrize("size, cores", [(2, 2), (5, 3), (64, 2), (100_003, 4), (1 << 20, 3)])
def test_chunks_cover_the_axis_a_few_per_thread(size, cores):
    chunk = threads.chunk_size(size, cores)
    assert 1 <= chunk <= size and -(-size // chunk) <= cores * threads.CHUNKS_PER_THREAD
    if size >= threads.BOUNDARY_ALIGNMENT * cores * threads.CHUNKS_PER_THREAD:
        assert chunk % threads.BOUNDARY_ALIGNMENT == 0
