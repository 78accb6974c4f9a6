"""The benchmark's pure helpers: workload loading, bounds, ratio formatting, and the
hand-written numpy contenders, whose outputs and gradients must be irjit's interpreter's."""

import numpy as np
import pytest

import irjit
from irjit.tools.bench_native import bound_us, format_ratio
from irjit.tools.bench_workloads import NAMES, NUMPY_FORWARD, NUMPY_FORWARD_BACKWARD, load_workload


def test_format_ratio():
    assert format_ratio(3.0, 2.0) == "1.50x"
    assert format_ratio(None, 2.0) == "-"
    assert format_ratio(1.0, 0.0) == "-"


def test_unknown_workload_names_the_known_ones():
    with pytest.raises(ValueError, match="elementwise_chain"):
        load_workload("resnet")


def test_bound_is_the_larger_of_memory_and_flops():
    chain, mlp = load_workload("elementwise_chain"), load_workload("mlp")
    assert bound_us(chain, False, bandwidth=10.0, gflops=100.0) == (64e6 / 10e3, "memory")
    assert bound_us(mlp, True, bandwidth=10.0, gflops=100.0) == (276957696 / 100e3, "flops")


def test_inputs_follow_the_metadata_and_the_seed():
    w = load_workload("lstm_cell")
    a, b = w.inputs(), w.inputs()
    assert [x.shape for x in a] == [tuple(i["shape"]) for i in w.meta["inputs"]]
    assert all(x.dtype == np.float32 and np.array_equal(x, y) for x, y in zip(a, b))


