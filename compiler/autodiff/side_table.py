"""Gradients attached to DifferentiableGraph nodes, kept off the printed attribute list."""

from __future__ import annotations

import weakref
from typing import Optional

from .gradient import Gradient

_GRADIENTS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def set_gradient(node, grad: Gradient) -> None:
    _GRADIENTS[node] = grad


def get_gradient(node) -> Optional[Gradient]:
    """The Gradient the autodiff pipeline stored on a `prim::DifferentiableGraph` node."""
    return _GRADIENTS.get(node)
