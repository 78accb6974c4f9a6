"""Symbolic differentiation of DifferentiableGraph bodies, as PyTorch's autodiff does."""

from .differentiate import differentiate, is_differentiable, requires_grad
from .gradient import Gradient
from .settings import get_autodiff_subgraph_inlining, set_autodiff_subgraph_inlining

__all__ = ["Gradient", "differentiate", "is_differentiable", "requires_grad",
           "get_autodiff_subgraph_inlining", "set_autodiff_subgraph_inlining"]
