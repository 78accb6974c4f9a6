"""Global autodiff switches, mirroring `torch._C._debug_set_autodiff_subgraph_inlining`."""

from __future__ import annotations

_INLINING = True

# PyTorch's profiling executor: autodiffSubgraphNodeThreshold / autodiffSubgraphInlineThreshold.
NODE_THRESHOLD = 2
INLINE_THRESHOLD = 5


def set_autodiff_subgraph_inlining(enabled: bool) -> None:
    """When off, the autodiff pipeline uses thresholds of 1 (every DifferentiableGraph is kept)."""
    global _INLINING
    _INLINING = bool(enabled)


def get_autodiff_subgraph_inlining() -> bool:
    return _INLINING


def default_thresholds() -> tuple[int, int]:
    """(node threshold, inline threshold) as the profiling executor picks them."""
    return (NODE_THRESHOLD, INLINE_THRESHOLD) if _INLINING else (1, 1)
