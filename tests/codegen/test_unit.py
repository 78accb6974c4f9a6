"""Native units: a fused pointwise group compiles to one guarded entry that computes the
right values, and every guard kind returns its status before touching memory."""

from __future__ import annotations

import numpy as np
import pytest

from irjit.compiler.codegen.entry import describe_status
from irjit.compiler.codegen import unit as unit_module
from irjit.compiler.codegen.unit import NativeUnit

from . import typed_graph

CHAIN = """graph(%x : Tensor, %a : Tensor, %b : Tensor):
  %one : int = prim::Constant[value=1]()
  %m : Tensor = aten::mul(%x, %a)
  %s : Tensor = aten::add(%m, %b, %one)
  %q : Tensor = aten::mul(%x, %x)
  %d : Tensor = aten::sub(%s, %q, %one)
  %r : Tensor = aten::relu(%d)
  return (%r)"""


@pytest.fixture(scope="module", params=[False, True], ids=["plain", "bounds-checked"])
def chain_unit(request):
    graph = typed_graph(CHAIN, "Float(6, 10), Float(6, 10), Float(10)")
    return NativeUnit(graph, "chain", bounds_checks=request.param)


def _inputs():
    rng = np.random.default_rng(0)
    return [rng.standard_normal(s).astype(np.float32) for s in [(6, 10), (6, 10), (10,)]]


def test_fused_chain_matches_numpy(chain_unit):
    x, a, b = _inputs()
    status, (out,) = chain_unit.call([x, a, b])
    assert status == 0
    np.testing.assert_allclose(out, np.maximum(x * a + b - x * x, 0), rtol=1e-6)


def test_one_kernel_stores_only_the_output(chain_unit):
    assert len(chain_unit.kernel.stores) == 1


@pytest.mark.parametrize("kind, change", [
    ("not an ndarray", lambda x: [list(x.ravel())]),
    ("dtype", lambda x: x.astype(np.float64)),
    ("rank", lambda x: x.reshape(60)),
    ("size", lambda x: x[:, :5]),
    ("stride", lambda x: np.asfortranarray(x)),
    ("alignment", lambda x: np.frombuffer(b"\0" + x.tobytes(), np.float32, offset=1).reshape(6, 10)),
])
def test_each_guard_refuses_a_mismatched_array(chain_unit, kind, change):
    x, a, b = _inputs()
    changed = change(x)
    changed = changed[0] if isinstance(changed, list) else changed
    status, _ = chain_unit.call([changed, a, b])
    assert describe_status(status) == f"argument 0: {kind}"


def test_the_first_failing_guard_of_an_array_is_reported(chain_unit):
    """Checks of one array are evaluated together; the status names the first in order: per
    dim its size, then its stride."""
    x, a, b = _inputs()
    status, _ = chain_unit.call([x[:, ::2], a, b])  # dim 1: size 5 (and stride 8 bytes)
    assert describe_status(status) == "argument 0: size"
    status, _ = chain_unit.call([np.asfortranarray(x)[:, :5], a, b])  # dim 0's stride first
    assert describe_status(status) == "argument 0: stride"
    status, _ = chain_unit.call([x, a, np.zeros(10, np.float64)[::2]])  # dtype before rank, size
    assert describe_status(status) == "argument 2: dtype"
    status, _ = chain_unit.call([x, a[:, :5], b[:5]])  # the first refused argument
    assert describe_status(status) == "argument 1: size"


def test_a_read_only_output_array_is_refused(chain_unit):
    x, a, b = _inputs()
    out = np.empty((6, 10), np.float32)
    out.flags.writeable = False
    status, _ = chain_unit.call([x, a, b], {0: out})
    assert describe_status(status) == "argument 3: not writeable"


def test_stride_zero_broadcast_view_is_refused(chain_unit):
    x, a, b = _inputs()
    status, _ = chain_unit.call([x, a, np.broadcast_to(np.float32(1), (10,))])
    assert describe_status(status) == "argument 2: stride"


