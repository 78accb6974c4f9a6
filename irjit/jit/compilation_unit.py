"""`irjit.jit.CompilationUnit(source)`: compile the functions of a Python source string, as
`torch.jit.CompilationUnit` does (for code that has no file `inspect` could read)."""

from __future__ import annotations

import ast

import irjit

from .emitter import FunctionEmitter
from .errors import ScriptError
from .script import ScriptFunction


class CompilationUnit:
    """The functions defined in `source`, each a ScriptFunction attribute; a function may call
    the ones defined before it. `torch` and `irjit` name the op namespace."""

    def __init__(self, source: str, filename: str = "<string>"):
        try:
            tree = ast.parse(source, filename)
        except SyntaxError as e:
            from irjit.compiler.ir import SourceLocation
            raise ScriptError(e.msg, SourceLocation(filename, e.lineno or 0,
                                                    (e.offset or 1) - 1)) from None
        self._functions: dict[str, ScriptFunction] = {}
        scope = {"torch": irjit, "irjit": irjit}
        for node in tree.body:
            if not isinstance(node, ast.FunctionDef):
                from irjit.compiler.ir import SourceLocation
                raise ScriptError("a compilation unit holds function definitions only",
                                  SourceLocation(filename, node.lineno, node.col_offset))
            callees: dict[str, ScriptFunction] = {}

            def compile_callee(target, call_node, callees=callees):
                callees[target.name] = target
                return target
            emitter = FunctionEmitter(node, filename, 0, 0, scope, compile_callee)
            graph, signature = emitter.emit()
            fn = ScriptFunction(graph, signature, f"__torch__.{node.name}", callees)
            self._functions[node.name] = fn
            scope[node.name] = fn

    def __getattr__(self, name: str) -> ScriptFunction:
        try:
            return self.__dict__["_functions"][name]
        except KeyError:
            raise AttributeError(f"the compilation unit defines no function {name!r}") from None

    def __dir__(self):
        return sorted(self._functions)


__all__ = ["CompilationUnit"]
