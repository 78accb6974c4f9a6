"""Peephole simplifications, mirroring PyTorch's PeepholeOptimize (peephole.cpp and the passes
it runs: list/dict idioms, the alias-sensitive and non-tensor peepholes), then DCE.

Option `disable_shape_peepholes` turns off the rewrites that read tensor types (sizes, dtype,
device), as PyTorch's flag of that name does.
"""

from __future__ import annotations

from irjit.compiler.ir import Graph, Node
from irjit.compiler.ir.constants import Device
from irjit.ops import facts
from irjit.ops.dtypes import SCALAR_TYPE_BY_NAME, is_complex_name, is_floating_name
from irjit.ops.types import BOOL, INT, NONE, ListType, OptionalType, TensorType

from ._side_effects import AliasDb
from .peephole_helpers import (const_int, const_value, eliminate_dead_code, has_writers,
                               matches, must_be_none, must_not_be_none, tensor_type)
from .peephole_list_idioms import optimize_dict_idioms, optimize_list_idioms
from .registry import register_pass


def _replace_with_constant(node: Node, value) -> None:
    g = node.graph
    g.set_insert_point(node)
    node.output.replace_all_uses_with(g.insert_constant(value))


class _Peephole:
    def __init__(self, graph: Graph, shape_peepholes: bool):
        self.graph = graph
        self.shape = shape_peepholes
        self.changed = False

    def block(self, block) -> None:
        for node in block.nodes():
            for b in node.blocks:
                self.block(b)
            if node.kind != "prim::Constant":
                for out in node.outputs:
                    if out.type == NONE:
                        self.graph.set_insert_point(node)
                        out.replace_all_uses_with(self.graph.insert_constant(None))
            self.node(node)

    def node(self, node: Node) -> None:  # noqa: C901 - one case per rewrite, as in peephole.cpp
        k, shape = node.kind, self.shape
        if matches(node, "aten::_grad_sum_to_size", "Tensor", "int[]?"):
            if must_be_none(node.inputs[1]):
                node.output.replace_all_uses_with(node.inputs[0])
                self.changed = True
            else:
                for use in list(node.output.uses):
                    u = use.user
                    if matches(u, "aten::_grad_sum_to_size", "Tensor", "int[]?") and \
                            u.inputs[1].type == ListType(INT):
                        u.replace_input(0, node.inputs[0])
                        self.changed = True
        elif matches(node, "aten::expand", "Tensor", "int[]", "bool"):
            size = const_value(node.inputs[1], None)
            tt = tensor_type(node.inputs[0])
            if shape and size is not None and tt is not None and tt.complete_sizes() is not None \
                    and tuple(size) == tt.complete_sizes():
                node.output.replace_all_uses_with(node.inputs[0])
                self.changed = True
        elif matches(node, "aten::t", "Tensor"):
            inner = node.inputs[0].node
            if matches(inner, "aten::t", "Tensor"):
                node.output.replace_all_uses_with(inner.inputs[0])
                self.changed = True
        elif shape and matches(node, "aten::type_as", "Tensor", "Tensor"):
            a, b = tensor_type(node.inputs[0]), tensor_type(node.inputs[1])
            if a.scalar_type is not None and a.scalar_type == b.scalar_type and \
                    a.device is not None and a.device == b.device:
                node.output.replace_all_uses_with(node.inputs[0])
                self.changed = True
        elif facts.has_tag(k, "tensor_to_number") and len(node.inputs) == 1:
            if node.inputs[0].node.kind == "prim::NumToTensor":
                node.output.replace_all_uses_with(node.inputs[0].node.inputs[0])
                self.changed = True
        elif shape and matches(node, "aten::size", "Tensor"):
            sizes = tensor_type(node.inputs[0]).complete_sizes()
            if sizes is not None:
                _replace_with_constant(node, list(sizes))
                self.changed = True
        elif shape and k == "aten::len" and len(node.inputs) == 1 and \
                matches(node.inputs[0].node, "aten::size", "Tensor"):
            tt = tensor_type(node.inputs[0].node.inputs[0])
            if tt.rank is not None and len(node.inputs[0].uses) == 1:
                _replace_with_constant(node, tt.rank)
                self.changed = True
        elif shape and matches(node, "aten::size", "Tensor", "int"):
            tt = tensor_type(node.inputs[0])
            index = const_int(node.inputs[1])
            if tt.rank is not None and index is not None:
                i = index + tt.rank if index < 0 else index
                if 0 <= i < tt.rank and tt.sizes[i] is not None:
                    _replace_with_constant(node, tt.sizes[i])
                    self.changed = True
        elif shape and matches(node, "aten::is_floating_point", "Tensor"):
            st = tensor_type(node.inputs[0]).scalar_type
            if st is not None:
                _replace_with_constant(node, is_floating_name(st))
                self.changed = True
        elif shape and matches(node, "aten::is_complex", "Tensor"):
            st = tensor_type(node.inputs[0]).scalar_type
            if st is not None:
                _replace_with_constant(node, is_complex_name(st))
                self.changed = True
        elif shape and matches(node, "prim::dtype", "Tensor"):
            st = tensor_type(node.inputs[0]).scalar_type
            if st in SCALAR_TYPE_BY_NAME:
                _replace_with_constant(node, SCALAR_TYPE_BY_NAME[st].code)
                self.changed = True
        elif shape and matches(node, "prim::device", "Tensor"):
            dev = tensor_type(node.inputs[0]).device
            if dev is not None:
                _replace_with_constant(node, Device(dev))
                self.changed = True
        elif shape and matches(node, "aten::dim", "Tensor"):
            rank = tensor_type(node.inputs[0]).rank
            if rank is not None:
                _replace_with_constant(node, rank)
                self.changed = True
        elif shape and matches(node, "prim::is_cuda", "Tensor"):
            dev = tensor_type(node.inputs[0]).device
            if dev is not None:
                _replace_with_constant(node, dev.startswith("cuda"))
                self.changed = True


