"""ScriptModule: a module whose `forward` was compiled from its source; calls go through the
graph executor with the module itself as `%self`."""

from __future__ import annotations

from typing import Any

from irjit.compiler.ir import Graph
from irjit.runtime.module import Module as RuntimeModule

from .script import ScriptFunction, _runtime_value


class ScriptModule:
    """`.graph` (submodule calls as `prim::CallMethod`), `.inlined_graph`, `.code`,
    `graph_for`, calls; attribute reads reach the wrapped module (submodules wrapped too)."""

    def __init__(self, module: RuntimeModule, forward: ScriptFunction):
        self.__dict__["_module"] = module
        self.__dict__["forward"] = forward

    @property
    def original_name(self) -> str:
        return self._module.class_name

    @property
    def graph(self) -> Graph:
        return self.forward.graph

    @property
    def inlined_graph(self) -> Graph:
        return self.forward.inlined_graph

    @property
    def code(self) -> str:
        return self.forward.code

    def _inputs(self, args: tuple, kwargs: dict) -> list:
        return [self._module] + [_runtime_value(a) for a in self.forward.bind(args, dict(kwargs))]

    def __call__(self, *args, **kwargs):
        outs = self.forward.executor.run(*self._inputs(args, kwargs))
        return outs[0] if len(outs) == 1 else tuple(outs)

    def graph_for(self, *args, **kwargs) -> Graph:
        """The optimized graph the executor runs for these arguments (PyTorch's `graph_for`)."""
        return self.forward.executor.graph_for(*self._inputs(args, kwargs))

    def __getattr__(self, name: str) -> Any:
        try:
            value = self._module.get(name)
        except KeyError:
            raise AttributeError(f"{self.original_name} has no attribute {name!r}") from None
        if isinstance(value, RuntimeModule):
            compiled = self.forward.callees.get(f"{value.qualified_name}.forward")
            if compiled is not None:
                return ScriptModule(value, compiled)
        return value

    def __repr__(self) -> str:
        children = [(k, v) for k, v in self._module.attributes.items()
                    if isinstance(v, RuntimeModule)]
        if not children:
            return f"RecursiveScriptModule(original_name={self.original_name})"
        lines = ["RecursiveScriptModule(", f"  original_name={self.original_name}"]
        for name, child in children:
            lines.append(f"  ({name}): RecursiveScriptModule(original_name={child.class_name})")
        return "\n".join(lines + [")"])
