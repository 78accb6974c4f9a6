"""Remove mutation, mirroring PyTorch's RemoveMutation (remove_mutation.cpp). Lists first
(RemoveListMutation): `aten::append`, and `aten::insert` / `aten::_set_item` at a constant
position, on a list a `prim::ListConstruct` just built (nothing reads it in between) become
inputs of that ListConstruct. Then tensors (RemoveTensorMutation): an in-place op
`%y = aten::add_(%x, ...)` on a fresh tensor `%x` that nothing else aliases becomes
`%y2 = aten::add(%x, ...)`, and the uses of `%x` after it read `%y2`."""

from __future__ import annotations

from typing import Callable, Optional

from irjit.compiler.ir import Graph, Node, Value
from irjit.compiler.ir.constants import constant_value
from irjit.ops import facts, registry
from irjit.ops.types import TensorType

from .peephole_helpers import writes_first_input
from .registry import register_pass


def _may_alias_its_inputs(node) -> bool:
    return (facts.has_tag(node.kind, "may_alias_input") or facts.has_tag(node.kind, "view")
            or writes_first_input(node) or facts.has_tag(node.kind, "opaque")
            or facts.has_tag(node.kind, "call"))


def has_side_effect_or_alias(v: Value) -> bool:
    """PyTorch's hasSideEffectOrAlias: `v` is not a fresh tensor of its own (a graph or block
    input, a constant, an output of control flow, of a side-effecting or aliasing node)."""
    n = v.node
    if n.blocks or n.attr_kind("Subgraph") == "g" or facts.has_side_effects(n.kind):
        return True
    if n.kind in ("prim::Param", "prim::Constant"):
        return True
    return n.kind != "prim::ListConstruct" and _may_alias_its_inputs(n)


def _aliased_later(v: Value, node, later_views: bool = False) -> bool:
    """Whether another use of `v` may create an alias of it (a view, a container, a block
    output, a call), which a functional rewrite would silently disconnect. With `later_views`,
    uses after `node` in its block do not count (views, containers, writes): the rewrite makes
    them use the functional result, which holds what they would have seen; only aliases made
    before `node` would miss its write."""
    for use in v.uses:
        u = use.user
        if u is node or (use.offset == 0 and writes_first_input(u) and u.is_after(node)):
            continue  # later writes are redirected to the functional result
        if later_views and u.owning_block is node.owning_block and u.is_after(node) and not u.blocks:
            continue
        if u.kind == "prim::Return" and u.owning_block is not u.graph.block:
            return True
        if _may_alias_its_inputs(u) or facts.has_tag(u.kind, "control_flow"):
            return True
    return False


def _functional_kind(node) -> Optional[str]:
    kind = node.kind
    if not (kind.startswith("aten::") and kind.endswith("_") and not kind.endswith("__")):
        return None
    if len(node.outputs) != 1 or not node.inputs or not isinstance(node.inputs[0].type, TensorType):
        return None
    functional = kind[:-1]
    return functional if registry.is_registered(functional) else None


def _remove(graph: Graph, block, keep: Callable, later_views: bool) -> bool:
    changed = False
    for node in list(block.nodes()):
        for b in node.blocks:
            changed |= _remove(graph, b, keep, later_views)
        functional = _functional_kind(node)
        if functional is None or not keep(node):
            continue
        x = node.inputs[0]
        if has_side_effect_or_alias(x) or x.node.owning_block is not block or \
                _aliased_later(x, node, later_views):
            continue
        new = graph.create(functional, node.inputs)
        new.source, new.scope = node.source, node.scope
        new.insert_before(node)
        new.output.type = node.output.type
        x.replace_all_uses_after_node_with(node, new.output)
        node.output.replace_all_uses_with(new.output)
        node.destroy()
        changed = True
    return changed


def _constant_int(v: Value) -> Optional[int]:
    if v.node.kind != "prim::Constant":
        return None
    value = constant_value(v.node)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _fold_list_mutation(node: Node) -> bool:
    """Fold one list mutation into the ListConstruct that built its list, if that is safe:
    the mutation is the list's first use after it was built, in the same block (so moving the
    ListConstruct right before it changes nothing anyone reads)."""
    if not facts.has_tag(node.kind, "list_mutation") or not node.inputs:
        return False
    lst = node.inputs[0]
    build = lst.node
    if build.kind != "prim::ListConstruct" or build.owning_block is not node.owning_block:
        return False
    if any(u.user is not node and not u.user.is_after(node) for u in lst.uses):
        return False  # read (or written) between its construction and this mutation
    if node.kind == "aten::append":
        position = len(build.inputs)
    else:
        position = _constant_int(node.inputs[1])
        size = len(build.inputs)
        if position is None:
            return False
        if position < 0:
            position += size
        limit = size if node.kind == "aten::insert" else size - 1
        if not 0 <= position <= limit:
            return False
    build.move_before(node)
    element = node.inputs[-1]
    if node.kind == "aten::_set_item":
        build.replace_input(position, element)
    else:
        build.insert_input(position, element)
    for o in node.outputs:
        o.replace_all_uses_with(lst)
    node.destroy()
    return True


def _remove_lists(block) -> bool:
    changed = False
    for node in list(block.nodes()):
        for b in node.blocks:
            changed |= _remove_lists(b)
        changed |= _fold_list_mutation(node)
    return changed


def remove_list_mutation(graph: Graph) -> bool:
    """PyTorch's RemoveListMutation: appends (and constant-position inserts and set-items) on a
    list right after its ListConstruct become that ListConstruct's inputs."""
    return _remove_lists(graph.block)


def remove_tensor_mutation(graph: Graph, keep: Callable = lambda node: True, later_views: bool = False) -> bool:
    """RemoveTensorMutation over the whole graph, rewriting only the in-place nodes `keep`
    accepts; `later_views` (not PyTorch's pass) also rewrites ops whose tensor is aliased after them."""
    return _remove(graph, graph.block, keep, later_views)


@register_pass("remove_mutation")
def run(graph: Graph) -> bool:
    """PyTorch's RemoveMutation: list mutations fold into their ListConstruct, and in-place ops
    on fresh, unaliased tensors become functional."""
    changed = remove_list_mutation(graph)
    return remove_tensor_mutation(graph) or changed
