"""TorchScript's front end for Python: `script` compiles functions and modules from their
source into ScriptFunctions / ScriptModules (`.graph`, `.code`, calls through the graph
executor); `trace` records the ops a function or module runs into a ScriptFunction or a
TracedModule (a ScriptModule); `save`/`load` round-trip both through a zip archive."""

from irjit.runtime.executor.counters import last_executed_optimized_graph

from .api import script
from .compilation_unit import CompilationUnit
from .errors import ScriptError
from .module import ScriptModule, TracedModule
from .scope import scope, scope_name
from .script import ScriptFunction
from .serialization import load, save
from .trace_api import TracingCheckError, trace
from .tracer import TracerWarning, TracingError

__all__ = ["CompilationUnit", "ScriptError", "ScriptFunction", "ScriptModule", "TracedModule",
           "TracerWarning", "TracingCheckError", "TracingError", "last_executed_optimized_graph",
           "load", "save", "scope", "scope_name", "script", "trace"]
