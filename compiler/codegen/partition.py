"""The native partition pass: runs of lowerable nodes of a typed graph become
`prim::NativeGroup` nodes holding their Subgraph (printed like PyTorch's fusion groups), so a
printed graph shows which nodes run natively. A group is one kernel: it reads each input once
and outputs only the values used after it; constants are copied in. A node joins the run
before it when the run with it still lowers to one kernel."""

from __future__ import annotations

import threading
from typing import Optional

from irjit.compiler.ir import Block, Graph, Node
from irjit.compiler.ir.constants import constant_value
from irjit.compiler.passes._side_effects import is_mutating
from irjit.compiler.passes.registry import register_pass
from irjit.compiler.structural_hash import canonical_text
from irjit.ops import facts
from irjit.ops.lowering_common import NotLowerable
from irjit.ops.types import ListType, TensorType

from .lower import contiguous_strides, is_candidate, lower_group, tensor_layout
from .scalar_emitter import View
from .scalar_program import lowers_as_program, number_kind
from .shared_indices import share_index_variants

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


def _within(node: Node, members: set) -> bool:
    """Whether `node` is one of `members` or inside one's blocks."""
    while node is not None and node not in members:
        block = node.owning_block
        node = block.owning_node if block is not None else None
    return node is not None


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
            if any(not _within(u.user, members) for u in o.uses):
                sub.register_output(vmap[o])
                outputs.append(o)
    return sub, inputs, outputs


_TRIALS = threading.local()  # .seen: the trial lowerings of the graph being partitioned


def lowers(run: list[Node], allow_pending_lists: bool = False) -> bool:
    """Whether `run` lowers to one kernel. Within one `native_partition`, equal subgraphs
    (an unrolled loop's trips: 434 trials of rnn_loop's graphs were 191 distinct) are
    lowered once."""
    if not run:
        return False
    sub = build_subgraph(run)[0]
    seen = getattr(_TRIALS, "seen", None)
    key = (canonical_text(sub), allow_pending_lists) if seen is not None else None
    if key in (seen or ()):
        return seen[key]
    try:
        lower_group(sub, "trial", allow_pending_lists)
        ok = True
    except NotLowerable:
        ok = False
    if seen is not None:
        seen[key] = ok
    return ok


def _output_type(t, view: Optional[View]):
    """Units write their computed outputs contiguously and hand out a view output with the
    strides of its window; consumers are specialized to that layout."""
    layout = tensor_layout(t)
    if layout is None:
        return t
    return t.with_(strides=view.strides if view is not None else contiguous_strides(layout[1]))


def _view_outputs(sub: Graph) -> dict[int, View]:
    """The outputs of a group graph that its unit hands out as views (by output index)."""
    try:
        return lower_group(sub, "views").views
    except NotLowerable:  # a scalar program
        return {}


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
    views = _view_outputs(sub)
    for j, (o, so) in enumerate(zip(outputs, sub.outputs)):
        o.type = so.type = _output_type(o.type, views.get(j))
        out = group.add_output(o.type)
        o.replace_all_uses_with(out)
        out.copy_metadata(o)
    for n in reversed(run):
        n.destroy()
    return group


def _split(candidates: list[Node]) -> list[list[Node]]:
    """Consecutive candidates cut into groups: each group grows while it still lowers (its
    lists may be pending), then keeps its longest prefix that lowers with tensor outputs
    (computed, or views its unit hands out); the nodes cut off start the next group."""
    runs: list[list[Node]] = []
    pending = list(candidates)
    while pending:
        current: list[Node] = []
        for n in pending:
            if len(current) >= MAX_GROUP_NODES or not lowers(current + [n], allow_pending_lists=True):
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


def _is_split(node: Node) -> bool:
    """split / split_with_sizes (and their unsafe forms): pieces of given sizes along a dim."""
    return node.kind.startswith(("aten::split", "aten::unsafe_split"))


def _split_bounds(sizes, args) -> Optional[tuple[int, list[tuple[int, int]]]]:
    """(dim, [(start, end)...]) of `split(x, split_size_or_sizes, dim=0)` on `sizes`."""
    dim = (args[1] if len(args) > 1 else 0) % len(sizes)
    n = sizes[dim]
    if isinstance(args[0], (list, tuple)):
        widths = list(args[0])
        if sum(widths) != n or any(w < 0 for w in widths):
            return None  # the interpreter raises the error
    else:
        step = args[0]
        if not isinstance(step, int) or step <= 0:
            return None
        widths = [min(step, n - a) for a in range(0, n, step)] or [0]
    bounds, start = [], 0
    for w in widths:
        bounds.append((start, start + w))
        start += w
    return dim, bounds


