"""The `autodiff` pipeline: the graph executor's optimization order around autodiff
(graph_executor.cpp compileSpec/runOptimization for the static, type-specialized flavour, with
the profiling executor's thresholds and inlining switch, profiling_graph_executor_impl.cpp)."""

from __future__ import annotations

from typing import Callable, Optional

from irjit.compiler.autodiff.differentiate import differentiate, type_requires_grad
from irjit.compiler.autodiff.gradient import pack_gradient
from irjit.compiler.settings import get_settings
from irjit.ops.types import TENSOR, TensorType

from .create_autodiff_subgraphs import create_autodiff_subgraphs
from .inline_autodiff_subgraphs import run as inline_autodiff_subgraphs
from .propagate_requires_grad import run as propagate_requires_grad
from .registry import AtLeast, all_passes

REQUIRED = ("lower_grad_of", "remove_expands", "canonicalize_graph_fuser_ops", "eliminate_dead_code")
OPTIMIZATION = ("eliminate_dead_code", "eliminate_common_subexpression", "constant_pooling",
                "peephole", "constant_propagation", "unroll_loops",
                "eliminate_common_subexpression")
FORWARD_OPTIMIZATION = ("eliminate_dead_code", "eliminate_common_subexpression",
                        "constant_pooling", "peephole", "eliminate_dead_code")


def run_pass_sequence(graph, names, may_fail: tuple[str, ...] = ()) -> None:
    """Run registered passes in order with their default options; names not registered are
    skipped, and so is a pass in `may_fail` that raises (an optional rewrite that cannot apply)."""
    passes = all_passes()
    for name in names:
        info = passes.get(name)
        if info is None:
            continue
        try:
            info.run(graph)
        except Exception:  # noqa: BLE001 - only for the optional rewrites named in may_fail
            if name not in may_fail:
                raise


def try_differentiate(dnode):
    """The Gradient of a DifferentiableGraph node's body; when the body cannot be
    differentiated symbolically (control flow, an op without a formula, missing shapes) the
    node is inlined back, so its nodes run under the tape autograd instead, and None."""
    from irjit.compiler.autodiff.differentiate import DifferentiationError
    from irjit.compiler.autodiff.subgraph_utils import unmerge_subgraph
    from irjit.compiler.autodiff.symbolic_emitter import NotSymbolic
    try:
        return differentiate(dnode.attr("Subgraph"))
    except (DifferentiationError, NotSymbolic):
        unmerge_subgraph(dnode)
        return None


def needs_gradient(graph) -> bool:
    """PyTorch's needsGradient: some input's type requires grad (unknown tensors do)."""
    return any(type_requires_grad(v.type) for v in graph.inputs)


def remove_tensor_type_specializations(graph) -> None:
    """PyTorch's RemoveTensorTypeSpecializations on the forward graph (constants keep theirs)."""
    for n in [graph.param_node] + list(graph.walk()):
        if n.kind == "prim::Constant":
            continue
        for v in n.outputs:
            if isinstance(v.type, TensorType):
                v.type = TENSOR


def finish_differentiable_graph(dnode, grad, prepare_forward: Callable) -> None:
    """After differentiating a DifferentiableGraph node: prepare its forward graph (each
    executor strips specializations its own way), optimize it, and pack the Gradient on it."""
    prepare_forward(grad.f)
    run_pass_sequence(grad.f, FORWARD_OPTIMIZATION)
    pack_gradient(dnode, grad)


def differentiate_subgraphs(graph, node_threshold: int, inline_threshold: int,
                            handle: Callable) -> None:
    """Slice `graph` into DifferentiableGraphs, `handle(dnode)` each (differentiate it, or
    guard and differentiate it), then inline back the ones below the inline threshold."""
    for dnode in create_autodiff_subgraphs(graph, node_threshold):
        handle(dnode)
    inline_autodiff_subgraphs(graph, threshold=inline_threshold)


def _differentiate_or_inline(dnode) -> None:
    grad = try_differentiate(dnode)
    if grad is not None:
        finish_differentiable_graph(dnode, grad, remove_tensor_type_specializations)


def autodiff(graph, node_threshold: Optional[int] = None, inline_threshold: Optional[int] = None,
             input_types=None, grad_enabled: bool = True) -> bool:
    """Specialize, optimize, slice DifferentiableGraphs, differentiate them, inline small ones."""
    nt, it = get_settings().autodiff_thresholds()
    nt = nt if node_threshold is None else int(node_threshold)
    it = it if inline_threshold is None else int(inline_threshold)
    if input_types:
        from .specialize_input_types import parse_input_types, specialize_input_types
        types = parse_input_types(input_types) if isinstance(input_types, str) else list(input_types)
        specialize_input_types(graph, types)
    run_pass_sequence(graph, REQUIRED + ("peephole", "constant_propagation",
                                         "propagate_input_shapes"))
    propagate_requires_grad(graph)
    run_pass_sequence(graph, OPTIMIZATION)
    if grad_enabled and needs_gradient(graph):
        differentiate_subgraphs(graph, nt, it, _differentiate_or_inline)
    run_pass_sequence(graph, ("eliminate_dead_code",))
    return True


try:
    from .manager import register_pipeline
except ImportError:  # the pass manager is not there: register as a plain pass
    from .registry import register_pass
    register_pass("autodiff")(autodiff)
else:
    register_pipeline("autodiff", autodiff,
                      valid={"node_threshold": AtLeast(0), "inline_threshold": AtLeast(0)})
