"""Named passes. A pass is `run(graph, *, option=default, ...) -> bool` (whether it changed
the graph), registered under the name pipelines and `irtool opt --passes=` use; its keyword
parameters with their defaults are the options it declares, and nothing else is accepted."""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class PassOption:
    """One declared option: its Python name, its default, and the kind of value it takes
    ("true/false", "an integer", "a number", or "" for any)."""
    name: str
    default: Any
    kind: str

    @property
    def spelling(self) -> str:
        """How a pipeline string writes it: `node-threshold`."""
        return self.name.replace("_", "-")

    def accepts(self, value: Any) -> bool:
        if self.kind == "true/false":
            return isinstance(value, bool)
        if self.kind == "an integer":
            return isinstance(value, int) and not isinstance(value, bool)
        if self.kind == "a number":
            return isinstance(value, (int, float)) and not isinstance(value, bool)
        return True


@dataclass(frozen=True)
class PassInfo:
    name: str
    run: Callable[..., bool]
    description: str
    options: tuple[PassOption, ...] = ()


def _option_kind(param: inspect.Parameter) -> str:
    default, note = param.default, str(param.annotation)
    if isinstance(default, bool) or note.startswith("bool"):
        return "true/false"
    if isinstance(default, int) or note.startswith(("int", "Optional[int]")):
        return "an integer"
    if isinstance(default, float) or note.startswith(("float", "Optional[float]")):
        return "a number"
    return ""


def declared_options(fn: Callable[..., bool]) -> tuple[PassOption, ...]:
    """The options `fn(graph, ...)` declares: every parameter after the graph, each with a
    default; a pass taking `**kwargs` would accept and ignore misspelled options, so it is a bug."""
    params = list(inspect.signature(fn).parameters.values())[1:]
    options = []
    for p in params:
        assert p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL), \
            f"pass {fn.__module__}.{fn.__name__} must declare its options, not take *{p.name}"
        assert p.default is not p.empty, f"option {p.name} of {fn.__module__} has no default"
        options.append(PassOption(p.name, p.default, _option_kind(p)))
    return tuple(options)


_PASSES: dict[str, PassInfo] = {}


def register_pass(name: str, description: str = ""):
    """Decorator registering `run(graph, **options) -> bool` as pass `name`."""
    def wrap(fn):
        if name in _PASSES:
            raise AssertionError(f"pass {name} is registered twice")
        doc = description or (fn.__doc__ or "").strip().split("\n")[0]
        _PASSES[name] = PassInfo(name, fn, doc, declared_options(fn))
        return fn
    return wrap


def get_pass(name: str) -> PassInfo:
    try:
        return _PASSES[name]
    except KeyError:
        raise KeyError(f"unknown pass {name!r}; known passes: {', '.join(sorted(_PASSES))}") from None


def all_passes() -> dict[str, PassInfo]:
    return dict(_PASSES)
