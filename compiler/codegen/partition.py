"""The native partition pass: runs of lowerable nodes of a typed graph become
`prim::NativeGroup` nodes holding their Subgraph (printed like PyTorch's fusion groups), so a
printed graph shows which nodes run natively. A group is one kernel: it reads each input once
and outputs only the values used after it; constants are copied in. A node joins the run
before it when the run with it still lowers to one kernel."""

from __future__ import annotations

from typing import Optional

from irjit.compiler.ir import Block, Graph, Node
from irjit.compiler.ir.constants import constant_value
from irjit.compiler.passes._side_effects import is_mutating
from irjit.compiler.passes.registry import register_pass
from irjit.ops import facts
from irjit.ops.lowering_common import NotLowerable
from irjit.ops.types import ListType, TensorType

from .lower import contiguous_strides, is_candidate, lower_group, tensor_layout
from .scalar_program import lowers_as_program, number_kind

GROUP = "prim::NativeGroup"
MAX_GROUP_NODES = 48


def used_values(node: Node) -> list:
    """The values `node` reads: its inputs, then those its blocks read from outside them."""
    found = dict.fromkeys(node.inputs)
    nested = list(node.walk())
    blocks = list(node.blocks) + [b for m in nested for b in m.blocks]
    defined = {v for b in blocks for v in b.inputs} | {v for m in nested for v in m.outputs}
    for v in [v for m in nested for v in m.inputs] + [v for b in blocks for v in b.outputs]:
        if v not in defined:
            found.setdefault(v)
    return list(found)


def build_subgraph(run: list[Node]) -> tuple[Graph, list, list]:
    """The group graph of `run` (a copy), its outer inputs and the outer values it outputs."""
    members = set(run)
    sub = Graph()
    vmap: dict = {}
    inputs, outputs = [], []
    for n in run:
        for v in used_values(n):
            if v in vmap:
                continue
            if v.node.kind == "prim::Constant" and not isinstance(v.type, TensorType):
                vmap[v] = sub.block.append_node(sub.clone_node(v.node, lambda x: x)).output
            else:
                vmap[v] = sub.add_input(type=v.type).copy_metadata(v)
                inputs.append(v)
        clone = sub.block.append_node(sub.clone_node(n, lambda x: vmap[x]))
        vmap.update(zip(n.outputs, clone.outputs))
    for n in run:
        for o in n.outputs:
            if any(u.user not in members for u in o.uses):
                sub.register_output(vmap[o])
                outputs.append(o)
    return sub, inputs, outputs


def lowers(run: list[Node], allow_view_outputs: bool = False) -> bool:
    if not run:
        return False
    try:
        lower_group(build_subgraph(run)[0], "trial", allow_view_outputs)
    except NotLowerable:
        return False
    return True


def _contiguous_type(t):
    """Units write their outputs contiguously; consumers are specialized to that layout."""
    layout = tensor_layout(t)
    return t.with_(strides=contiguous_strides(layout[1])) if layout is not None else t


def make_group(run: list[Node]) -> Node:
    """Replace the nodes of `run` by one NativeGroup node."""
    sub, inputs, outputs = build_subgraph(run)
    g = run[0].graph
    group = g.create(GROUP, inputs, num_outputs=0)
    group.set_attr("Subgraph", "g", sub)
    group.insert_before(run[0])
    for v in inputs:  # a tensor constant between the run's nodes must come first
        if v.node.kind == "prim::Constant" and v.node.is_after(group):
            v.node.move_before(group)
    for o, so in zip(outputs, sub.outputs):
        o.type = so.type = _contiguous_type(o.type)
        out = group.add_output(o.type)
        o.replace_all_uses_with(out)
        out.copy_metadata(o)
    for n in reversed(run):
        n.destroy()
    return group


def _split(candidates: list[Node]) -> list[list[Node]]:
    """Consecutive candidates cut into groups: each group grows while it still lowers (its
    views may be pending), then keeps its longest prefix that lowers with computed outputs;
    the nodes cut off start the next group."""
    runs: list[list[Node]] = []
    pending = list(candidates)
    while pending:
        current: list[Node] = []
        for n in pending:
            if len(current) >= MAX_GROUP_NODES or not lowers(current + [n], allow_view_outputs=True):
                break
            current.append(n)
        while current and not lowers(current):
            current = current[:-1]
        if current:
            runs.append(current)
        pending = pending[max(len(current), 1):]
    return runs


def _runs(block: Block) -> list[list[Node]]:
    runs, current = [], []
    for n in list(block.nodes()):
        if n.kind == "prim::Constant":
            continue
        if is_candidate(n):
            current.append(n)
            continue
        runs.extend(_split(current))
        current = []
    runs.extend(_split(current))
    return runs


