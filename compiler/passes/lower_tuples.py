"""Tuple lowering: flatten tuple-typed inputs, outputs, block parameters and block results
into their elements and remove TupleConstruct/TupleUnpack/TupleIndex/TupleSlice
(PyTorch's LowerAllTuples)."""

from __future__ import annotations

from typing import Optional

from irjit.compiler.ir import Block, Graph, Node, TupleType
from irjit.compiler.ir.constants import constant_value
from irjit.ops import facts

from .constant_propagation import insert_constant
from .eliminate_dead_code import eliminate_dead_code
from .manager import PassError
from .registry import register_pass


class TupleLoweringError(PassError):
    """A tuple that cannot be flattened (not built by a visible TupleConstruct, or used by an op
    that does not forward tuples)."""


def _remove_tuple_node(n: Node) -> None:
    construct = n.inputs[0].node
    if construct.kind != "prim::TupleConstruct":
        raise TupleLoweringError(f"{n.kind} not matched to tuple construct")
    g = n.graph
    if n.kind == "prim::TupleUnpack":
        for o, v in zip(n.outputs, construct.inputs):
            o.replace_all_uses_with(v)
    elif n.kind == "prim::TupleIndex":
        idx = n.inputs[1]
        if idx.node.kind != "prim::Constant":
            raise TupleLoweringError("tuple index with non-constant index")
        i = constant_value(idx.node)
        size = len(construct.inputs)
        i = i + size if i < 0 else i
        if 0 <= i < size:
            n.output.replace_all_uses_with(construct.inputs[i])
    else:  # TupleSlice
        items = construct.inputs[n.attr("beg"):n.attr("end")]
        t = g.create("prim::TupleConstruct", items,
                     output_types=[TupleType(tuple(v.type for v in items))])
        t.insert_before(n)
        n.output.replace_all_uses_with(t.output)


def _remove_tuple_constant(n: Node) -> None:
    if n.kind != "prim::Constant" or not isinstance(n.output.type, TupleType):
        return
    g = n.graph
    g.set_insert_point(n)
    elems = [insert_constant(g, x) for x in constant_value(n)]
    t = g.insert("prim::TupleConstruct", elems, output_types=[n.output.type])
    for e in elems:
        _remove_tuple_constant(e.node)
    n.output.replace_all_uses_with(t.output)
    g.set_insert_point(g.block)


def _visit(n: Node, insert_point: Optional[Node]) -> None:
    g = n.graph
    if n.kind == "prim::TupleConstruct":
        return  # dead once its unpacks are replaced
    if facts.has_tag(n.kind, "tuple_access"):
        _remove_tuple_node(n)
        return
    i = 0
    while i < len(n.inputs):  # op(a, tup, b) -> op(a, t0, t1, b)
        v = n.inputs[i]
        if isinstance(v.type, TupleType):
            if not facts.has_tag(n.kind, "tuple_forwarding"):
                raise TupleLoweringError(f"tuple appears in op that does not forward tuples, "
                                         f"unsupported kind: {n.kind}")
            if v.node.kind != "prim::TupleConstruct":
                raise TupleLoweringError("tuple use not matched to tuple construct")
            for j, elem in enumerate(v.node.inputs):
                n.insert_input(i + 1 + j, elem)
            n.remove_input(i)
        else:
            i += 1
    for b in n.blocks:
        _lower_block(b)
    i = 0
    while i < len(n.outputs):  # (a, tup, c) -> (a, t0, t1, c) and tup = (t0, t1) after n
        out = n.outputs[i]
        if not out.uses:
            i += 1
            continue
        t = out.type
        if isinstance(t, TupleType):
            if not facts.has_tag(n.kind, "tuple_forwarding"):
                raise TupleLoweringError(f"tuple appears in op that does not forward tuples, "
                                         f"unsupported kind: {n.kind}")
            for j, et in enumerate(t.elems):
                n.insert_output(i + 1 + j, et)
            tup = g.create("prim::TupleConstruct", n.outputs[i + 1:i + 1 + len(t.elems)],
                           output_types=[t])
            tup.insert_before(insert_point)
            insert_point = tup
            out.replace_all_uses_with(tup.output)
            n.erase_output(i)
        else:
            i += 1


def _lower_block(block: Block) -> None:
    _visit(block.param_node, block.first_node)
    for n in block.nodes():
        nxt = n.next
        _remove_tuple_constant(n)
        _visit(n, nxt)
    _visit(block.return_node, None)


@register_pass("lower_tuples")
def run(graph: Graph) -> bool:
    """Flatten tuples in values, blocks and graph outputs into their elements (PyTorch's LowerAllTuples)."""
    before = str(graph)
    _lower_block(graph.block)
    eliminate_dead_code(graph)
    for n in graph.walk():
        for o in n.outputs:
            if isinstance(o.type, TupleType):
                raise TupleLoweringError("Couldn't lower all tuples.")
    return str(graph) != before
