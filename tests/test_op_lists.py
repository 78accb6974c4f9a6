"""Op kinds are listed in one place, the op layer (`ops.facts`, the registry): a pass, the
interpreter or a tool asks it by kind instead of keeping its own list of op names.

Every module of compiler/, runtime/ and tools/ is read with `ast`; a collection literal (set,
list, tuple, dict) of op kinds ("aten::add", "prim::If", ...) is a list when it holds three or
more kinds, or two or more and is bound to a name. Matching a node against one or two kinds a
pass rewrites (`n.kind in ("prim::If", "prim::Loop")`) is not a list, nor is creating a node.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("compiler", "runtime", "tools")
KIND = re.compile(r"^(aten|prim|onnx|cuda|quantized|_caffe2)::[A-Za-z0-9_]+$")

# module -> why its op-kind list is not a fact about ops
ALLOWED = {
    "tools/fixturegen/verify.py": "a coverage checklist for the generated fixtures (which ops "
                                  "the torch-side run cases must exercise), not a fact about ops",
    "runtime/nn_modules.py": "maps torch.nn modules to the aten op each one calls (per rank "
                             "for upsampling), as torch.nn.functional does: a fact about the "
                             "module, not the op",
}


COLLECTIONS = (ast.Set, ast.List, ast.Tuple, ast.Dict)


def _kinds(elements) -> int:
    return sum(1 for e in elements
               if isinstance(e, ast.Constant) and isinstance(e.value, str) and KIND.match(e.value))


def op_lists(source: str) -> list[tuple[int, int]]:
    """(line, number of kinds) of each op-kind list literal in `source`."""
    tree = ast.parse(source)
    named = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            value = node.value  # `X = {...}` or `X = frozenset({...})`
            if isinstance(value, ast.Call) and value.args:
                value = value.args[0]
            if isinstance(value, COLLECTIONS):
                named.add(value)
    found, inside_named = [], set()
    for value in named:  # a named table counts every kind in it, nested ones too
        n = _kinds(list(ast.walk(value)))
        inside_named.update(id(x) for x in ast.walk(value))
        if n >= 2:
            found.append((value.lineno, n))
    for node in ast.walk(tree):
        if id(node) in inside_named or not isinstance(node, COLLECTIONS):
            continue
        if isinstance(node, ast.Dict):
            n = max(_kinds([k for k in node.keys if k is not None]), _kinds(node.values))
        else:
            n = _kinds(node.elts)
        if n >= 3:
            found.append((node.lineno, n))
    return sorted(found)


def test_no_op_kind_lists_outside_the_op_layer():
    errors = []
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel in ALLOWED:
                continue
            errors += [f"{rel}:{line}: a list of {n} op kinds; ask ops.facts (or add a tag there)"
                       for line, n in op_lists(path.read_text())]
    assert not errors, "op-kind lists outside the op layer:\n" + "\n".join(errors)


def test_allowed_modules_still_need_it():
    for rel in ALLOWED:
        assert (ROOT / rel).is_file(), f"{rel} is allowed but gone: drop it from ALLOWED"
        assert op_lists((ROOT / rel).read_text()), f"{rel} has no op list now: drop it from ALLOWED"


def test_the_checker_sees_lists_and_ignores_matches():
    assert op_lists('S = frozenset({"aten::add", "aten::mul"})\n') == [(1, 2)]
    assert op_lists('D = {"aten::conv1d": 3, "aten::conv2d": 4}\n') == [(1, 2)]
    assert op_lists('M = {"add": "aten::add", "mul": "aten::mul"}\n') == [(1, 2)]
    assert op_lists('def f(n):\n    return n.kind in ("aten::a", "aten::b", "prim::c")\n') == [(2, 3)]
    assert op_lists('def f(n):\n    return n.kind in ("prim::If", "prim::Loop")\n') == []
    assert op_lists('x = [v for v in vs if v.node.kind not in ("prim::A", "prim::B")]\n') == []
    assert op_lists('REQUIRED = [["aten::add"], ["aten::sub", "aten::rsub"]]\n') == [(1, 3)]
    assert op_lists('g.create("prim::If")\nx = ("prim::If", 1)\n') == []
