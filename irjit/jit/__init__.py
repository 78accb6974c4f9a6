"""TorchScript's front end for Python: `script` compiles functions from their source."""

from .errors import ScriptError
from .script import ScriptFunction, script

__all__ = ["ScriptError", "ScriptFunction", "script"]
