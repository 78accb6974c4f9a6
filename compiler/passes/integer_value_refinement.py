"""Refine integers from comparisons, mirroring PyTorch's RefineIntegerValues
(integer_value_refinement.cpp, value_refinement_utils.cpp): where `x == 4` (or `x != 4`) is known
to hold (inside the If block it guards, or after an If whose other block always raises), uses
of `x` read the constant 4 instead."""

from __future__ import annotations

from typing import Optional

from irjit.compiler.ir import Graph
from irjit.compiler.ir.constants import constant_value
from irjit.ops.types import BOOL, INT

from .registry import register_pass


class _Mapping:
    """PyTorch's BooleanRefinementMapping: the refinements that hold when a bool is true / false."""

    def __init__(self, true: Optional[dict] = None, false: Optional[dict] = None):
        self.true = true or {}
        self.false = false or {}

    def intersect(self, other: "_Mapping") -> "_Mapping":
        return _Mapping(_intersect(self.true, other.true), _intersect(self.false, other.false))


def _intersect(a: dict, b: dict) -> dict:
    return {v: c for v, c in a.items() if v in b and b[v] == c}


def _const(v, type_):
    if v.node.kind != "prim::Constant" or v.type != type_:
        return None
    return constant_value(v.node)


def _is_int_compare(n) -> bool:
    return (n.kind in ("aten::eq", "aten::ne") and len(n.inputs) == 2
            and all(v.type == INT for v in n.inputs))


def _is_bool_compare(n) -> bool:
    return (n.kind in ("aten::eq", "aten::ne") and len(n.inputs) == 2
            and all(v.type == BOOL for v in n.inputs))


def _has_candidates(block) -> bool:
    for n in block.nodes():
        if _is_int_compare(n):
            for i in (0, 1):
                if n.inputs[i].node.kind == "prim::Constant" and len(n.inputs[1 - i].uses) > 1:
                    return True
        if any(_has_candidates(b) for b in n.blocks):
            return True
    return False


def _dominates(definition, node) -> bool:
    """Whether the value defined by `definition` is in scope at `node`."""
    a = node
    while a is not None:
        if a.owning_block is definition.owning_block:
            return definition.kind == "prim::Param" or definition.is_before(a)
        a = a.owning_block.owning_node
    return definition.kind == "prim::Param" and definition.owning_block is node.graph.block


