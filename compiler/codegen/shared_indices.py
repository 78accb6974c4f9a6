"""Groups of one graph that differ only in the constant index of an `aten::select` of one of
their inputs (the trips of an unrolled loop reading `x[i]`: rnn_loop's 16 forward steps, and
its backward's) take that index as an argument, so they are one unit: compiled once, not
once per index. The unit checks the index at run time (out of range, it bails out) and reads
the window at the offset it gives, so it computes what the constant's unit computes, bit for
bit. A group whose indices no other group shares keeps its constants."""

from __future__ import annotations

from typing import Optional

from irjit.compiler.ir import Graph, Node
from irjit.compiler.ir.constants import constant_value
from irjit.compiler.structural_hash import canonical_text
from irjit.ops.lowering_common import NotLowerable
from irjit.ops.types import INT, TensorType

from .lower import lower_group

GROUP = "prim::NativeGroup"


def _index_uses(sub: Graph) -> list[Node]:
    """The selects of `sub` at a constant int index whose tensor is an input of `sub` and
    whose window is read inside it (a window handed out would make a view at a run-time
    offset, which units return through a slower path)."""
    inputs, outputs = set(sub.inputs), set(sub.outputs)
    found = []
    for n in sub.nodes():
        if n.kind != "aten::select" or len(n.inputs) != 3 or n.inputs[0] not in inputs or \
                not isinstance(n.inputs[0].type, TensorType) or n.output in outputs:
            continue
        index = n.inputs[2].node
        if index.kind == "prim::Constant" and type(constant_value(index)) is int:
            found.append(n)
    return found


def _lift(sub: Graph, selects: list[Node]) -> list[int]:
    """Make the selects' indices inputs of `sub` (in place; constants left unused go):
    returns the indices, in the order of the new inputs."""
    values = []
    for n in selects:
        constant = n.inputs[2].node
        values.append(constant_value(constant))
        n.replace_input(2, sub.add_input(type=INT))
        if not constant.outputs[0].uses:
            constant.destroy()
    return values


def _general_text(sub: Graph) -> Optional[str]:
    """The canonical text of `sub` with its liftable indices as inputs (None: it has none)."""
    if not _index_uses(sub):
        return None
    copy = sub.copy()
    _lift(copy, _index_uses(copy))
    return canonical_text(copy)


def _lowers(sub: Graph) -> bool:
    try:
        lower_group(sub, "trial")
    except NotLowerable:
        return False
    return True


def share_index_variants(graph: Graph) -> bool:
    """Give the groups of `graph` that are equal but for their selects' constant indices those
    indices as arguments (see the module docstring); True when a group changed."""
    classes: dict[str, list[Node]] = {}
    for n in graph.walk():
        if n.kind == GROUP:
            text = _general_text(n.attr("Subgraph"))
            if text is not None:
                classes.setdefault(text, []).append(n)
    changed = False
    for groups in classes.values():
        if len(groups) < 2:
            continue
        subs = [g.attr("Subgraph").copy() for g in groups]
        lifted = [_lift(sub, _index_uses(sub)) for sub in subs]
        if not _lowers(subs[0]):  # (the others are the same graph)
            continue
        for group, sub, values in zip(groups, subs, lifted):
            group.set_attr("Subgraph", "g", sub)
            outer = group.graph
            outer.set_insert_point(group)
            for value in values:
                group.add_input(outer.insert_constant(value))
        changed = True
    return changed
