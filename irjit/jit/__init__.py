"""TorchScript's front end for Python: `trace` records the ops a function or module runs."""

from .scope import scope, scope_name
from .trace_api import TracedFunction, TracingCheckError, trace
from .tracer import TracerWarning, TracingError

__all__ = ["TracedFunction", "TracerWarning", "TracingCheckError", "TracingError", "scope",
           "scope_name", "trace"]