class _Refiner:
    def __init__(self, graph: Graph):
        self.graph = graph
        self.active: list[dict] = []
        self.info: dict = {}
        self.throwing: set = set()
        self.changed = False

    def find(self, v) -> Optional[int]:
        for refinements in self.active:
            if v in refinements:
                return refinements[v]
        return None

    def _constant_before(self, node, value: int):
        c = self.graph.create("prim::Constant")
        c.set_attr("value", "i", value)
        c.output.type = INT
        c.insert_before(node)
        return c.output

    def refine(self, block, refinements: dict) -> dict:
        self.active.append(refinements)
        for n in list(block.nodes()):
            if _is_int_compare(n):
                for i in (0, 1):
                    c = _const(n.inputs[i], INT)
                    if c is not None:
                        r = {n.inputs[1 - i]: c}
                        self.info[n.output] = _Mapping(r, None) if n.kind == "aten::eq" else _Mapping(None, r)
            for v in list(n.inputs):
                if v.type != INT:
                    continue
                value = self.find(v)
                if value is not None and v in n.inputs:
                    c = self._constant_before(n, value)
                    for j, u in enumerate(n.inputs):
                        if u is v:
                            n.replace_input(j, c)
                    self.changed = True
            if n.kind == "prim::If":
                cond = self.info.get(n.inputs[0])
                true_refs = self.refine(n.blocks[0], dict(cond.true) if cond else {})
                false_refs = self.refine(n.blocks[1], dict(cond.false) if cond else {})
                self._remove_if_outputs(n, true_refs, false_refs)
                self._join(n, refinements, true_refs, false_refs)
            else:
                self._common_operators(n)
        ret = block.return_node
        for i, v in enumerate(list(block.outputs)):
            if v.type != INT:
                continue
            value = self.find(v)
            if value is not None:
                ret.replace_input(i, self._constant_before(ret, value))
                self.changed = True
        self.active.pop()
        return refinements

    def _remove_if_outputs(self, if_node, true_refs: dict, false_refs: dict) -> None:
        for k in (0, 1):
            block, other = if_node.blocks[k], if_node.blocks[1 - k]
            other_refs = false_refs if k == 0 else true_refs
            for i in range(len(if_node.outputs)):
                out = block.outputs[i]
                if out.type != INT or not _dominates(out.node, if_node):
                    continue
                other_const = _const(other.outputs[i], INT)
                if other_const is None or out.node.kind == "prim::Constant":
                    continue
                refined = self.find(out)
                if refined is None:
                    refined = other_refs.get(out)
                if refined is not None and refined == other_const:
                    if_node.outputs[i].replace_all_uses_with(out)
                    self.changed = True

    def _join(self, if_node, current: dict, true_refs: dict, false_refs: dict) -> None:
        then_b, else_b = if_node.blocks
        true_throws, false_throws = then_b in self.throwing, else_b in self.throwing
        if true_throws or false_throws:
            if true_throws and false_throws:
                self.throwing.add(if_node.owning_block)
                return
            current.update(false_refs if true_throws else true_refs)
            live = else_b if true_throws else then_b
            for i, out in enumerate(if_node.outputs):
                if live.outputs[i] in self.info:
                    self.info[out] = self.info[live.outputs[i]]
            return
        for i, out in enumerate(if_node.outputs):
            if out.type != BOOL:
                return
            tv, fv = then_b.outputs[i], else_b.outputs[i]
            tc, fc = _const(tv, BOOL), _const(fv, BOOL)
            if tv not in self.info and fv not in self.info and tc is None and fc is None:
                return
            # PyTorch reads the other output's mapping with `map[v]`, which adds an empty one
            mapping = _Mapping()
            if tc is not None:
                f_map = self.info.setdefault(fv, _Mapping())
                mapping = (_Mapping(None, {**f_map.false, **false_refs}) if tc
                           else _Mapping({**f_map.true, **false_refs}, None))
            elif fc is not None:
                t_map = self.info.setdefault(tv, _Mapping())
                mapping = (_Mapping(None, {**t_map.false, **true_refs}) if fc
                           else _Mapping({**t_map.true, **true_refs}, None))
            if tv in self.info and fv in self.info:
                mapping = self.info[tv].intersect(self.info[fv])
            self.info[out] = mapping

    def _common_operators(self, n) -> None:
        if n.kind == "prim::RaiseException":
            self.throwing.add(n.owning_block)
        elif n.kind == "aten::__not__" and n.inputs[0].type == BOOL:
            if n.inputs[0] in self.info:
                m = self.info[n.inputs[0]]
                self.info[n.output] = _Mapping(m.false, m.true)
        elif _is_bool_compare(n):
            for i in (0, 1):
                if n.inputs[i].node.kind != "prim::Constant" or n.inputs[1 - i] not in self.info:
                    continue
                c, m = _const(n.inputs[i], BOOL), self.info[n.inputs[1 - i]]
                negated = (not c and n.kind == "aten::eq") or (c and n.kind == "aten::ne")
                self.info[n.output] = _Mapping(m.false, m.true) if negated else _Mapping(m.true, m.false)


@register_pass("integer_value_refinement")
def run(graph: Graph) -> bool:
    """PyTorch's RefineIntegerValues: uses of `x` where `x == c` is known become the constant c."""
    if not _has_candidates(graph.block):
        return False
    refiner = _Refiner(graph)
    refiner.refine(graph.block, {})
    return refiner.changed
