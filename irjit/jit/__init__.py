"""TorchScript's front end for Python: `script` compiles functions from their source into
ScriptFunctions (`.graph`, `.code`, calls through the graph executor); `save`/`load`
round-trip them through a zip archive."""

from irjit.runtime.executor.counters import last_executed_optimized_graph

from .compilation_unit import CompilationUnit
from .errors import ScriptError
from .module import ScriptModule
from .script import ScriptFunction, script
from .serialization import load, save

__all__ = ["CompilationUnit", "ScriptError", "ScriptFunction", "ScriptModule", "last_executed_optimized_graph", "load", "save",
           "script"]