# ---- PeepholeOptimizeAliasSensitive


class _OutputReplacer:
    """PyTorch's `tryToReplaceOutputWithInput`: never make two values that both escape the
    graph (an input, an output or something contained in one) alias each other, and do not
    touch values whose aliasing an earlier replacement already changed (they are *stale*:
    the alias analysis, built once, no longer describes them)."""

    def __init__(self, graph: Graph):
        self.db = AliasDb(graph)
        self.stale: list = []

    def __call__(self, node: Node) -> bool:
        inp, out = node.inputs[0], node.output
        if has_writers(inp) or has_writers(out) or \
                not self.db.safe_to_change_aliasing([inp], [out]) or \
                self.db.may_contain_alias([inp, out], self.stale):
            return False
        out.replace_all_uses_with(inp)
        self.stale += [inp, out]
        return True


def _alias_sensitive(block, shape: bool, replace: _OutputReplacer) -> bool:
    changed = False
    for node in block.nodes():
        for b in node.blocks:
            changed |= _alias_sensitive(b, shape, replace)
        if facts.has_tag(node.kind, "convolution"):
            dim_uses = [u for u in node.output.uses if u.user.kind == "aten::dim"]
            if dim_uses and not has_writers(node.output):
                for u in dim_uses:
                    _replace_with_constant(u.user, facts.convolution_input_rank(node.kind))
                changed = True
        elif (shape and matches(node, "aten::add", "Tensor", "Scalar", "Scalar")) or \
                matches(node, "aten::sub", "Tensor", "Scalar", "Scalar"):
            other, alpha = const_value(node.inputs[1], None), const_value(node.inputs[2], None)
            if other is None or alpha is None:
                continue
            if not _is_float_tensor(node.inputs[0]) and \
                    not (node.inputs[1].type == INT and node.inputs[2].type == INT):
                continue
            if alpha == 1 and other == 0:
                changed |= replace(node)
        elif (shape and matches(node, "aten::mul", "Tensor", "Scalar")) or \
                matches(node, "aten::div", "Tensor", "Scalar"):
            other = const_value(node.inputs[1], None)
            if other is None:
                continue
            if not _is_float_tensor(node.inputs[0]) and node.inputs[1].type != INT:
                continue
            if other == 1:
                changed |= replace(node)
    return changed


def _is_float_tensor(v) -> bool:
    st = v.type.scalar_type if isinstance(v.type, TensorType) else None
    return is_floating_name(st or "Float") or is_complex_name(st or "Float")


# ---- PeepholeOptimizeNonTensor