@pytest.mark.parametrize("name", NAMES)
def test_numpy_contenders_match_the_interpreter(name):
    w = load_workload(name)
    args = w.inputs()
    fn = irjit.load(w.ir_path, backend="interp")
    outs = [t.data for o in fn.run(*args, requires_grad=list(w.requires_grad))
            for t in (o if isinstance(o, tuple) else (o,))]
    grads = fn.backward()
    got_outs, got_grads = NUMPY_FORWARD_BACKWARD[name](*args, needs=w.requires_grad)
    forward = NUMPY_FORWARD[name](*args)
    forward = list(forward) if isinstance(forward, tuple) else [forward] * len(outs)
    for want, fwd, full in zip(outs, forward, got_outs):
        np.testing.assert_allclose(fwd, want, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(full, want, rtol=1e-5, atol=1e-5)
    assert sorted(grads) == [f"arg{i}" for i, g in enumerate(got_grads) if g is not None]
    for i, g in enumerate(got_grads):
        if g is None:  # (an input the workload does not differentiate: mlp's x)
            continue
        want = grads[f"arg{i}"]
        # float32 sums of terms as large as the gradient's largest entry: an element that
        # cancels to a small value keeps the terms' absolute error (rnn_loop's gradients
        # reach 1e5 where single entries are ~10), so the tolerance scales with the largest
        np.testing.assert_allclose(g, want, rtol=1e-4, atol=1e-4 + 1e-6 * float(np.abs(want).max()))


def test_mlp_input_needs_no_gradient():
    """mlp.json says x does not require grad: no contender is asked for dx."""
    assert load_workload("mlp").requires_grad == (False, True, True, True, True)
    w = load_workload("mlp")
    _, grads = NUMPY_FORWARD_BACKWARD["mlp"](*w.inputs(), needs=w.requires_grad)
    assert grads[0] is None and all(g is not None for g in grads[1:])


def test_rounds_report_each_contenders_fastest_round_and_its_spread(monkeypatch):
    """Every contender is timed once a round, in turn; its row holds its fastest round's
    medians, the largest faults and others, and the slowest over the fastest fwd+bwd."""
    from irjit.tools import bench_native
    order = []
    medians = iter([10.0, 40.0, 7.0, 30.0, 1.0, 1.0,   # round 1: a fwd, a fwd+bwd, b..., numpy
                    12.0, 20.0, 9.0, 60.0, 1.0, 1.0,   # round 2
                    11.0, 25.0, 8.0, 45.0, 1.0, 1.0])  # round 3
    monkeypatch.setattr(bench_native, "irjit_contenders", lambda w, args: {
        "a": (lambda: order.append("a"), None), "b": (lambda: order.append("b"), None)})
    monkeypatch.setattr(bench_native, "torch_contenders", lambda w, args: ({}, {}))
    monkeypatch.setattr(bench_native, "settle", lambda: None)
    monkeypatch.setattr(bench_native, "timed", lambda fn, calls, warmup=None: (
        fn() if fn else None, (next(medians), 0.5))[1])
    monkeypatch.setattr(bench_native, "NUMPY_FORWARD", {"tiny_linear_tanh": lambda *a: order.append("n")})
    monkeypatch.setattr(bench_native, "NUMPY_FORWARD_BACKWARD", {"tiny_linear_tanh": lambda *a, needs: None})
    rows, missing = bench_native.time_workload("tiny_linear_tanh", 30, rounds=3)
    assert missing == {} and order == ["a", "b", "n"] * 3
    assert rows["a"]["fwd"] == 10.0 and rows["a"]["fwd+bwd"] == 20.0 and rows["a"]["spread"] == 2.0
    assert rows["b"]["fwd"] == 7.0 and rows["b"]["fwd+bwd"] == 30.0 and rows["b"]["spread"] == 2.0


def test_fresh_process_reports_keep_bytecode_as_an_installed_package_does(monkeypatch):
    """The fresh processes timed for compile time get a bytecode directory of their own
    (PYTHONPYCACHEPREFIX) and may write it, whatever PYTHONDONTWRITEBYTECODE says here."""
    import subprocess
    from irjit.tools import bench_native
    seen = {}

    def run(cmd, env, **kw):
        seen.update(env=env, cmd=cmd)
        return subprocess.CompletedProcess(cmd, 0, stdout='{"units": []}\n', stderr="")
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.setattr(bench_native.subprocess, "run", run)
    assert bench_native.fresh_process_report("mlp", "cache-dir", 0, "bytecode-dir") == {"units": []}
    assert seen["env"]["PYTHONPYCACHEPREFIX"] == "bytecode-dir"
    assert "PYTHONDONTWRITEBYTECODE" not in seen["env"] and seen["env"]["IRJIT_CACHE_DIR"] == "cache-dir"


def test_machine_bounds_are_the_best_of_their_rounds(monkeypatch):
    """A slow spell of the host while the bounds are measured must not make them lenient:
    the fastest of the rounds' bandwidths and sgemm rates is taken."""
    from irjit.tools import bench_native
    measured = iter([(20.0, 190.0), (25.0, 100.0), (22.0, 180.0)])
    monkeypatch.setattr(bench_native, "settle", lambda: None)
    monkeypatch.setattr(bench_native, "_machine_bounds_once", lambda repeat: next(measured))
    assert bench_native.machine_bounds(10, rounds=3) == (25.0, 190.0)


def test_the_call_loop_times_numpy_beside_irjit_as_a_control(monkeypatch):
    """The RSS/slowdown loop times numpy's forward+backward every CONTROL_EVERY calls in the
    same process: its first and last tenth's medians come with irjit's, so a machine turning
    slower for a while is told apart from a slowdown of irjit's."""
    from irjit.compiler.codegen import cache
    from irjit.tools import bench_native
    monkeypatch.setattr(cache, "tensor_unit", cache.tensor_unit)  # (the report wraps it)
    monkeypatch.setattr(bench_native, "FIRST_CALLS", 1)
    calls = []
    real = bench_native.NUMPY_FORWARD_BACKWARD["tiny_linear_tanh"]
    monkeypatch.setitem(bench_native.NUMPY_FORWARD_BACKWARD, "tiny_linear_tanh",
                        lambda *a, **k: calls.append(1) or real(*a, **k))
    report = bench_native.process_report("tiny_linear_tanh", 40)
    assert report["calls"] == 40 and len(calls) == 40 // bench_native.CONTROL_EVERY
    assert report["numpy_first_us"] > 0 and report["numpy_last_us"] > 0
    assert report["first_us"] > 0 and report["last_us"] > 0


def test_compile_times_are_medians_over_fresh_processes(monkeypatch, capsys):
    """Compile times come from PROCESS_RUNS fresh processes each, cold (each with an empty
    cache of its own) and cached (after one that fills the cache): per process its slowest
    unit, and each column the median over the processes with their range, so that one
    process caught in a slow spell of the host does not make the row; the loop runs in the
    first cached process only."""
    from irjit.tools import bench_native
    monkeypatch.setattr(bench_native, "PROCESS_RUNS", 3)
    cold = iter([90.0, 60.0, 70.0])
    cached = iter([2.0, 7.0, 3.0])
    loops, caches = [], []

    def report(name, cache_dir, loop_calls, bytecode):
        loops.append(loop_calls)
        caches.append(cache_dir)
        base = {"peak_rss_kib": 1024, "compile_first_s": 0.1, "compile_units": []}
        n = len(loops)
        if n == 1 or n in (5,):  # the bytecode process, the one filling the cache
            return dict(base, units=[(50.0, False, 0.0)])
        if n <= 4:
            return dict(base, units=[(next(cold), False, 0.0), (10.0, False, 0.0)])
        return dict(base, units=[(next(cached), True, 1.5), (0.5, True, 0.4)])
    monkeypatch.setattr(bench_native, "fresh_process_report", report)
    bench_native.print_process_reports(["mlp"], 40)
    row = [line for line in capsys.readouterr().out.splitlines() if line.strip().startswith("mlp")][0]
    assert "70.0 (60.0-90.0)" in row and "3.0 (2.0-7.0)" in row
    assert loops == [0, 0, 0, 0, 0, 40, 0, 0]
    assert len(set(caches[1:4])) == 3 and len(set(caches[4:])) == 1  # (cold: fresh caches)
