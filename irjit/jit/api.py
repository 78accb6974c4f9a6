"""`irjit.jit.script`: one entry for functions and modules."""

from __future__ import annotations

from irjit.runtime.module import Module as RuntimeModule

from .module import ScriptModule
from .script import ScriptFunction, compile_method, script_function


def script(obj):
    """Compile a Python function (annotated as TorchScript expects; unannotated parameters are
    Tensors) into a ScriptFunction, or a module (an `irjit.nn.Module`, or any
    `runtime.module.Module` whose class defines `forward`) into a ScriptModule. Raises
    ScriptError at the first unsupported construct, naming its file:line:col."""
    if isinstance(obj, (ScriptFunction, ScriptModule)):
        return obj
    if isinstance(obj, RuntimeModule):
        return ScriptModule(obj, compile_method(obj, "forward", None))
    return script_function(obj)
