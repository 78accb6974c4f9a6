"""tools/bench_calls.py: `--count NAME` makes that many calls of a case inside math.fsum (what
callgrind's --toggle-collect=math_fsum counts), after its warm-up, and nothing else there."""

import math

from irjit.tools import bench_calls
from irjit.tools.bench_native import TUNABLES


def test_count_calls_a_case_inside_math_fsum_only(monkeypatch, capsys):
    monkeypatch.setenv("GLIBC_TUNABLES", TUNABLES)  # (else it re-executes itself with them)
    inside, outside = [], []
    fsum = math.fsum
    depth = [0]

    def counting_fsum(it):
        depth[0] += 1
        try:
            return fsum(it)
        finally:
            depth[0] -= 1
    monkeypatch.setattr(bench_calls.math, "fsum", counting_fsum)
    real_cases = bench_calls.cases

    def cases(only):
        found = real_cases(only)
        fn = found["tiny compile fwd+bwd"]
        found["tiny compile fwd+bwd"] = lambda: (inside if depth[0] else outside).append(fn())
        return found
    monkeypatch.setattr(bench_calls, "cases", cases)
    assert bench_calls.main(["--only", "tiny", "--count", "tiny compile fwd+bwd", "--calls", "7"]) == 0
    assert len(inside) == 7 and len(outside) == 50
    assert "7 calls inside math.fsum" in capsys.readouterr().out
