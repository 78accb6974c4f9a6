"""What the profiling executor does to a profiled graph once its profiling runs are over
(PyTorch's ProfilingGraphExecutorImpl: runProfilingInsensitiveOptimizations before
instrumenting, runProfilingOptimizations after), in both guard styles:

- "typecheck" (2.x): DifferentiableGraphs are guarded by `prim::RequiresGradCheck` over their
  inputs feeding a `prim::If` whose other branch calls a fallback function (the unoptimized
  subgraph); profile nodes are removed.
- "bailout" (1.x, as in the forum question): every profiled value gets a `prim::BailOut`,
  fed by a `prim::BailoutTemplate` holding the unoptimized graph; autodiff follows.
"""

from __future__ import annotations

from typing import Optional

from irjit.compiler.ir import Graph, Node, Value
from irjit.ops.types import BOOL, FUNCTION, TENSOR, OptionalType, TensorType
from irjit.compiler.passes import get_pass
from irjit.compiler.passes.autodiff_pipeline import (differentiate_subgraphs,
                                                     finish_differentiable_graph,
                                                     run_pass_sequence, try_differentiate)

PROFILING_INSENSITIVE = ("inline", "lower_grad_of", "clear_undefinedness", "remove_expands",
                         "canonicalize_graph_fuser_ops", "eliminate_dead_code", "decompose_ops",
                         "constant_propagation", "eliminate_dead_code",
                         "eliminate_common_subexpression", "constant_pooling", "peephole",
                         "eliminate_dead_code")  # (no LowerAllTuples: it changes the outputs)
PRE_AUTODIFF = ("remove_expands", "canonicalize_graph_fuser_ops", "eliminate_dead_code",
                "specialize_autograd_zero", "eliminate_dead_code",
                "eliminate_common_subexpression", "peephole", "constant_propagation",
                "constant_pooling", "eliminate_dead_code")


def run_passes(graph: Graph, names) -> None:
    run_pass_sequence(graph, names, may_fail=("decompose_ops",))


def profiling_insensitive(graph: Graph) -> None:
    """Rewrites that do not need profiles (run before instrumenting the graph)."""
    run_passes(graph, PROFILING_INSENSITIVE)


def _profile_counter(graph: Graph) -> Optional[Node]:
    for n in graph.nodes():
        if n.kind == "prim::profile" and not n.inputs and not n.outputs:
            return n
    return None


def remove_profile_counter(graph: Graph) -> None:
    n = _profile_counter(graph)
    if n is not None:
        n.destroy()


def profiled_types(graph: Graph) -> dict[Value, TensorType]:
    """Each profiled value's observed type (merged over its profile nodes)."""
    from irjit.runtime.profiling import merge_profiled
    out: dict[Value, TensorType] = {}
    for n in graph.walk():
        if n.kind == "prim::profile" and n.inputs and n.has_attr("profiled_type"):
            t = n.attr("profiled_type")
            if not isinstance(t, TensorType) or (t.scalar_type is None and t.sizes is None):
                continue
            v = n.inputs[0]
            out[v] = t if v not in out else merge_profiled(out[v], t)
            if n.outputs:
                out[n.outputs[0]] = out[v]
    return out


def remove_profile_nodes(graph: Graph) -> None:
    from irjit.compiler.passes.insert_guards import remove_profile_nodes as remove_in_block
    remove_in_block(graph.block)


def needs_gradient(profiles: dict[Value, TensorType], grad_enabled: bool) -> bool:
    """PyTorch's needsGradientInProfilingMode: some profiled tensor required grad."""
    return grad_enabled and any(t.requires_grad for t in profiles.values())


def _tuple_graph(sub: Graph) -> Graph:
    """The fallback function: an unspecialized copy of `sub` returning one tuple."""
    from irjit.compiler.passes.insert_guards import fallback_graph
    g = fallback_graph(sub)
    for n in [g.param_node] + list(g.walk()):
        for v in n.outputs:
            if isinstance(v.type, TensorType):
                v.type = TENSOR
    return g