def _arith_constant(node: Node):
    """checkArithNode: the int constant operand of a binary int op (commuting it to the right)."""
    if len(node.inputs) != 2 or node.inputs[0].type != INT or node.inputs[1].type != INT:
        return None
    if node.kind in ("aten::mul", "aten::add"):
        c = const_int(node.inputs[0])
        if c is not None:
            a, b = node.inputs
            node.replace_input(0, b)
            node.replace_input(1, a)
            return c
    return const_int(node.inputs[1])


def _non_tensor(block) -> bool:  # noqa: C901
    changed = False
    for node in block.nodes():
        for b in node.blocks:
            changed |= _non_tensor(b)
        k = node.kind
        if k == "prim::If" and len(node.blocks) == 2:
            then_b, else_b = node.blocks
            for i, out in enumerate(node.outputs):
                if out.type != BOOL:
                    continue
                t = const_value(then_b.outputs[i], None)
                f = const_value(else_b.outputs[i], None)
                if t is True and f is False:
                    out.replace_all_uses_with(node.inputs[0])
                    changed = True
            for i, out in enumerate(node.outputs):
                a, b = then_b.outputs[i].type, else_b.outputs[i].type
                if isinstance(out.type, OptionalType) and not isinstance(a, OptionalType) \
                        and not isinstance(b, OptionalType) and a == b and a != NONE:
                    out.type = a
                    changed = True
        elif k in ("aten::__is__", "aten::__isnot__"):
            for i in (0, 1):
                if must_be_none(node.inputs[i]) and must_not_be_none(node.inputs[1 - i]):
                    _replace_with_constant(node, k == "aten::__isnot__")
                    changed = True
        elif k in ("prim::unchecked_unwrap_optional", "aten::_unwrap_optional"):
            if must_not_be_none(node.inputs[0]):
                node.output.replace_all_uses_with(node.inputs[0])
                changed = True
        elif k == "prim::unchecked_cast":
            a, b = node.inputs[0].type, node.output.type
            if a == b or (isinstance(a, TensorType) and isinstance(b, TensorType)):
                node.output.replace_all_uses_with(node.inputs[0])
                changed = True
        elif k in ("aten::Int", "aten::ceil") and len(node.inputs) == 1 and node.inputs[0].type == INT:
            node.output.replace_all_uses_with(node.inputs[0])
            changed = True
        elif k in ("aten::ne", "aten::eq"):
            if len(node.inputs) == 2 and node.inputs[0] is node.inputs[1] and \
                    node.inputs[0].type in (INT,):
                _replace_with_constant(node, k == "aten::eq")
                changed = True
        elif facts.has_tag(k, "right_identity_one"):
            c = _arith_constant(node)
            if c == 1:
                node.output.replace_all_uses_with(node.inputs[0])
                changed = True
        elif k in ("aten::add", "aten::sub"):
            changed |= _simplify_add_sub(node)
    return changed


def _simplify_add_sub(node: Node) -> bool:
    c = _arith_constant(node)
    if c is None:
        return False
    if c == 0:
        node.output.replace_all_uses_with(node.inputs[0])
        return True
    dep = node.inputs[0].node
    if dep.kind not in ("aten::add", "aten::sub"):
        return False
    delta = _arith_constant(dep)
    if delta is None:
        return False
    merged = c + delta if dep.kind == node.kind else c - delta
    if merged == 0:
        node.output.replace_all_uses_with(dep.inputs[0])
    else:
        node.replace_input(0, dep.inputs[0])
        node.graph.set_insert_point(node)
        node.replace_input(1, node.graph.insert_constant(merged))
    return True


def peephole_optimize(graph: Graph, disable_shape_peepholes: bool = False) -> bool:
    p = _Peephole(graph, not disable_shape_peepholes)
    p.block(graph.block)
    changed = p.changed
    changed |= optimize_list_idioms(graph)
    changed |= optimize_dict_idioms(graph)
    changed |= _alias_sensitive(graph.block, not disable_shape_peepholes, _OutputReplacer(graph))
    changed |= _non_tensor(graph.block)
    if changed:
        eliminate_dead_code(graph)
    return changed


@register_pass("peephole")
def run(graph: Graph, disable_shape_peepholes: bool = False) -> bool:
    """PyTorch's PeepholeOptimize: small local rewrites (shape ones unless disabled), then DCE."""
    return peephole_optimize(graph, bool(int(disable_shape_peepholes)))
