"""The `autodiff` pipeline: the graph executor's optimization order around autodiff
(graph_executor.cpp compileSpec/runOptimization for the static, type-specialized flavour, with
the profiling executor's thresholds and inlining switch, profiling_graph_executor_impl.cpp)."""

from __future__ import annotations

from typing import Optional

from irjit.compiler.autodiff.differentiate import differentiate, type_requires_grad
from irjit.compiler.autodiff.gradient import pack_gradient
from irjit.compiler.settings import get_settings
from irjit.ops.types import TENSOR, TensorType

from .create_autodiff_subgraphs import create_autodiff_subgraphs
from .inline_autodiff_subgraphs import run as inline_autodiff_subgraphs
from .propagate_requires_grad import run as propagate_requires_grad
from .registry import all_passes

REQUIRED = ("lower_grad_of", "remove_expands", "canonicalize_graph_fuser_ops", "eliminate_dead_code")
OPTIMIZATION = ("eliminate_dead_code", "eliminate_common_subexpression", "constant_pooling",
                "peephole", "constant_propagation", "unroll_loops",
                "eliminate_common_subexpression")
FORWARD_OPTIMIZATION = ("eliminate_dead_code", "eliminate_common_subexpression",
                        "constant_pooling", "peephole", "eliminate_dead_code")


def _maybe(name: str, graph) -> None:
    """Run a registered pass; passes not (yet) registered are skipped."""
    info = all_passes().get(name)
    if info is not None:
        info.run(graph)


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
    for name in REQUIRED:
        _maybe(name, graph)
    _maybe("peephole", graph)
    _maybe("constant_propagation", graph)
    _maybe("propagate_input_shapes", graph)
    propagate_requires_grad(graph)
    for name in OPTIMIZATION:
        _maybe(name, graph)
    if grad_enabled and needs_gradient(graph):
        for dnode in create_autodiff_subgraphs(graph, nt):
            grad = try_differentiate(dnode)
            if grad is None:
                continue
            remove_tensor_type_specializations(grad.f)
            for name in FORWARD_OPTIMIZATION:
                _maybe(name, grad.f)
            pack_gradient(dnode, grad)
        inline_autodiff_subgraphs(graph, threshold=it)
    _maybe("eliminate_dead_code", graph)
    return True


try:
    from .manager import register_pipeline
except ImportError:  # the pass manager is not there: register as a plain pass
    from .registry import register_pass
    register_pass("autodiff")(autodiff)
else:
    register_pipeline("autodiff", autodiff)