def guard_differentiable_graph(dnode: Node, profiles: dict[Value, TensorType],
                               fallbacks: dict) -> bool:
    """PyTorch's guardDifferentiableGraph: type the node's inputs from their profiles and put
    it behind a `prim::RequiresGradCheck`; False (and the subgraph inlined back) when an
    input was never profiled and nothing else is known of it (a plain `Tensor`, such as an
    embedding's indices: its requires-grad check would take it to require grad and fail on
    every call) or is an optional tensor."""
    from irjit.compiler.autodiff.subgraph_utils import unmerge_subgraph
    sub = dnode.attr("Subgraph")
    for v, inner in zip(dnode.inputs, sub.inputs):
        if isinstance(v.type, TensorType) and v in profiles:
            v.type = profiles[v].with_(undefined=None)
            inner.type = v.type  # what differentiate() sees (traced graphs declare stale types)
        elif (isinstance(v.type, OptionalType) and isinstance(v.type.elem, TensorType)) or \
                (isinstance(v.type, TensorType) and v.type.with_(undefined=None) == TENSOR):
            _requires_grad_unknown(sub)  # UpdateDifferentiableGraphRequiresGrad(sub, nullopt)
            unmerge_subgraph(dnode)
            return False
    # requires_grad inside the subgraph follows from its (now profiled) inputs
    get_pass("propagate_requires_grad").run(sub)
    fallback = _tuple_graph(sub)  # the unoptimized body, before differentiate() rewrites it
    grad = try_differentiate(dnode)
    if grad is None:
        return False
    g = dnode.graph
    checked = [v for v in dnode.inputs if isinstance(v.type, TensorType)
               and v.node.kind not in ("prim::Constant", "prim::FusionGroup")]
    if not checked:
        differentiate_node(dnode, grad)
        return True
    types = tuple(TENSOR.with_(requires_grad=True if v.type.requires_grad is None
                               else v.type.requires_grad) for v in checked)
    check = g.create("prim::RequiresGradCheck", checked,
                     output_types=[v.type for v in checked] + [BOOL])
    check.set_attr("types", "tys", types)
    check.insert_before(dnode)
    vif = g.create("prim::If", [check.outputs[-1]], output_types=[o.type for o in dnode.outputs])
    vif.insert_after(check)
    for o, vo in zip(dnode.outputs, vif.outputs):
        o.replace_all_uses_with(vo)
    then_b, else_b = vif.add_block(), vif.add_block()
    # the false branch: the unoptimized subgraph, called as a fallback function
    f = g.create("prim::Constant", output_types=[FUNCTION])
    f.set_attr("name", "s", "fallback_function")
    f.set_attr("fallback", "i", 1)
    else_b.append_node(f)
    fallbacks[f] = fallback
    tup = fallback.outputs[0].type
    call = else_b.append_node(g.create("prim::CallFunction", [f.output] + list(dnode.inputs),
                                       output_types=[tup]))
    unpack = else_b.append_node(g.create("prim::TupleUnpack", [call.output],
                                         output_types=list(tup.elems)))
    for o in unpack.outputs:
        else_b.register_output(o)
    dnode.move_before(then_b.return_node)
    for i, v in enumerate(dnode.inputs):
        if v in checked:
            dnode.replace_input(i, check.outputs[checked.index(v)])
    for o in dnode.outputs:
        then_b.register_output(o)
    differentiate_node(dnode, grad)
    return True


def _forward_requires_no_grad(f: Graph) -> None:
    """RemoveTensorTypeSpecializations + UpdateDifferentiableGraphRequiresGrad(f, false)."""
    for n in [f.param_node] + list(f.walk()):
        if n.kind == "prim::Constant":
            continue
        for v in n.outputs:
            if isinstance(v.type, TensorType):
                v.type = TENSOR.with_(requires_grad=False)


def _requires_grad_unknown(g: Graph) -> None:
    """Forget what the slicer assumed of the subgraph's values' requires_grad before it is
    inlined back (its nodes then run under the tape, whatever they were typed)."""
    for n in [g.param_node] + list(g.walk()):
        for v in n.outputs:
            if isinstance(v.type, TensorType) and v.type.requires_grad is not None:
                v.type = v.type.with_(requires_grad=None)


def differentiate_node(dnode: Node, grad=None) -> bool:
    """Differentiate the node's body and keep the forward graph as its subgraph; False (and
    the node inlined back) when the body cannot be differentiated symbolically."""
    grad = grad if grad is not None else try_differentiate(dnode)
    if grad is None:
        return False
    finish_differentiable_graph(dnode, grad, _prepare_forward)
    return True


def _prepare_forward(f: Graph) -> None:
    remove_profile_nodes(f)
    _forward_requires_no_grad(f)


def optimize_profiled(graph: Graph, node_threshold: int, inline_threshold: int, style: str,
                      grad_enabled: bool = True) -> dict:
    """Turn a profiled graph (after its runs) into the optimized one; returns the fallback
    graphs of the guards, keyed by their `fallback_function` constant nodes."""
    remove_profile_counter(graph)
    fallbacks: dict = {}
    if style == "bailout":
        get_pass("insert_guards").run(graph, style="bailout")
        run_passes(graph, PRE_AUTODIFF)
        profiles = {n.outputs[0]: n.outputs[0].type for n in graph.walk()
                    if n.kind == "prim::BailOut" and isinstance(n.outputs[0].type, TensorType)}
        if needs_gradient(profiles, grad_enabled):
            differentiate_subgraphs(graph, node_threshold, inline_threshold, differentiate_node)
    else:
        run_passes(graph, PRE_AUTODIFF)
        profiles = profiled_types(graph)
        if needs_gradient(profiles, grad_enabled):
            remove_profile_nodes(graph)
            differentiate_subgraphs(graph, node_threshold, inline_threshold,
                                    lambda d: guard_differentiable_graph(d, profiles, fallbacks))
            _remove_orphan_guards(graph)
            _drop_unused_fallbacks(graph, fallbacks)
    get_pass("eliminate_dead_code").run(graph)
    return fallbacks


def _remove_orphan_guards(graph: Graph) -> None:
    """A guard whose DifferentiableGraph was inlined back guards nothing: keep only the
    guarded code (the If's first branch), running on the unchecked inputs."""
    for vif in [n for n in graph.walk() if n.kind == "prim::If"]:
        check = vif.inputs[0].node
        then_b = vif.blocks[0]
        if check.kind != "prim::RequiresGradCheck" or len(check.outputs[-1].uses) != 1:
            continue
        if any(n.kind == "prim::DifferentiableGraph" for n in then_b.walk()):
            continue
        for n in list(then_b.nodes()):
            n.move_before(vif)
        for o, inner in zip(vif.outputs, then_b.outputs):
            o.replace_all_uses_with(inner)
        vif.destroy()
        for src, out in zip(check.inputs, check.outputs):
            out.replace_all_uses_with(src)
        check.destroy()


def _drop_unused_fallbacks(graph: Graph, fallbacks: dict) -> None:
    """Inlined DifferentiableGraphs take their guards' fallbacks with them (PyTorch removes
    the guard when it inlines); keep only the fallbacks still in the graph."""
    live = {n for n in graph.walk() if n.kind == "prim::Constant"}
    for k in [k for k in fallbacks if k not in live]:
        del fallbacks[k]
