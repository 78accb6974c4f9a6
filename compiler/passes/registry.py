"""Named passes. A pass is `run(graph, **options) -> bool` (whether it changed the graph),
registered under the name pipelines and `irtool opt --passes=` use."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class PassInfo:
    name: str
    run: Callable[..., bool]
    description: str


_PASSES: dict[str, PassInfo] = {}


def register_pass(name: str, description: str = ""):
    """Decorator registering `run(graph, **options) -> bool` as pass `name`."""
    def wrap(fn):
        if name in _PASSES:
            raise AssertionError(f"pass {name} is registered twice")
        doc = description or (fn.__doc__ or "").strip().split("\n")[0]
        _PASSES[name] = PassInfo(name, fn, doc)
        return fn
    return wrap


def get_pass(name: str) -> PassInfo:
    try:
        return _PASSES[name]
    except KeyError:
        raise KeyError(f"unknown pass {name!r}; known passes: {', '.join(sorted(_PASSES))}") from None


def all_passes() -> dict[str, PassInfo]:
    return dict(_PASSES)
