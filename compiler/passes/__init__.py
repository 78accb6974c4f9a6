"""Graph rewrites, one module per pass, registered by name (see `registry`)."""

import importlib
import pkgutil

from .registry import all_passes, get_pass, register_pass

for _info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    if not _info.name.startswith("_") and _info.name != "registry":
        importlib.import_module(f"{__name__}.{_info.name}")

__all__ = ["all_passes", "get_pass", "register_pass"]
