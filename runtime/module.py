"""Module objects: what `%self` is at run time, holding parameters, buffers, hyper-parameters
and submodules by attribute name, as a scripted `torch.nn.Module` does."""

from __future__ import annotations

from typing import Any, Optional

_MISSING = object()


class Module:
    """A module instance of a TorchScript class type (`__torch__.models.MyModule`)."""

    def __init__(self, qualified_name: str = "__torch__.Module", path: str = ""):
        self.qualified_name = qualified_name
        self.path = path  # dotted path from the root module, for error messages
        self.attributes: dict[str, Any] = {}

    @property
    def class_name(self) -> str:
        """The class name without module path or `___torch_mangle_N` parts (`Conv2d`)."""
        return self.qualified_name.rsplit(".", 1)[-1]

    def get(self, name: str, default: Any = _MISSING) -> Any:
        if name in self.attributes:
            return self.attributes[name]
        if default is not _MISSING:
            return default
        where = f"{self.path}.{name}" if self.path else name
        raise KeyError(where)

    def set(self, name: str, value: Any) -> None:
        self.attributes[name] = value

    def submodule(self, name: str, qualified_name: Optional[str] = None) -> "Module":
        """The child module `name`, created on first use."""
        child = self.attributes.get(name)
        if not isinstance(child, Module):
            child = Module(qualified_name or f"{self.qualified_name}.{name}",
                           f"{self.path}.{name}" if self.path else name)
            self.attributes[name] = child
        elif qualified_name is not None:
            child.qualified_name = qualified_name
        return child

    def __repr__(self) -> str:
        return f"<Module {self.qualified_name} {sorted(self.attributes)}>"
