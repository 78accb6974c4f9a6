"""irjit's runtime: the numpy interpreter, the op registry, autograd and (later) executors."""

import irjit.ops  # noqa: F401  (registers every op)
from . import native  # noqa: F401  (runs prim::NativeGroup nodes)
from .autograd import no_grad, set_grad_enabled
from .interpreter import Interpreter
from .loader import Function, grad, load
from irjit.ops.random import manual_seed
from irjit.ops.tensor import Tensor

__all__ = ["Function", "Interpreter", "Tensor", "grad", "load", "manual_seed", "no_grad",
           "set_grad_enabled"]
