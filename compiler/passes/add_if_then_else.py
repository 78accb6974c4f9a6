"""PyTorch's AddIfThenElseOp (add_if_then_else.cpp): a `prim::If` with one output and two
empty blocks (each only yields a value) becomes `prim::IfThenElse(%cond, %then, %else)`, a
select that static runtimes run without blocks."""

from __future__ import annotations

from irjit.compiler.ir import Graph, Node

from .registry import register_pass


def _candidates(block, out: list[Node]) -> None:
    for n in block.nodes():
        if n.kind == "prim::If" and len(n.outputs) == 1 and len(n.blocks) == 2 and \
                not any(True for b in n.blocks for _ in b.nodes()):
            out.append(n)
        for b in n.blocks:
            _candidates(b, out)


@register_pass("add_if_then_else")
def run(graph: Graph) -> bool:
    """PyTorch's AddIfThenElseOp: one-output prim::Ifs whose blocks are empty become prim::IfThenElse."""
    found: list[Node] = []
    _candidates(graph.block, found)
    for n in found:
        then_v, else_v = n.blocks[0].outputs[0], n.blocks[1].outputs[0]
        new = graph.create("prim::IfThenElse", [n.inputs[0], then_v, else_v])
        new.source, new.scope = n.source, n.scope
        new.insert_before(n)
        new.output.copy_metadata(n.output)
        n.output.replace_all_uses_with(new.output)
        n.destroy()
    return bool(found)
