"""Operator implementations, one module per family; importing this package registers them all."""

import importlib
import pkgutil

from . import registry

for _info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    if _info.name not in ("registry",) and not _info.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_info.name}")

from . import facts, shape_rules  # noqa: E402 - once every op is registered

facts.attach()
shape_rules.attach()

__all__ = ["registry"]
