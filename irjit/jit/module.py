"""ScriptModule: a module whose methods are graphs (compiled from source by `script`, or
recorded by `trace`: a TracedModule); calls go through the graph executor with the module
itself as `%self`."""

from __future__ import annotations

from typing import Any, Optional

from irjit.compiler.ir import Graph
from irjit.runtime.module import Module as RuntimeModule

from .script import ScriptFunction, _runtime_value


class ScriptModule:
    """`.graph` (submodule calls as `prim::CallMethod`), `.inlined_graph`, `.code`,
    `graph_for`, calls; attribute reads reach the wrapped module (submodules wrapped too)."""

    def __init__(self, module: RuntimeModule, forward: Optional[ScriptFunction],
                 methods: Optional[dict[str, ScriptFunction]] = None,
                 children: Optional[dict[str, "ScriptModule"]] = None):
        self.__dict__["_module"] = module
        self.__dict__["_methods"] = dict(methods or {})
        if forward is not None:
            self._methods["forward"] = forward
        # submodules by attribute (a loaded archive's); else wrapped from the forward's callees
        self.__dict__["_children"] = children

    @property
    def forward(self) -> ScriptFunction:
        fn = self._methods.get("forward")
        if fn is None:
            raise AttributeError(f"{self.original_name} has no forward method (the trace never "
                                 "called this module)")
        return fn

    def _forward(self) -> ScriptFunction:
        fn = self._methods.get("forward")
        if fn is None:
            raise RuntimeError(f"Method 'forward' is not defined: the trace never called this "
                               f"{self.original_name}")
        return fn

    @property
    def original_name(self) -> str:
        return self._module.class_name

    @property
    def graph(self) -> Graph:
        return self._forward().graph

    @property
    def inlined_graph(self) -> Graph:
        return self._forward().inlined_graph

    @property
    def code(self) -> str:
        return self._forward().code

    def _inputs(self, args: tuple, kwargs: dict) -> list:
        return [self._module] + [_runtime_value(a) for a in self._forward().bind(args, dict(kwargs))]

    def __call__(self, *args, **kwargs):
        outs = self._forward().executor.run(*self._inputs(args, kwargs))
        return outs[0] if len(outs) == 1 else tuple(outs)

    def graph_for(self, *args, **kwargs) -> Graph:
        """The optimized graph the executor runs for these arguments (PyTorch's `graph_for`)."""
        return self._forward().executor.graph_for(*self._inputs(args, kwargs))

    def __getattr__(self, name: str) -> Any:
        method = self.__dict__["_methods"].get(name)
        if method is not None:
            return method
        children = self.__dict__["_children"]
        if children is not None and name in children:
            return children[name]
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
        return _module_repr(self._module, lambda m: "RecursiveScriptModule")


def _module_repr(module: RuntimeModule, label) -> str:
    """`Label(\n  original_name=Name\n  (child): ...\n)`, nested as PyTorch prints script
    modules (`label(module)` is RecursiveScriptModule, or the class name for a traced one)."""
    name = module.class_name
    children = [(k, v) for k, v in module.attributes.items() if isinstance(v, RuntimeModule)]
    if not children:
        return f"{label(module)}(original_name={name})"
    lines = [f"{label(module)}(", f"  original_name={name}"]
    for attr, child in children:
        lines.append(f"  ({attr}): " + _module_repr(child, label).replace("\n", "\n  "))
    return "\n".join(lines + [")"])


class TracedModule(ScriptModule):
    """What `irjit.jit.trace` makes of a module, as torch.jit.trace's TracedModule: every
    submodule wrapped (`traced.seq`, `traced.seq.0` via getattr), each with the methods the
    trace created for it (`forward`, then `forward1`, ... when it was called again)."""

    def __init__(self, module: RuntimeModule, type_name: str, methods: dict[str, ScriptFunction],
                 children: dict[str, "TracedModule"], scope_names: Optional[dict] = None):
        super().__init__(module, None, methods, children)
        self.__dict__["type_name"] = type_name  # the module's type in the traced graphs
        self.__dict__["_scope_names"] = scope_names or {}

    def named_children(self):
        return iter(self._children.items())

    def legacy_scope_name(self, node) -> str:
        """The node's scope in the 2017 tracer's form, `Net/Sequential[layer1]/Linear[0]`: the
        traced module's class, then `Class[attribute]` per submodule call, user scopes as named."""
        names, s = [], node.scope
        while s.parent is not None:
            names.append(self._scope_names.get(s.names_from_root(), s.name))
            s = s.parent
        names.append(self.original_name)
        return "/".join(reversed(names))

    def __repr__(self) -> str:
        """As PyTorch prints a traced module: `Net(\n  original_name=Net\n  (seq): ...)`."""
        return _module_repr(self._module, lambda m: m.class_name)
