"""Shared by the script tests: the functions both frameworks compile, and `.code` compared
modulo names."""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CASES_PATH = ROOT / "tools" / "fixturegen" / "script_cases.py"
FIXTURES = ROOT / "tests" / "fixtures" / "script"
_KEEP = {"torch", "__torch__", "int", "float", "bool", "str", "range", "uninitialized",
         "unchecked_cast", "annotate", "len", "print", "Tensor", "List", "Optional", "Tuple",
         "Dict", "NoneType"}


def load_cases():
    """script_cases.py as the top-level module `script_cases`, as the fixture generator loads it."""
    if "script_cases" in sys.modules:
        return sys.modules["script_cases"]
    spec = importlib.util.spec_from_file_location("script_cases", CASES_PATH)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["script_cases"] = mod
    spec.loader.exec_module(mod)
    return mod


def canonical_code(code: str) -> str:
    """The code's syntax tree with local names renamed v0, v1, ... in order of appearance."""
    tree = ast.parse(code)
    names: dict[str, str] = {}

    def rename(name: str) -> str:
        if name in _KEEP:
            return name
        return names.setdefault(name, f"v{len(names)}")

    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            node.id = rename(node.id)
        elif isinstance(node, ast.arg):
            node.arg = rename(node.arg)
    return ast.dump(tree)


def node_kinds(graph) -> list[str]:
    return [n.kind for n in graph.walk()]