def _pieces(node: Node) -> Optional[tuple[int, list[tuple[int, int]]]]:
    """(dim, [(start, end)...]) of a chunk/unbind whose input has complete sizes."""
    x = node.inputs[0]
    layout = tensor_layout(x.type)
    if layout is None or not layout[1]:
        return None
    sizes = layout[1]
    if node.kind == "prim::ConstantChunk":
        chunks, dim = node.attr("chunks"), node.attr("dim")
    elif node.kind in ("aten::chunk", "aten::unbind") and all(
            v.node.kind == "prim::Constant" for v in node.inputs[1:]):
        args = [constant_value(v.node) for v in node.inputs[1:]]
        if node.kind == "aten::unbind":
            dim = args[0] if args else 0
            chunks = sizes[dim % len(sizes)]
        else:
            chunks, dim = args[0], (args[1] if len(args) > 1 else 0)
    else:
        return None
    dim %= len(sizes)
    n = sizes[dim]
    step = -(-n // chunks) if chunks > 0 else 0
    if step == 0:
        return None
    return dim, [(a, min(a + step, n)) for a in range(0, n, step)]


def split_chunks(block: Block) -> bool:
    """`prim::ConstantChunk`, and `aten::chunk`/`aten::unbind` unpacked by `prim::ListUnpack`,
    become one `aten::slice` (`aten::select` for unbind) per piece: views that fuse."""
    changed = False
    for n in list(block.nodes()):
        lists = n.kind in ("aten::chunk", "aten::unbind")
        if n.kind != "prim::ConstantChunk" and not lists:
            continue
        found = _pieces(n)
        if found is None:
            continue
        dim, bounds = found
        if lists:
            uses = n.output.uses
            if len(uses) != 1 or uses[0].user.kind != "prim::ListUnpack":
                continue
            unpack = uses[0].user
            outputs = unpack.outputs
        else:
            unpack, outputs = None, n.outputs
        if len(outputs) != len(bounds):
            continue
        g = n.graph
        g.set_insert_point(n)
        d = g.insert_constant(dim)
        for (start, end), out in zip(bounds, outputs):
            if n.kind == "aten::unbind":
                piece = g.insert_node(g.create("aten::select", [n.inputs[0], d, g.insert_constant(start)]))
            else:
                piece = g.insert_node(g.create("aten::slice", [n.inputs[0], d, g.insert_constant(start),
                                                               g.insert_constant(end), g.insert_constant(1)]))
            piece.output.type = out.type
            out.replace_all_uses_with(piece.output)
        if unpack is not None:
            unpack.destroy()
        n.destroy()
        changed = True
    return changed


def _number_or_list(t) -> bool:
    return number_kind(t) is not None or isinstance(t, ListType) and number_kind(t.elem) is not None


def is_program_candidate(node: Node) -> bool:
    """Whether `node` may join a scalar program: it yields numbers (or a list of numbers read
    only in its block) and lowers as a program by itself, with the readers of its lists, so a
    program never holds a node it cannot lower (lists from elsewhere are read-only arguments)."""
    if node.kind == "prim::Constant" or not node.outputs or \
            not all(_number_or_list(o.type) for o in node.outputs):
        return False
    readers = [u.user for o in node.outputs if isinstance(o.type, ListType) for u in o.uses]
    if any(m.owning_block is not node.owning_block for m in readers):
        return False
    return lowers_as_program(build_subgraph([node] + list(dict.fromkeys(readers)))[0])


def _fixes_order(node: Node) -> bool:
    """Nodes that programs are not moved across: side effects and calls (a moved program
    that refuses would raise before them), and writes (a tensor a program reads may change)."""
    return any(facts.has_side_effects(m.kind) or facts.has_tag(m.kind, "opaque") or is_mutating(m)
               for m in [node, *node.walk()])


def _worth_a_program(nodes: list[Node]) -> bool:
    """Programs of prim nodes alone (an autograd check feeding an If) save nothing."""
    return any(not m.kind.startswith("prim::") or m.kind == "prim::Loop"
               for n in nodes for m in [n, *n.walk()])


def scalar_programs(block: Block) -> list[list[Node]]:
    """The program candidates of `block` in groups that each run as one program placed at
    its first node: a later candidate joins unless it reads a value computed after that
    point outside the group (or a node that fixes the order lies between)."""
    groups: list[list[Node]] = []
    current: list[Node] = []
    computed_after: set = set()
    for n in block.nodes():
        if n.kind == "prim::Constant":
            continue
        if is_program_candidate(n):
            if current and any(v in computed_after for v in used_values(n)):
                groups.append(current)
                current, computed_after = [], set()
            current.append(n)
        elif current and _fixes_order(n):
            groups.append(current)
            current, computed_after = [], set()
        elif current:
            computed_after.update(n.outputs)
    if current:
        groups.append(current)
    return [g for g in map(_lowerable_part, groups) if g and _worth_a_program(g)]


def _lowerable_part(group: list[Node]) -> list[Node]:
    """The group, or without the members whose lists are read outside it (a reader that could
    not join), or nothing."""
    if lowers_as_program(build_subgraph(group)[0]):
        return group
    members = set(group)
    group = [n for n in group if not any(
        isinstance(o.type, ListType) and any(u.user not in members for u in o.uses) for o in n.outputs)]
    return group if group and lowers_as_program(build_subgraph(group)[0]) else []


def partition_block(block: Block) -> bool:
    changed = split_chunks(block)
    for program in scalar_programs(block):
        make_group(program)
        changed = True
    for n in block.nodes():
        for b in n.blocks:
            changed |= partition_block(b)
    for run in _runs(block):
        make_group(run)
        changed = True
    return changed


@register_pass("native_partition")
def native_partition(graph: Graph) -> bool:
    """Group the lowerable nodes of a typed graph into prim::NativeGroup units."""
    return partition_block(graph.block)
