"""The run-time random number generator (dropout in training mode, rand/randn), seedable
for reproducible runs (`irtool run --seed N`, `runtime.manual_seed`)."""

from __future__ import annotations

import threading

import numpy as np

_state = threading.local()
_default_seed = [0]


def manual_seed(seed: int) -> None:
    """Reseed the generator of this thread and the seed new threads start from."""
    _default_seed[0] = int(seed)
    _state.gen = np.random.default_rng(int(seed))


def generator() -> np.random.Generator:
    gen = getattr(_state, "gen", None)
    if gen is None:
        gen = _state.gen = np.random.default_rng(_default_seed[0])
    return gen
