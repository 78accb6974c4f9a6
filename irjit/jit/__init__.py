"""TorchScript's front end for Python: `script` compiles functions and modules from their
source into ScriptFunctions / ScriptModules (`.graph`, `.code`, calls through the graph
executor); `save`/`load` round-trip them through a zip archive."""

from irjit.runtime.executor.counters import last_executed_optimized_graph

from .api import script
from .compilation_unit import CompilationUnit
from .errors import ScriptError
from .module import ScriptModule
from .script import ScriptFunction
from .serialization import load, save

__all__ = ["CompilationUnit", "ScriptError", "ScriptFunction", "ScriptModule",
           "last_executed_optimized_graph", "load", "save", "script"]