def _pieces(node: Node) -> Optional[tuple[int, list[tuple[int, int]]]]:
    """(dim, [(start, end)...]) of a chunk/unbind/split whose input has complete sizes."""
    x = node.inputs[0]
    layout = tensor_layout(x.type)
    if layout is None or not layout[1]:
        return None
    sizes = layout[1]
    if _is_split(node):
        if not all(v.node.kind == "prim::Constant" for v in node.inputs[1:]):
            return None
        return _split_bounds(sizes, [constant_value(v.node) for v in node.inputs[1:]])
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


def _unpacked(node: Node, count: int) -> Optional[tuple[list[Node], list[list]]]:
    """How the list of `count` pieces that `node` returns is read, when only by one
    `prim::ListUnpack` or by `aten::__getitem__` at constant indices: (the reading nodes, per
    piece the values that are it)."""
    uses = node.output.uses
    if len(uses) == 1 and uses[0].user.kind == "prim::ListUnpack":
        unpack = uses[0].user
        if len(unpack.outputs) != count:
            return None
        return [unpack], [[o] for o in unpack.outputs]
    readers, pieces = [], [[] for _ in range(count)]
    for u in uses:
        get = u.user
        if get.kind != "aten::__getitem__" or u.offset != 0 or get.inputs[1].node.kind != "prim::Constant":
            return None
        index = constant_value(get.inputs[1].node)
        if not isinstance(index, int) or not -count <= index < count:
            return None  # the interpreter raises the error
        readers.append(get)
        pieces[index % count].append(get.output)
    return (readers, pieces) if readers else None


def split_chunks(block: Block) -> bool:
    """`prim::ConstantChunk`, and `aten::chunk`/`aten::unbind`/`aten::split` read by
    `prim::ListUnpack` or constant `__getitem__`s, become one `aten::slice` (`aten::select`
    for unbind) per piece: views that fuse."""
    changed = False
    for n in list(block.nodes()):
        lists = n.kind in ("aten::chunk", "aten::unbind") or _is_split(n)
        if n.kind != "prim::ConstantChunk" and not lists:
            continue
        found = _pieces(n)
        if found is None:
            continue
        dim, bounds = found
        if lists:
            read = _unpacked(n, len(bounds))
            if read is None:
                continue
            readers, targets = read
        else:
            if len(n.outputs) != len(bounds):
                continue
            readers, targets = [], [[o] for o in n.outputs]
        g = n.graph
        g.set_insert_point(n)
        d = g.insert_constant(dim)
        for (start, end), outs in zip(bounds, targets):
            if not outs:
                continue
            if n.kind == "aten::unbind":
                piece = g.insert_node(g.create("aten::select", [n.inputs[0], d, g.insert_constant(start)]))
            else:
                piece = g.insert_node(g.create("aten::slice", [n.inputs[0], d, g.insert_constant(start),
                                                               g.insert_constant(end), g.insert_constant(1)]))
            piece.output.type = outs[0].type
            for out in outs:
                out.replace_all_uses_with(piece.output)
        for reader in readers:
            reader.destroy()
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
    readers = [_in_block(u.user, node.owning_block)
               for o in node.outputs if isinstance(o.type, ListType) for u in o.uses]
    return lowers_as_program(build_subgraph([node] + list(dict.fromkeys(readers)))[0])


def _in_block(node: Node, block: Block) -> Node:
    """`node` or the node of `block` that holds it in a nested block."""
    while node.owning_block is not block:
        node = node.owning_block.owning_node
    return node


def _joins(program: list[Node], node: Node, read_outside: set) -> bool:
    """Whether a node that is no candidate by itself (it appends to a list the program builds,
    or yields a list that nodes outside read) lowers as part of `program`; one that changes a
    list the nodes between have read does not (it would run before them)."""
    if node.kind in ("prim::Constant", "prim::ListConstruct") or \
            not all(_number_or_list(o.type) for o in node.outputs):
        return False
    if read_outside and any(facts.has_tag(m.kind, "writes_first_input") or is_mutating(m)
                            for m in [node, *node.walk()]):
        return False
    return lowers_as_program(build_subgraph(program + [node])[0])


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
    read_outside: set = set()  # values of the program that nodes left out of it read
    for n in block.nodes():
        if n.kind == "prim::Constant":
            continue
        if is_program_candidate(n):
            if current and any(v in computed_after for v in used_values(n)):
                groups.append(current)
                current, computed_after, read_outside = [], set(), set()
            current.append(n)
        elif current and not any(v in computed_after for v in used_values(n)) and \
                _joins(current, n, read_outside):
            current.append(n)
        elif current and _fixes_order(n):
            groups.append(current)
            current, computed_after, read_outside = [], set(), set()
        elif current:
            computed_after.update(n.outputs)
            made = {o for m in current for o in m.outputs}
            read_outside.update(v for v in used_values(n) if v in made)
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
    """Group the lowerable nodes of a typed graph into prim::NativeGroup units (groups that
    differ only in a select's constant index share one, `shared_indices`)."""
    _TRIALS.seen = {}
    try:
        return partition_block(graph.block) | share_index_variants(graph)
    finally:
        _TRIALS.seen = None
