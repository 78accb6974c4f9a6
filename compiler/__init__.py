"""irjit's compiler: the IR, the parser and printer, passes, autodiff and code generation."""

from irjit.ops.errors import IRParseError, IRRuntimeError, IRTypeError
from .ir import Graph
from .parser import parse_ir
from .printer import print_graph

__all__ = ["Graph", "IRParseError", "IRRuntimeError", "IRTypeError", "parse_ir", "print_graph"]
