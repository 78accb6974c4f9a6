"""The layer rule: a module imports only from its own layer or lower ones (README, Architecture).

Every module's imports are read from its `ast` (imports inside functions included), resolved to
`irjit.*` names, and compared by layer; an upward import fails with the line that makes it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_DIRS = {"irjit": "irjit", "irjit.ops": "ops", "irjit.grammar": "grammar",
                "irjit.compiler": "compiler", "irjit.runtime": "runtime", "irjit.tools": "tools"}

# Bottom up; the longest matching prefix decides a module's layer.
LAYERS = {
    "irjit.ops": 1, "irjit.grammar": 1,
    "irjit.compiler": 2, "irjit.compiler.ir": 2, "irjit.compiler.parser": 2,
    "irjit.compiler.legacy_parser": 2, "irjit.compiler.attribute_parser": 2,
    "irjit.compiler.printer": 2,
    "irjit.compiler.passes": 3, "irjit.compiler.autodiff": 3,
    "irjit.compiler.codegen": 4,
    "irjit.runtime": 5,
    "irjit": 6, "irjit.tools": 6,
}
LAYER_NAMES = {1: "types and ops", 2: "IR", 3: "transforms", 4: "codegen", 5: "execution",
               6: "front ends and tools"}


def layer_of(module: str) -> int:
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        layer = LAYERS.get(".".join(parts[:n]))
        if layer is not None:
            return layer
    raise AssertionError(f"{module} is in no layer")


def modules() -> list[tuple[str, Path]]:
    """(dotted irjit name, file) of every module the package is made of."""
    out = []
    for package, folder in PACKAGE_DIRS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT / folder).with_suffix("").parts
            if rel[-1] == "__init__":
                rel = rel[:-1]
            name = ".".join((package,) + rel)
            if package == "irjit" and rel and rel[0] in ("ops", "grammar", "compiler", "runtime",
                                                          "tools"):
                continue
            out.append((name, path))
    return out


def import_from_target(name: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute module a `from ... import` in module `name` reads from."""
    if not node.level:
        return node.module or ""
    base = name.split(".")
    base = base if is_package else base[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imported_modules(name: str, path: Path) -> list[tuple[str, int]]:
    """The irjit modules `path` imports, with line numbers; relative imports resolved."""
    tree = ast.parse(path.read_text(), str(path))
    is_package = path.name == "__init__.py"
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            target = import_from_target(name, is_package, node)
            found.append((target, node.lineno))
            # `from irjit.compiler import passes` imports the submodule too
            found += [(f"{target}.{alias.name}", node.lineno) for alias in node.names
                      if (ROOT / PACKAGE_DIRS.get(target, "-")).is_dir() or target.count(".") >= 1]
    return [(m, line) for m, line in found if m == "irjit" or m.startswith("irjit.")]


def upward_imports() -> list[str]:
    known = {n for n, _ in modules()}
    errors = []
    for name, path in modules():
        own = layer_of(name)
        for target, line in imported_modules(name, path):
            if target not in known:  # `from x import function`: the module is x
                continue
            theirs = layer_of(target)
            if theirs > own:
                errors.append(f"{path.relative_to(ROOT)}:{line}: {name} ({LAYER_NAMES[own]}) "
                              f"imports {target} ({LAYER_NAMES[theirs]})")
    return errors


def test_every_module_has_a_layer():
    for name, _ in modules():
        layer_of(name)


def test_no_module_imports_from_a_higher_layer():
    errors = upward_imports()
    assert not errors, "upward imports:\n" + "\n".join(errors)


def test_the_walker_sees_imports_inside_functions(tmp_path):
    """A function-level import counts: the rule cannot be dodged by importing late."""
    f = tmp_path / "m.py"
    f.write_text("def f():\n    from irjit.runtime.interpreter import Interpreter\n")
    assert ("irjit.runtime.interpreter", 2) in imported_modules("irjit.compiler.passes.m", f)


@pytest.mark.parametrize("module,layer", [("irjit.ops.registry", 1), ("irjit.compiler.ir.node", 2),
                                          ("irjit.compiler.passes.peephole", 3),
                                          ("irjit.runtime.executor.plan", 5), ("irjit", 6)])
def test_layers_of_known_modules(module, layer):
    assert layer_of(module) == layer
