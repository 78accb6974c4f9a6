"""Streaming stores (streaming.py): which outputs of which kernels are streamed, and that a
streamed kernel's results are bit-identical to the ordinary loop's whatever the length and
each output's alignment, on one thread or several, with bounds checks or without. The
threshold (the last-level cache's size) is lowered to 0 so that small arrays stream."""

from __future__ import annotations

import numpy as np
import pytest

from irjit.compiler.codegen import streaming, threads
from irjit.compiler.codegen.kernel import Access, Buffer, Kernel, Load, Op, Reduce, Store
from irjit.compiler.codegen.unit import NativeUnit

from . import typed_graph

# the element-wise chain's backward, as its df unit computes it: three inputs, three gradients
CHAIN_BACKWARD = """graph(%x : Tensor, %a : Tensor, %b : Tensor):
  %one : int = prim::Constant[value=1]()
  %xa : Tensor = aten::mul(%x, %a)
  %z : Tensor = aten::add(%xa, %b, %one)
  %t : Tensor = aten::tanh(%z)
  %s : Tensor = aten::sigmoid(%x)
  %t2 : Tensor = aten::mul(%t, %t)
  %dt : Tensor = aten::rsub(%t2, %one, %one)
  %gb : Tensor = aten::mul(%dt, %s)
  %ga : Tensor = aten::mul(%gb, %x)
  %gx : Tensor = aten::mul(%gb, %a)
  return (%gx, %ga, %gb)"""

ROWS = """graph(%x : Tensor, %y : Tensor):
  %p : Tensor = aten::mul(%x, %y)
  %e : Tensor = aten::exp(%x)
  return (%p, %e)"""

F32 = np.dtype(np.float32)


def _units(text, types, monkeypatch, name, cores=1, checks=False):
    """(unit without streaming, unit with it) of the same graph."""
    graph = typed_graph(text, types)
    monkeypatch.setattr(threads, "thread_count", lambda: cores)
    monkeypatch.setattr(threads, "WORK_THRESHOLD", 0 if cores > 1 else 1 << 62)
    monkeypatch.setattr(streaming, "STREAM_BYTES", 1 << 62)
    plain = NativeUnit(graph, f"{name}_plain", bounds_checks=checks)
    monkeypatch.setattr(streaming, "STREAM_BYTES", 0)
    streamed = NativeUnit(graph, f"{name}_streamed", bounds_checks=checks)
    return plain, streamed


def _outputs(shape, dtype, offsets):
    """Output arrays at `offsets` elements past a 64-byte boundary."""
    out = []
    for off in offsets:
        n = int(np.prod(shape))
        raw = np.empty(n + 64, dtype)
        skip = (-raw.ctypes.data % 64) // dtype.itemsize + off
        out.append(raw[skip:skip + n].reshape(shape))
    return out


def test_the_chain_backward_streams_its_three_gradients(monkeypatch):
    plain, streamed = _units(CHAIN_BACKWARD, "Float(4096), Float(4096), Float(4096)", monkeypatch, "stream_ir")
    assert "nontemporal" not in plain.library.llvm_ir
    assert streaming.streamed_buffers(streamed.kernel, "x86_64-unknown-linux-gnu") == (3, 4, 5)
    text = streamed.library.llvm_ir
    assert text.count("!nontemporal") == 3 and "llvm.x86.sse.sfence" in text
    assert "vmovntp" in streamed.library.asm


@pytest.mark.parametrize("n", [31, 32, 33, 100, 4096, 10_007])
@pytest.mark.parametrize("offsets", [(0, 0, 0), (1, 7, 15), (15, 0, 8)])
def test_streamed_results_are_bit_identical(n, offsets, monkeypatch):
    plain, streamed = _units(CHAIN_BACKWARD, f"Float({n}), Float({n}), Float({n})", monkeypatch,
                             f"stream_{n}_{'_'.join(map(str, offsets))}", checks=n % 2 == 1)
    rng = np.random.default_rng(n)
    args = [rng.standard_normal(n).astype(np.float32) * 3 for _ in range(3)]
    status, expected = plain.call(args)
    assert status == 0
    outs = _outputs((n,), F32, offsets)
    guard = [np.full(8, 7.0, np.float32)]
    status, got = streamed.call(args, arrays=dict(enumerate(outs)))
    assert status == 0
    for e, g, o in zip(expected, got, outs):
        assert g is o or g.base is o.base
        assert e.tobytes() == g.tobytes()
    assert guard[0].tolist() == [7.0] * 8


