"""`irtool opt --emit=llvm|asm` and `irtool run --backend native --stats`."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from irjit.tools.irtool import main

CHAIN = Path(__file__).resolve().parents[1] / "fixtures" / "bench" / "elementwise_chain.ir"
TYPES = "Float(100000), Float(100000), Float(100000)"


def test_emit_asm_of_the_bench_chain_is_vectorized_without_libm_calls(capsys):
    assert main(["opt", "--emit=asm", "--input-types", TYPES, str(CHAIN)]) == 0
    asm = capsys.readouterr().out
    assert re.search(r"\b(vfmadd|vmul|vadd)ps\s+%[yz]mm", asm)
    assert not re.search(r"call\w*\s+\*?(tanhf|expf)", asm)


def test_emit_without_complete_types_is_one_line_error(capsys):
    assert main(["opt", "--emit=llvm", str(CHAIN)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("irtool: error: no node of the graph lowers") and err.count("\n") == 1


def test_run_native_gives_the_interpreters_outputs_and_stats(tmp_path, capsys):
    rng = np.random.default_rng(0)
    inputs = tmp_path / "in.npz"
    np.savez(inputs, **{f"arg{i}": rng.standard_normal((8, 16)).astype(np.float32) for i in range(3)})
    assert main(["run", str(CHAIN), "--inputs", str(inputs), "--out", str(tmp_path / "a.npz")]) == 0
    interp = capsys.readouterr().out
    assert main(["run", str(CHAIN), "--inputs", str(inputs), "--backend", "native", "--stats",
                 "--runs", "2", "--out", str(tmp_path / "b.npz")]) == 0
    native = capsys.readouterr().out.splitlines()
    assert re.fullmatch(r"native: units=[1-9]\d* nodes_native=[1-9]\d* nodes_interpreted=\d+ "
                        r"compile_ms=[0-9.]+ cache_hits=\d+ bailouts=0", native[-1])
    np.testing.assert_allclose(np.load(tmp_path / "b.npz")["out0"], np.load(tmp_path / "a.npz")["out0"],
                               rtol=1e-5, atol=1e-6)
    assert interp.splitlines()[0].split(" sum=")[0] == native[0].split(" sum=")[0]


def test_executors_run_native_by_default_with_the_interpreters_results(tmp_path, capsys):
    rng = np.random.default_rng(1)
    inputs = tmp_path / "in.npz"
    np.savez(inputs, **{f"arg{i}": rng.standard_normal(64).astype(np.float32) for i in range(3)})
    assert main(["run", str(CHAIN), "--inputs", str(inputs), "--out", str(tmp_path / "a.npz")]) == 0
    for executor in ("legacy", "profiling"):
        assert main(["run", str(CHAIN), "--inputs", str(inputs), "--executor", executor,
                     "--runs", "3", "--stats", "--out", str(tmp_path / "b.npz")]) == 0
        stats = capsys.readouterr().out.splitlines()[-1]
        assert re.match(r"native: units=[1-9]\d* nodes_native=[1-9]", stats), stats
        np.testing.assert_allclose(np.load(tmp_path / "b.npz")["out0"],
                                   np.load(tmp_path / "a.npz")["out0"], rtol=1e-5, atol=1e-6)
    assert main(["run", str(CHAIN), "--inputs", str(inputs), "--executor", "profiling",
                 "--backend", "interp", "--runs", "3", "--stats"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("native: units=0 nodes_native=0")
