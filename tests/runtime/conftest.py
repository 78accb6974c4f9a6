"""The native coverage report: tests that measure which executed nodes ran natively record
one line per fixture, printed in pytest's terminal summary."""

from .native_coverage import REPORT


def pytest_terminal_summary(terminalreporter):
    if not REPORT:
        return
    terminalreporter.section("native coverage (executed aten:: nodes: native / interpreted)")
    for name, cov in sorted(REPORT.items()):
        interpreted = ", ".join(f"{k}={v}" for k, v in sorted(cov.interpreted.items()))
        terminalreporter.write_line(f"{name}: native {sum(cov.native.values())}, interpreted "
                                    f"{sum(cov.interpreted.values())}" + (f" ({interpreted})" if interpreted else ""))
    native = sum(sum(c.native.values()) for c in REPORT.values())
    total = native + sum(sum(c.interpreted.values()) for c in REPORT.values())
    terminalreporter.write_line(f"total: {native}/{total} native ({100.0 * native / max(total, 1):.1f}%)")