def test_sizes_of_one_accept_any_stride():
    graph = typed_graph("""graph(%x : Tensor):
  %y : Tensor = aten::neg(%x)
  return (%y)""", "Float(1, 4)")
    unit = NativeUnit(graph, "neg_row")
    x = np.arange(8, dtype=np.float32).reshape(2, 4)[1:]  # row stride 16 bytes, size 1
    status, (out,) = unit.call([x])
    assert status == 0 and out.tolist() == [[-4, -5, -6, -7]]


def test_irjit_dump_writes_llvm_ir_and_assembly(tmp_path, monkeypatch):
    monkeypatch.setenv("IRJIT_DUMP", "llvm,asm")
    monkeypatch.setenv("IRJIT_DUMP_DIR", str(tmp_path))
    monkeypatch.setenv("IRJIT_CACHE", "0")
    graph = typed_graph("""graph(%x : Tensor):
  %y : Tensor = aten::abs(%x)
  return (%y)""", "Double(3)")
    NativeUnit(graph, "dumped_unit")
    assert "define" in (tmp_path / "irjit_dumped_unit.ll").read_text()
    assert "dumped_unit:" in (tmp_path / "irjit_dumped_unit.s").read_text()


def test_the_entry_is_a_builtin_taking_the_arrays_and_checking_their_count(chain_unit):
    """Python calls the entry as a builtin (METH_FASTCALL, no ctypes conversion), with the
    input and output arrays; another number of arguments is a status, not a crash."""
    from irjit.compiler.codegen.entry import STATUS_ARGUMENT_COUNT
    x, a, b = _inputs()
    outs = [np.empty(buf.sizes, buf.dtype) for buf in chain_unit.outputs]
    assert type(chain_unit._fn).__name__ == "builtin_function_or_method"
    assert chain_unit._fn(x, a, b, *outs) == 0
    np.testing.assert_allclose(outs[0], np.maximum(x * a + b - x * x, 0), rtol=1e-6)
    assert chain_unit._fn(x, a, b) == STATUS_ARGUMENT_COUNT
    assert chain_unit._fn(x, a, b, *outs, x) == STATUS_ARGUMENT_COUNT


def test_only_entries_whose_kernels_do_enough_work_release_the_gil():
    small = NativeUnit(typed_graph("""graph(%x : Tensor, %w : Tensor):
  %y : Tensor = aten::mm(%x, %w)
  return (%y)""", "Float(3, 4), Float(4, 4)"), "small_mm")
    large = NativeUnit(typed_graph("""graph(%x : Tensor, %w : Tensor):
  %y : Tensor = aten::mm(%x, %w)
  return (%y)""", "Float(64, 128), Float(128, 128)"), "large_mm")
    for unit, releases in ((small, False), (large, True)):
        ir = unit.library.llvm_ir
        assert ("PyEval_SaveThread" in ir) == releases and "PyLong_FromLong" in ir
        x, w = (np.ones(b.sizes, b.dtype) for b in unit.buffers[:2])
        status, (y,) = unit.call([x, w])
        assert status == 0 and np.allclose(y, x @ w)


@pytest.mark.parametrize("enabled", [True, False])
def test_compiling_a_unit_leaves_the_garbage_collector_as_it_found_it(enabled):
    """The collector is paused while a unit compiles (its module's objects would otherwise be
    promoted to the oldest generation), then back as it was."""
    import gc
    graph = typed_graph("""graph(%x : Tensor):
  %y : Tensor = aten::sin(%x)
  return (%y)""", "Float(8)")
    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        seen = []
        original = unit_module.NativeUnit._compile_now

        def spy(self, *args):
            seen.append(gc.isenabled())
            return original(self, *args)
        unit_module.NativeUnit._compile_now = spy
        try:
            NativeUnit(graph, f"gc_state_{int(enabled)}")
        finally:
            unit_module.NativeUnit._compile_now = original
        assert seen == [False] and gc.isenabled() == enabled
    finally:
        gc.enable() if was else gc.disable()
