"""bench_units' traffic count, on the element-wise chain as the profiling executor runs it
forward+backward with the broadcast seed `backward()` gives: f's unit reads x, a and b and
writes the output (16 bytes an element), df's reads x, a, b and one element of the seed and
writes three gradients (24 bytes an element, f saving nothing for it); the gradients are the
interpreter's."""

import time

import numpy as np

import irjit
from irjit.compiler.codegen import unit as unit_module
from irjit.ops.tensor import Tensor
from irjit.tools.bench_units import UnitTimes, unit_traffic
from irjit.tools.bench_workloads import load_workload

# a size no other test compiles (its units are made here, not found in a cache), above the
# 65,536 elements from which `backward()` seeds an output with one broadcast element
N = 70_001


def test_the_chains_units_move_what_the_two_passes_must(monkeypatch):
    monkeypatch.setattr(unit_module.NativeUnit, "__init__", unit_module.NativeUnit.__init__)
    recorder = UnitTimes(time.process_time)
    made = []
    init = unit_module.NativeUnit.__init__

    def recording(unit, graph, name="unit", *a, **k):
        init(unit, graph, name, *a, **k)
        made.append(unit)
    monkeypatch.setattr(unit_module.NativeUnit, "__init__", recording)

    path = load_workload("elementwise_chain").ir_path
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(N).astype(np.float32) for _ in range(3)]
    native = irjit.load(path, executor="profiling", backend="native")
    for _ in range(6):  # (profiling calls first, then the specialized plans' units)
        native.run(*[Tensor(a) for a in arrays], requires_grad=[True] * 3)
        grads = native.backward()
    interp = irjit.load(path, executor="profiling", backend="interp")
    interp.run(*[Tensor(a) for a in arrays], requires_grad=[True] * 3)
    for key, want in interp.backward().items():
        np.testing.assert_allclose(grads[key], want, rtol=1e-4, atol=1e-5)  # (fp32 cancellations)

    traffic = sorted(unit_traffic(u) for u in made if u.buffers[0].sizes == (N,))
    element = 4 * N
    assert traffic == [(3 * element, element), (3 * element + 4, 3 * element)]
    assert all(info["calls"] for info in recorder.units.values())
