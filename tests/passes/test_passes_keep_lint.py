"""Every registered pass, with its default options, on every PyTorch graph of
tests/fixtures/roundtrip/: the result must pass `graph.lint()` and its printout must parse
(and lint) again. A pass may instead raise one of its documented errors, listed by name in
ACCEPTED_ERRORS. Known bugs are (pass, fixture) pairs in KNOWN_FAILURES, run as strict
xfails with a minimal reproduction, so fixing one makes its entry fail until removed."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from irjit import parse_ir
from irjit.compiler.autodiff.differentiate import DifferentiationError
from irjit.compiler.autodiff.symbolic_emitter import NotSymbolic
from irjit.compiler.passes import all_passes
from irjit.compiler.passes.freeze_module import FreezingError
from irjit.compiler.passes.lower_graph import LoweringError
from irjit.compiler.passes.lower_tuples import TupleLoweringError

ROUNDTRIP = Path(__file__).resolve().parent.parent / "fixtures" / "roundtrip"
FIXTURES = sorted(ROUNDTRIP.glob("*.ir"))
_TEXTS: dict[str, str] = {}

# passes that cannot run with their default options, and why (none at the moment; a pass
# with a required option must be listed here, see test_every_pass_is_covered)
NEEDS_ARGUMENTS: dict[str, str] = {}

# the documented errors a pass may raise instead of rewriting a graph
ACCEPTED_ERRORS: dict[str, tuple[type[BaseException], ...]] = {
    # "Couldn't lower all tuples": tuples reaching prim::CallMethod, prim::Uninitialized, ...
    "lower_tuples": (TupleLoweringError,),
    # differentiate(): unsupported nodes (control flow inside an already-built
    # DifferentiableGraph, tensor lists it cannot unpack) and formulas needing shapes
    "autodiff": (DifferentiationError, NotSymbolic),
    # module graphs whose attribute values are not given (no params) or whose methods are
    # still called: freezing needs both
    "freeze_module": (FreezingError,),
    # the same for lowering: tensor attributes need their values (params) to type the inputs
    "lower_graph": (LoweringError,),
}


# (pass, fixture) -> (why, the error it raises now)
KNOWN_FAILURES: dict[tuple[str, str], tuple[str, tuple[type[BaseException], ...]]] = {
}


def _required_options(name: str) -> list[str]:
    fn = all_passes()[name].run
    fn = getattr(fn, "__wrapped__", fn)
    params = list(inspect.signature(fn).parameters.values())[1:]
    return [p.name for p in params if p.default is p.empty
            and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]


RUNNABLE = sorted(n for n in all_passes() if n not in NEEDS_ARGUMENTS)


def _text(name: str) -> str:
    if name not in _TEXTS:
        _TEXTS[name] = (ROUNDTRIP / name).read_text()
    return _TEXTS[name]


def check(pass_name: str, fixture: str) -> str:
    """Run the pass on the fixture; return "ok" or "raised" (an accepted error), or raise."""
    text = _text(fixture)
    graph = parse_ir(text, fixture)
    try:
        all_passes()[pass_name].run(graph)
    except ACCEPTED_ERRORS.get(pass_name, ()):
        return "raised"
    graph.lint()
    out = str(graph)
    if out != text:  # the fixtures print back verbatim, so an unchanged printout parses
        parse_ir(out, f"{fixture} after {pass_name}").lint()
    return "ok"


def test_every_pass_is_covered():
    for name in all_passes():
        if name not in NEEDS_ARGUMENTS:
            assert not _required_options(name), f"{name} needs options: list it in NEEDS_ARGUMENTS"
    assert len(FIXTURES) >= 191
    for (name, fixture) in KNOWN_FAILURES:
        assert name in all_passes() and (ROUNDTRIP / fixture).exists(), (name, fixture)


@pytest.mark.parametrize("pass_name", RUNNABLE)
def test_pass_keeps_lint(pass_name):
    failures = []
    for path in FIXTURES:
        if (pass_name, path.name) in KNOWN_FAILURES:
            continue
        try:
            check(pass_name, path.name)
        except Exception as e:  # noqa: BLE001 - every other error is a failure, reported below
            failures.append(f"{path.name}: {type(e).__module__}.{type(e).__name__}: {e}")
    assert not failures, f"{pass_name} fails on {len(failures)} fixture(s):\n" + "\n".join(failures)


@pytest.mark.parametrize("pass_name,fixture", [
    pytest.param(p, f, marks=pytest.mark.xfail(strict=True, reason=why, raises=raises),
                 id=f"{p}-{f}") for (p, f), (why, raises) in sorted(KNOWN_FAILURES.items())])
def test_known_failures(pass_name, fixture):
    check(pass_name, fixture)


# ---- regressions found by the sweep above

def test_propagate_input_shapes_reads_empty_list_constants():
    # 051_trace_conv1d_inlined through `autodiff`: a stride of `annotate(List[int], [])`
    # reached the pooling rule as an AnnotatedValue (TypeError in `num // s`)
    g = parse_ir("""graph(%x : Float(1, 4, 16)):
  %k : int[] = prim::Constant[value=[2]]()
  %s : int[] = prim::Constant[value=annotate(List[int], [])]()
  %p : int[] = prim::Constant[value=[0]]()
  %d : int[] = prim::Constant[value=[1]]()
  %c : bool = prim::Constant[value=0]()
  %y : Tensor = aten::max_pool1d(%x, %k, %s, %p, %d, %c)
  return (%y)
""")
    all_passes()["propagate_input_shapes"].run(g)
    g.lint()
    assert g.outputs[0].type.sizes == (1, 4, 8)
