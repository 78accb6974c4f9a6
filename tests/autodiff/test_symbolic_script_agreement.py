"""differentiate() on one op at a time against PyTorch 2.13's `_jit_differentiate` of the same
graph, for each function of symbolic_script (tests/fixtures/autodiff/symbolic_script, written
by tools/fixturegen/symbolic_script_cases.py; `shaped` inputs have complete types, `unshaped`
ones plain `Tensor`s): the Gradient fields and the `f` / `df` texts up to value names.

Agreeing (case, part)s are tests; the rest are strict xfails with the reason, by op, so that
spelling one more formula as symbolic_script does (or breaking one) changes the count.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

import pytest

import irjit
from irjit.compiler.autodiff import differentiate

from .test_differentiate_agreement import normalized

HERE = Path(__file__).resolve().parent.parent / "fixtures" / "autodiff" / "symbolic_script"
CASES = sorted(p.name for p in HERE.iterdir() if p.is_dir())
PARTS = ("fields", "f", "df")
ALL = frozenset(PARTS)

# op (the case name without its number and variant) -> (parts that differ, why); `shaped` /
# `unshaped` refine the parts when the variants differ
DIFFERS: dict[str, tuple] = {}

_CASE = re.compile(r"^\d+_(.*)_(shaped|unshaped)$")


def _reason(case: str, part: str):
    op, variant = _CASE.match(case).groups()
    parts, why = DIFFERS.get(op, ((), None))
    if isinstance(parts, dict):
        parts = parts[variant]
    return why if part in parts else None


def _params():
    for case in CASES:
        for part in PARTS:
            reason = _reason(case, part)
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            yield pytest.param(case, part, marks=marks, id=f"{case}-{part}")


def test_the_corpus_covers_symbolic_script():
    manifest = json.loads((HERE / "manifest.json").read_text())
    assert len(CASES) == len(manifest["cases"]) >= 240
    assert {_CASE.match(c).group(1) for c in CASES} >= set(DIFFERS)


@lru_cache(maxsize=None)
def _ours(case: str) -> dict:
    """Our Gradient of a case, once for its three parts."""
    grad = differentiate(irjit.parse_ir((HERE / case / "input.ir").read_text()))
    return {"fields": grad.fields(), "f": normalized(str(grad.f)), "df": normalized(str(grad.df))}


@pytest.mark.parametrize("case,part", list(_params()))
def test_agrees_with_pytorch(case, part):
    folder = HERE / case
    try:
        got = _ours(case)[part]
    except Exception as e:  # noqa: BLE001 - a case we cannot differentiate differs in every part
        pytest.fail(f"differentiate failed: {type(e).__name__}: {e}")
    if part == "fields":
        assert got == json.loads((folder / "gradient.json").read_text())
    else:
        assert got == normalized((folder / f"{part}.ir").read_text())
