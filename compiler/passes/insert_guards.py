"""Turn a profiled graph (`prim::profile` nodes with recorded `profiled_type`s) into a guarded,
specialized one, as PyTorch's profiling executor does on its optimizing run.

`style="typecheck"` (PyTorch 2.x): a `prim::TypeCheck[types=[...]]` (with `requires_grad_only=1`
a `prim::RequiresGradCheck`) over the profiled graph inputs feeds a `prim::If` whose true
branch holds the specialized code (profile nodes removed, checked inputs typed from their
profiles) and whose false branch calls `prim::Constant[name="fallback_function", fallback=1]`
through `prim::CallFunction` + `prim::TupleUnpack`; the unoptimized graph is left in
`graph.fallback_functions["fallback_function"]`.
`style="bailout"` (insert_guards.cpp + bailout_graph.cpp): each profiled value gets one
`prim::BailOut[index=k](%template, %value, <live values>)` right after its definition, fed by
`%t : int = prim::BailoutTemplate_0()` whose Subgraph is the unoptimized graph with the same
BailOut nodes (see `bailout_template`).
"""

from __future__ import annotations

from typing import Optional

from irjit.compiler.ir import Block, Graph, Node, Value  # noqa: F401
from irjit.ops.types import BOOL, FUNCTION, INT, TENSOR, TensorType, TupleType, merge_profiled

from .registry import OneOf, register_pass


def profiled_type(v: Value) -> Optional[TensorType]:
    """The merged observed type of all profile nodes on `v`, or None when never observed."""
    seen = None
    for use in v.uses:
        p = use.user
        if p.kind != "prim::profile" or not p.has_attr("profiled_type"):
            continue
        t = p.attr("profiled_type")
        if not isinstance(t, TensorType) or t.scalar_type is None and t.sizes is None:
            continue
        seen = t if seen is None else merge_profiled(seen, t)
    return seen


def remove_profile_nodes(block: Block) -> None:
    for n in list(block.nodes()):
        for b in n.blocks:
            remove_profile_nodes(b)
        if n.kind in ("prim::profile", "prim::profile_ivalue"):
            if n.inputs and n.outputs:
                n.output.replace_all_uses_with(n.inputs[0])
            n.destroy()


def fallback_graph(graph: Graph) -> Graph:
    """A fallback function's graph: the unprofiled graph, returning its outputs as one tuple."""
    g = graph.copy()
    remove_profile_nodes(g.block)
    outs = list(g.outputs)
    tup = TupleType(tuple(TENSOR if isinstance(o.type, TensorType) else o.type for o in outs))
    g.set_insert_point(g.return_node)
    t = g.insert("prim::TupleConstruct", outs, output_types=[tup]).output
    while g.outputs:
        g.erase_output(0)
    g.register_output(t)
    return g


