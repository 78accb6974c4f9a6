"""Symbolic differentiation of DifferentiableGraph bodies, as PyTorch's autodiff does."""

from .differentiate import differentiate, is_differentiable, requires_grad
from .gradient import Gradient

__all__ = ["Gradient", "differentiate", "is_differentiable", "requires_grad"]
