"""No import circles: the graph of which irjit module imports which (every import statement
the module runs, at module level or inside functions) has no cycle, so each module has a
direction (shared helpers live below their users, not beside them). Imports under
`if TYPE_CHECKING:` never run and only name types for annotations; they are left out."""

from __future__ import annotations

import ast
from pathlib import Path

from .test_layers import ROOT, import_from_target, modules


def _drop_type_checking_blocks(tree: ast.AST) -> ast.AST:
    class Dropper(ast.NodeTransformer):
        def visit_If(self, node: ast.If):
            test = node.test
            name = test.id if isinstance(test, ast.Name) else \
                test.attr if isinstance(test, ast.Attribute) else None
            if name == "TYPE_CHECKING":
                return node.orelse or None
            return self.generic_visit(node)
    return Dropper().visit(tree)


def run_time_imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The irjit modules (of `known`) that `path` imports when it runs."""
    tree = _drop_type_checking_blocks(ast.parse(path.read_text(), str(path)))
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            target = import_from_target(name, is_package, node)
            submodules = {f"{target}.{alias.name}" for alias in node.names} & known
            found |= submodules
            if len(submodules) < len(node.names):  # some names are defined in `target` itself
                found.add(target)
    return {m for m in found if m in known and m != name}


def import_graph() -> dict[str, set[str]]:
    files = modules()
    known = {n for n, _ in files}
    return {name: run_time_imports(name, path, known) for name, path in files}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_module_imports_itself_through_others():
    found = cycles(import_graph())
    assert not found, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_the_cycle_finder_finds_a_cycle_through_a_function_level_import(tmp_path):
    a = tmp_path / "a.py"
    a.write_text("from irjit.b import x\n")
    b = tmp_path / "b.py"
    b.write_text("def f():\n    from irjit import a\n\nif TYPE_CHECKING:\n    import irjit.c\n")
    known = {"irjit.a", "irjit.b", "irjit.c"}
    graph = {"irjit.a": run_time_imports("irjit.a", a, known),
             "irjit.b": run_time_imports("irjit.b", b, known)}
    assert graph["irjit.b"] == {"irjit.a"}  # the TYPE_CHECKING import is left out
    assert cycles(graph) == [["irjit.a", "irjit.b"]]


def test_every_layer_folder_is_in_the_graph():
    names = set(import_graph())
    for module in ("irjit.compiler.ir.graph", "irjit.compiler.printer", "irjit.tools.irtool",
                   "irjit.runtime.executor.plan", "irjit.ops.registry"):
        assert module in names
    assert ROOT.is_dir()
