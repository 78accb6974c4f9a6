"""Named passes. A pass is `run(graph, *, option=default, ...) -> bool` (whether it changed
the graph), registered under the name pipelines and `irtool opt --passes=` use; its keyword
parameters with their defaults are the options it declares, and nothing else is accepted."""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Callable, Optional, Union


@dataclass(frozen=True)
class AtLeast:
    """An option's valid range: integers from `low` up."""
    low: int

    def __contains__(self, value: Any) -> bool:
        return value >= self.low

    def __str__(self) -> str:
        return f"an integer >= {self.low}"


@dataclass(frozen=True)
class OneOf:
    """An option's valid values: one of a few names."""
    choices: tuple[str, ...]

    def __contains__(self, value: Any) -> bool:
        return value in self.choices

    def __str__(self) -> str:
        return "one of " + ", ".join(self.choices)


@dataclass(frozen=True)
class PassOption:
    """One declared option: its Python name, its default, the kind of value it takes
    ("true/false", "an integer", "a number", or "" for any), and its valid values when the
    pass restricts them (`AtLeast`, `OneOf`; None is always allowed where it is the default)."""
    name: str
    default: Any
    kind: str
    valid: Optional[Union[AtLeast, OneOf]] = None

    @property
    def spelling(self) -> str:
        """How a pipeline string writes it: `node-threshold`."""
        return self.name.replace("_", "-")

    @property
    def expected(self) -> str:
        """What the option takes, for error messages: `an integer >= 1`."""
        return str(self.valid) if self.valid is not None else self.kind

    def accepts(self, value: Any) -> bool:
        if value is None and self.default is None:
            return True
        if self.kind == "true/false":
            ok = isinstance(value, bool)
        elif self.kind == "an integer":
            ok = isinstance(value, int) and not isinstance(value, bool)
        elif self.kind == "a number":
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        else:
            ok = True
        return ok and (self.valid is None or value in self.valid)


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


def declared_options(fn: Callable[..., bool], valid: Optional[dict] = None) -> tuple[PassOption, ...]:
    """The options `fn(graph, ...)` declares: every parameter after the graph, each with a
    default; a pass taking `**kwargs` would accept and ignore misspelled options, so it is a bug.
    `valid` restricts some of them (option name -> AtLeast / OneOf)."""
    params = list(inspect.signature(fn).parameters.values())[1:]
    valid = valid or {}
    names = {p.name for p in params}
    assert set(valid) <= names, f"ranges given for undeclared options {set(valid) - names} of {fn.__module__}"
    options = []
    for p in params:
        assert p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL), \
            f"pass {fn.__module__}.{fn.__name__} must declare its options, not take *{p.name}"
        assert p.default is not p.empty, f"option {p.name} of {fn.__module__} has no default"
        options.append(PassOption(p.name, p.default, _option_kind(p), valid.get(p.name)))
    return tuple(options)


_PASSES: dict[str, PassInfo] = {}


def register_pass(name: str, description: str = "", valid: Optional[dict] = None):
    """Decorator registering `run(graph, **options) -> bool` as pass `name`; `valid` gives the
    valid values of options that have a range (`{"node_threshold": AtLeast(1)}`)."""
    def wrap(fn):
        if name in _PASSES:
            raise AssertionError(f"pass {name} is registered twice")
        doc = description or (fn.__doc__ or "").strip().split("\n")[0]
        _PASSES[name] = PassInfo(name, fn, doc, declared_options(fn, valid))
        return fn
    return wrap


def get_pass(name: str) -> PassInfo:
    try:
        return _PASSES[name]
    except KeyError:
        raise KeyError(f"unknown pass {name!r}; known passes: {', '.join(sorted(_PASSES))}") from None


def all_passes() -> dict[str, PassInfo]:
    return dict(_PASSES)