@pytest.mark.parametrize("cores", [2, 3])
def test_streamed_chunks_on_threads_are_bit_identical(cores, monkeypatch):
    n = 100_003
    plain, streamed = _units(CHAIN_BACKWARD, f"Float({n}), Float({n}), Float({n})", monkeypatch,
                             f"stream_threads_{cores}", cores=cores)
    assert threads.planned_threads(streamed.kernel)[0] == cores
    rng = np.random.default_rng(cores)
    args = [rng.standard_normal(n).astype(np.float32) for _ in range(3)]
    expected = plain.call(args)[1]
    got = streamed.call(args, arrays=dict(enumerate(_outputs((n,), F32, (3, 9, 0)))))[1]
    assert all(e.tobytes() == g.tobytes() for e, g in zip(expected, got))


def test_rows_of_a_matrix_stream_each_row(monkeypatch):
    # a transposed operand keeps two loops: the inner one (a row) streams, row by row
    plain, streamed = _units(ROWS, "Double(37, 301), Double(37, 301, strides=[1, 37])", monkeypatch, "stream_rows")
    assert streaming.streamed_buffers(streamed.kernel, "x86_64") == (2, 3)
    rng = np.random.default_rng(5)
    x = rng.standard_normal((37, 301))
    y = np.asfortranarray(rng.standard_normal((37, 301)))
    expected = plain.call([x, y])[1]
    got = streamed.call([x, y], arrays=dict(enumerate(_outputs((37, 301), np.dtype(np.float64), (3, 5)))))[1]
    assert all(e.tobytes() == g.tobytes() for e, g in zip(expected, got))
    np.testing.assert_array_equal(got[0], x * y)


def _kernel(stores, sizes=(1 << 20,), inner=()) -> Kernel:
    buffers = [Buffer(0, F32, sizes, (1,) * len(sizes), False), Buffer(1, F32, sizes, (1,) * len(sizes), True),
               Buffer(2, F32, sizes, (1,) * len(sizes), True)]
    return Kernel("k", sizes, inner, buffers, stores)


def test_what_streams(monkeypatch):
    monkeypatch.setattr(streaming, "STREAM_BYTES", 1 << 20)
    x = Load(Access(0, (1,)), F32)
    two = _kernel([Store(Access(1, (1,)), x), Store(Access(2, (1,)), Op("neg", (x,), F32))])
    assert streaming.streamed_buffers(two, "x86_64-pc-linux") == (1, 2)
    assert streaming.streamed_buffers(two, "aarch64-unknown-linux-gnu") == ()  # (x86's stores only)
    small = _kernel(two.stores, sizes=(1 << 16,))  # 768 KB: the output stays in the cache
    assert streaming.streamed_buffers(small, "x86_64") == ()
    read_back = _kernel([Store(Access(1, (1,)), x), Store(Access(2, (1,)), Load(Access(1, (1,)), F32))])
    assert streaming.streamed_buffers(read_back, "x86_64") == (2,)  # (the output it reads is not)
    strided = _kernel([Store(Access(1, (2,)), x)])
    assert streaming.streamed_buffers(strided, "x86_64") == ()
    reduced = _kernel([Store(Access(1, (1, 0)), Reduce("sum", Load(Access(0, (1, 1)), F32), F32))],
                      sizes=(1 << 10,), inner=(1 << 10,))
    assert streaming.streamed_buffers(reduced, "x86_64") == ()
