"""Inlining: replace `prim::CallFunction`/`prim::CallMethod` by a copy of the callee's graph
(PyTorch's Inline), for callees given as graphs.

`functions` maps a function constant's `name` (CallFunction) or `"<qualified class>.<method>"`
(CallMethod on a value of that class type) to the callee graph; other calls stay as they are.
Callee bodies are inlined recursively, as PyTorch inlines a callee's already-inlined graph.
"""

from __future__ import annotations

from typing import Optional

from irjit.compiler.ir import Block, ClassType, Graph, Node, Value

from .registry import register_pass


def _callee(n: Node, functions: dict[str, Graph]) -> Optional[Graph]:
    if n.kind == "prim::CallFunction":
        fn = n.inputs[0].node if n.inputs else None
        if fn is None or fn.kind != "prim::Constant" or not fn.has_attr("name"):
            return None
        return functions.get(fn.attr("name"))
    t = n.inputs[0].type if n.inputs else None
    if isinstance(t, ClassType):
        name = n.attr("name")
        return functions.get(f"{t.qualified_name}.{name}") or \
            functions.get(f"{t.unmangled_name}.{name}")
    return None


def inline_call(n: Node, callee: Graph, args: list[Value]) -> list[Value]:
    """Insert a copy of `callee`'s body before `n` with its inputs bound to `args`, redirect
    the uses of `n`'s outputs to the copied results, destroy `n`, and return those results."""
    g = n.graph
    value_map = dict(zip(callee.inputs, args))
    for m in callee.nodes():
        g.clone_node(m, value_map).insert_before(n)
    results = [value_map.get(v, v) for v in callee.outputs]
    for o, r in zip(n.outputs, results):
        o.replace_all_uses_with(r)
    n.destroy()
    return results


def _inline_block(block: Block, functions: dict[str, Graph], active: tuple[int, ...]) -> bool:
    changed = False
    for n in block.nodes():
        if n.kind in ("prim::CallFunction", "prim::CallMethod"):
            callee = _callee(n, functions)
            if callee is None or id(callee) in active:
                continue
            body = callee.copy()
            _inline_block(body.block, functions, active + (id(callee),))
            args = list(n.inputs[1:] if n.kind == "prim::CallFunction" else n.inputs)
            inline_call(n, body, args)
            changed = True
        else:
            for b in n.blocks:
                changed |= _inline_block(b, functions, active)
    return changed


@register_pass("inline")
def run(graph: Graph, functions: Optional[dict[str, Graph]] = None) -> bool:
    """Replace calls to known functions and methods by the callee's body (PyTorch's Inline)."""
    return _inline_block(graph.block, functions or {}, ())
