"""List and dict idioms on unmutated `prim::ListConstruct`/`prim::DictConstruct` values
(len, __getitem__, ListUnpack, list + list, slice with constant bounds), mirroring PyTorch's
PeepholeOptimizeListIdioms (peephole_list_idioms.cpp) and PeepholeOptimizeDictIdioms.

Option `refine_list_len` is accepted; PyTorch's ListLenRefiner (lengths learned from
`len(x) == c` branches) is not implemented.
"""

from __future__ import annotations

from irjit.compiler.ir import Graph
from irjit.ops.types import ListType

from .peephole_helpers import _MISSING, const_value, has_writers
from .registry import register_pass

class _ListIdioms:
    def __init__(self, graph: Graph):
        self.graph = graph
        self.mutated: set = set()
        self._collect(graph.block)

    def _check(self, v) -> None:
        if isinstance(v.type, ListType) and has_writers(v):
            self.mutated.add(v)

    def _collect(self, block) -> None:
        for v in block.inputs:
            self._check(v)
        for n in block.nodes():
            for v in n.outputs:
                self._check(v)
            for b in n.blocks:
                self._collect(b)

    def _new_list(self, node, items, like):
        g = self.graph
        g.set_insert_point(node)
        lc = g.insert("prim::ListConstruct", list(items), output_types=[like.type])
        like.replace_all_uses_with(lc.output)
        if like in self.mutated:
            self.mutated.add(lc.output)

    def run(self, block) -> bool:  # noqa: C901 - one case per idiom
        changed = False
        for node in block.nodes():
            for b in node.blocks:
                changed |= self.run(b)
            if not node.inputs or not isinstance(node.inputs[0].type, ListType):
                continue
            first = node.inputs[0]
            if first in self.mutated or first.node.kind != "prim::ListConstruct":
                continue
            items = first.node.inputs
            k = node.kind
            if k == "aten::len":
                self.graph.set_insert_point(node)
                node.output.replace_all_uses_with(self.graph.insert_constant(len(items)))
                changed = True
            elif k == "aten::__getitem__":
                index = const_value(node.inputs[1], None)
                if isinstance(index, int) and -len(items) <= index < len(items):
                    node.output.replace_all_uses_with(items[index])
                    changed = True
            elif k == "prim::ListUnpack":
                if len(items) == len(node.outputs):
                    for out, item in zip(node.outputs, items):
                        out.replace_all_uses_with(item)
                        changed = True
            elif k == "aten::add":
                if len(node.inputs) != 2:
                    continue
                second = node.inputs[1]
                if second in self.mutated or second.node.kind != "prim::ListConstruct":
                    continue
                self._new_list(node, list(items) + list(second.node.inputs), node.output)
                changed = True
            elif k == "aten::slice" and len(node.inputs) == 4:
                bounds = [const_value(v) for v in node.inputs[1:]]
                if any(b is _MISSING for b in bounds):
                    continue
                start, stop, step = (b if isinstance(b, int) else None for b in bounds)
                if step == 0:
                    continue  # a run-time error, not ours to fold away
                # TorchScript's list slicing is Python's (None bounds depend on the step's sign)
                self._new_list(node, list(items)[slice(start, stop, step)], node.output)
                changed = True
        return changed


def optimize_list_idioms(graph: Graph) -> bool:
    return _ListIdioms(graph).run(graph.block)


def optimize_dict_idioms(graph: Graph) -> bool:
    """`d[k]` and `len(d)` of an unmutated DictConstruct with constant keys."""
    changed = False
    for node in list(graph.walk()):
        if node.kind not in ("aten::__getitem__", "aten::len") or not node.inputs:
            continue
        d = node.inputs[0]
        if d.node.kind != "prim::DictConstruct" or has_writers(d):
            continue
        keys = [const_value(v) for v in d.node.inputs[0::2]]
        if any(k is _MISSING for k in keys) or len(set(map(repr, keys))) != len(keys):
            continue
        if node.kind == "aten::len":
            graph.set_insert_point(node)
            node.output.replace_all_uses_with(graph.insert_constant(len(keys)))
            changed = True
        else:
            key = const_value(node.inputs[1])
            if key is not _MISSING and key in keys:
                node.output.replace_all_uses_with(d.node.inputs[2 * keys.index(key) + 1])
                changed = True
    return changed


@register_pass("peephole_list_idioms")
def run(graph: Graph, refine_list_len: bool = False) -> bool:
    """PyTorch's PeepholeOptimizeListIdioms (no DCE afterwards, as in PyTorch)."""
    return optimize_list_idioms(graph)
