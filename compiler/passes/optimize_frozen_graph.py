"""PyTorch's OptimizeFrozenGraph (frozen_graph_optimizations.cpp), what `torch.jit.freeze` runs
after freezing: remove inference dropout, then fold batch norms, adds/subs and muls/divs into
the convolutions and linears before them until nothing changes. (Its FrozenConcatLinear step
only merges CUDA linears, so on the CPU graphs irjit runs it never applies.)"""

from __future__ import annotations

from irjit.compiler.ir import Graph

from . import (fold_frozen_conv_add_or_sub, fold_frozen_conv_bn, fold_frozen_conv_mul_or_div,
               fold_frozen_linear_bn, remove_dropout)
from .registry import register_pass

_FOLDS = (fold_frozen_conv_bn, fold_frozen_conv_add_or_sub, fold_frozen_conv_mul_or_div,
          fold_frozen_linear_bn)


@register_pass("optimize_frozen_graph")
def run(graph: Graph, optimize_numerics: bool = True) -> bool:
    """PyTorch's OptimizeFrozenGraph: remove_dropout, then the frozen folds to a fixed point
    (only with optimize-numerics, since folding changes rounding)."""
    changed = remove_dropout.run(graph)
    again = optimize_numerics
    while again:
        again = False
        for fold in _FOLDS:
            again |= fold.run(graph)
        changed |= again
    return changed