def insert_typecheck(graph: Graph, requires_grad_only: bool = False) -> bool:
    checked = [(v, profiled_type(v)) for v in graph.inputs if isinstance(v.type, TensorType)]
    checked = [(v, t) for v, t in checked if t is not None]
    if not checked:
        return False
    fallback = fallback_graph(graph)
    g = graph
    g.set_insert_point(g.block.first_node)
    kind = "prim::RequiresGradCheck" if requires_grad_only else "prim::TypeCheck"
    check = g.insert(kind, [v for v, _ in checked],
                     output_types=[t.with_(undefined=None) for _, t in checked] + [BOOL])
    attr_types = [TENSOR.with_(requires_grad=t.requires_grad) if requires_grad_only
                  else t.with_(undefined=None) for _, t in checked]
    check.set_attr("types", "tys", tuple(attr_types))
    outs = list(g.outputs)
    vif = g.create("prim::If", [check.outputs[-1]],
                   output_types=[TENSOR if isinstance(o.type, TensorType) else o.type for o in outs])
    vif.insert_after(check)
    then_b, else_b = vif.add_block(), vif.add_block()
    for n in list(g.nodes()):
        if n is not check and n is not vif:
            n.move_before(then_b.return_node)
    for v, out in zip([v for v, _ in checked], check.outputs):
        for use in list(v.uses):
            if use.user is not check and use.user.kind != "prim::CallFunction":
                use.user.replace_input(use.offset, out)
    for o in outs:
        then_b.register_output(o)
    remove_profile_nodes(then_b)
    f = g.create("prim::Constant", output_types=[FUNCTION])
    f.set_attr("name", "s", "fallback_function")
    f.set_attr("fallback", "i", 1)
    else_b.append_node(f)
    tup = TupleType(tuple(TENSOR if isinstance(o.type, TensorType) else o.type for o in outs))
    call = g.create("prim::CallFunction", [f.output] + list(g.inputs), output_types=[tup])
    else_b.append_node(call)
    unpack = else_b.append_node(g.create("prim::TupleUnpack", [call.output],
                                         output_types=list(tup.elems)))
    for o in unpack.outputs:
        else_b.register_output(o)
    for i, o in enumerate(vif.outputs):
        g.return_node.replace_input(i, o)
    g.fallback_functions = {"fallback_function": fallback}
    return True


def insert_bailouts(graph: Graph) -> bool:
    from .bailout_template import build_template
    values = []
    for n in [graph.param_node] + list(graph.walk()):
        for v in n.outputs:
            if isinstance(v.type, TensorType) and profiled_type(v) is not None:
                values.append(v)
    if not values:
        return False
    g = graph
    g.set_insert_point(g.block.first_node)
    template = g.insert("prim::BailoutTemplate", output_types=[INT])
    param_point = template
    for k, v in enumerate(values):
        t = profiled_type(v).with_(undefined=None)
        where = param_point if v.node.kind == "prim::Param" else v.node
        live = [x for x in _live_after(where, v)]
        b = g.create("prim::BailOut", [template.output, v] + live, output_types=[t])
        b.set_attr("index", "i", k)
        b.insert_after(where)
        if v.node.kind == "prim::Param":
            param_point = b
        for use in list(v.uses):
            u = use.user
            if u is not b and (u.kind == "prim::Return" or u.is_after(b)):
                u.replace_input(use.offset, b.output)
    remove_profile_nodes(g.block)
    template.set_attr("Subgraph", "g", build_template(g, template.output))
    return True


def _live_after(point: Node, guarded: Value) -> list:
    """Values defined at or before `point` (in its block and enclosing ones) used after it."""
    block = point.owning_block
    defined = list(block.graph.inputs) if block.owning_node is None else list(block.inputs)
    n = block.first_node
    while True:
        defined.extend(n.outputs)
        if n is point:
            break
        n = n.next
    live = []
    for v in defined:
        if v is guarded or v.node.kind in ("prim::Constant", "prim::BailoutTemplate"):
            continue
        if any(u is not point and (u.kind == "prim::Return" or u.is_after(point))
               for u in _real_users(v)):
            live.append(v)
    return live


def _real_users(v: Value) -> list:
    """The nodes using `v`, looking through the prim::profile nodes that will be removed."""
    users = []
    for use in v.uses:
        if use.user.kind == "prim::profile" and use.user.outputs:
            users.extend(_real_users(use.user.output))
        else:
            users.append(use.user)
    return users


@register_pass("insert_guards", valid={"style": OneOf(("typecheck", "bailout"))})
def run(graph: Graph, style: str = "typecheck", requires_grad_only: bool = False) -> bool:
    """Guard a profiled graph: TypeCheck/RequiresGradCheck + fallback, or BailOut nodes."""
    if style not in ("typecheck", "bailout"):
        from .manager import PassError
        raise PassError(f"insert_guards: style must be typecheck or bailout, not {style!r}")
    if style == "bailout":
        return insert_bailouts(graph)
    return insert_typecheck(graph, bool(int(requires_grad_only)))
