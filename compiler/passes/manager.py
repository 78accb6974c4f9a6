"""Running passes: a `PassManager` over `(name, options)` lists, the pipeline syntax
`"dce,cse,autodiff{node-threshold=1}"`, short aliases, and named pipelines (usable
wherever a pass name is)."""

from __future__ import annotations

import re
import sys
import time
from typing import Any, Callable, Optional, TextIO

from irjit.compiler import progress
from irjit.compiler.ir import Graph

from .registry import PassInfo, all_passes, get_pass, register_pass

ALIASES: dict[str, str] = {
    "dce": "eliminate_dead_code",
    "cse": "eliminate_common_subexpression",
    "constprop": "constant_propagation",
    "inline": "inline",
    "canonicalize_ops": "canonicalize_graph_fuser_ops",  # PyTorch's CanonicalizeOps
    "lower_all_tuples": "lower_tuples",
    "profile": "insert_profiling",
}

_PIPELINES: set[str] = set()


class PassError(Exception):
    """A pass could not run: unknown name, bad options, or a broken graph after it."""


def register_pipeline(name: str, fn: Callable[..., Any], description: str = "",
                      valid: Optional[dict] = None) -> None:
    """Register `fn(graph, **options)` (which runs a sequence of passes) as pipeline `name`;
    it is also a pass name, so it can appear in `--passes` and other pipelines."""
    doc = description or (fn.__doc__ or "").strip().split("\n")[0]

    def run(graph: Graph, **options) -> bool:
        changed = fn(graph, **options)
        return True if changed is None else bool(changed)
    run.__doc__ = doc
    run.__wrapped__ = fn  # so option checking sees fn's parameters
    register_pass(name, doc, valid)(run)
    _PIPELINES.add(name)


def is_pipeline(name: str) -> bool:
    return name in _PIPELINES


def resolve(name: str) -> PassInfo:
    """The registered pass or pipeline called `name` (or its alias)."""
    full = ALIASES.get(name, name)
    try:
        return get_pass(full)
    except KeyError:
        known = ", ".join(sorted(set(all_passes()) | set(ALIASES)))
        raise PassError(f"unknown pass {name!r} (known: {known})") from None


# ---- the pipeline syntax

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*")


def _convert(text: str) -> Any:
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def parse_pipeline(text: str) -> list[tuple[str, dict[str, Any]]]:
    """`"dce,cse,autodiff{node-threshold=1,inline=true}"` -> `[("dce", {}), ("cse", {}),
    ("autodiff", {"node_threshold": 1, "inline": True})]`; raises PassError on bad syntax."""
    out: list[tuple[str, dict[str, Any]]] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i].isspace():
            i += 1
        m = _NAME.match(text, i)
        if m is None:
            where = repr(text[i]) if i < n else "end of pipeline"
            raise PassError(f"bad pipeline {text!r}: expected a pass name at {where}")
        name, i = m.group(0), m.end()
        if name not in ALIASES:
            name = name.replace("-", "_")
        options: dict[str, Any] = {}
        while i < n and text[i].isspace():
            i += 1
        if i < n and text[i] == "{":
            close = text.find("}", i)
            if close == -1:
                raise PassError(f"bad pipeline {text!r}: '{{' after {name} is not closed")
            for item in filter(None, (s.strip() for s in text[i + 1:close].split(","))):
                key, eq, value = item.partition("=")
                key = key.strip()
                if not _NAME.fullmatch(key):
                    raise PassError(f"bad option {item!r} for {name}")
                options[key.replace("-", "_")] = _convert(value.strip()) if eq else True
            i = close + 1
        out.append((name, options))
        while i < n and text[i].isspace():
            i += 1
        if i == n:
            return out
        if text[i] != ",":
            raise PassError(f"bad pipeline {text!r}: unexpected {text[i]!r} after {name}")
        i += 1


def check_options(info: PassInfo, options: dict[str, Any]) -> None:
    """Raise PassError naming the valid options when `options` has one `info` does not
    declare, or a value of the wrong kind."""
    declared = {o.name: o for o in info.options}
    for key, value in options.items():
        option = declared.get(key)
        if option is None:
            valid = ", ".join(o.spelling for o in info.options) or "none"
            raise PassError(f"pass {info.name} has no option {key.replace('_', '-')!r} "
                            f"(valid options: {valid})")
        if not option.accepts(value):
            raise PassError(f"option {option.spelling} of pass {info.name} takes "
                            f"{option.expected}, not {value!r}")


# ---- the manager

class PassManager:
    """Runs passes in order; optionally lints after each (`verify`), prints the graph after
    each (`print_after_all`, to `stream`) and times each (`timings`, `timing_table()`)."""

    def __init__(self, passes: list[tuple[str, dict[str, Any]]] | str, verify: bool = False,
                 print_after_all: bool = False, stream: Optional[TextIO] = None):
        self.passes = parse_pipeline(passes) if isinstance(passes, str) else list(passes)
        self.verify = verify
        self.print_after_all = print_after_all
        self.stream = stream
        self.timings: list[tuple[str, float, bool]] = []
        self._resolved = []
        for name, options in self.passes:
            info = resolve(name)
            check_options(info, options)
            self._resolved.append((name, info, options))

    def run(self, graph: Graph) -> bool:
        """Run every pass on `graph` in place; return whether any changed it."""
        from irjit.compiler.ir import IRVerificationError
        any_changed = False
        with progress.task("running passes", len(self._resolved), "pass") as done:
            for name, info, options in self._resolved:
                start = time.perf_counter()
                changed = bool(info.run(graph, **options))
                self.timings.append((name, time.perf_counter() - start, changed))
                any_changed |= changed
                if self.verify:
                    try:
                        graph.lint()
                    except IRVerificationError as e:
                        raise PassError(f"the graph is malformed after pass {name}: {e}") from e
                if self.print_after_all:
                    stream = self.stream or sys.stderr
                    stream.write(f"# after {name}\n{graph}")
                done.update(1, name)
        return any_changed

    def timing_table(self) -> str:
        """One line per pass run: seconds, whether it changed the graph, and a total."""
        width = max([len(n) for n, _, _ in self.timings] + [5])
        lines = [f"{'pass':<{width}}  {'seconds':>10}  changed"]
        for name, secs, changed in self.timings:
            lines.append(f"{name:<{width}}  {secs:>10.6f}  {'yes' if changed else 'no'}")
        lines.append(f"{'total':<{width}}  {sum(s for _, s, _ in self.timings):>10.6f}")
        return "\n".join(lines) + "\n"


def run_passes(graph: Graph, pipeline: list[tuple[str, dict[str, Any]]] | str, **kwargs) -> bool:
    """Convenience: `PassManager(pipeline, **kwargs).run(graph)`."""
    return PassManager(pipeline, **kwargs).run(graph)


def describe_passes() -> list[tuple[str, str, str]]:
    """(name, "pass" or "pipeline", description) for every registered name, sorted, with
    aliases listed as `alias -> target`."""
    rows = [(name, "pipeline" if name in _PIPELINES else "pass", info.description)
            for name, info in sorted(all_passes().items())]
    rows += [(alias, "alias", f"-> {target}") for alias, target in sorted(ALIASES.items())
             if alias != target]
    return rows
