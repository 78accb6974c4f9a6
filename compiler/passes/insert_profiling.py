"""Instrument a graph with `prim::profile` nodes, as the profiling executor's ProfilingRecord
(profiling_record.cpp) does before its first runs: each tensor use by an op the optimizer
specializes on (or of a value such an op produced) goes through
`%p : Tensor = prim::profile[profiled_type=Tensor, seen_none=0](%x)`, block outputs are
profiled too, and the graph ends with ` = prim::profile()`. `runtime.profiling` runs such a
graph and records the observed types into `profiled_type`/`seen_none`."""

from __future__ import annotations

from irjit.compiler.ir import Block, Graph, Node
from irjit.ops.types import TENSOR, OptionalType, TensorType

from .fuse_graph import FUSIBLE_OPS
from .registry import register_pass

# ops whose inputs the optimizer specializes on (PyTorch: tensorexpr-supported ops plus the
# ops read by specialize_autogradzero and the shape peepholes)
PROFILED_CONSUMERS = set(FUSIBLE_OPS) | {
    "aten::t", "aten::mm", "aten::matmul", "aten::conv2d", "aten::conv1d", "aten::conv3d",
    "aten::cat", "aten::softmax", "aten::log_softmax", "aten::where", "aten::masked_fill",
    "aten::clamp", "aten::to", "aten::type_as", "aten::linear", "aten::addmm", "aten::bmm",
    "aten::max_pool2d", "aten::adaptive_avg_pool2d", "aten::avg_pool2d", "aten::batch_norm",
    "aten::layer_norm", "aten::hardtanh", "aten::gelu", "aten::silu", "aten::leaky_relu",
    "aten::elu", "aten::softplus", "aten::erf", "aten::sum", "aten::mean", "aten::flatten",
    "aten::view", "aten::reshape", "aten::permute", "aten::transpose", "aten::squeeze",
    "aten::unsqueeze", "aten::expand", "aten::slice", "aten::select", "aten::chunk",
    "prim::ConstantChunk", "aten::dim", "aten::size", "prim::dtype", "prim::device",
    "prim::is_cuda", "aten::is_floating_point", "aten::_grad_sum_to_size",
    "prim::AutogradAdd", "prim::AutogradAnyNonZero", "prim::AutogradAllNonZero",
    "prim::AutogradAllZero", "prim::AutogradZero", "aten::relu6", "aten::hardswish",
    "aten::hardsigmoid", "aten::rsub", "aten::sub", "aten::add", "aten::mul", "aten::div",
    "aten::max", "aten::min", "aten::maximum", "aten::minimum", "aten::pow",
}
# reductions profiled only in their per-dimension overloads (`sum(x, None)` is not)
_DIM_ONLY = {"aten::sum", "aten::mean"}


def _consumer_profiled(n: Node) -> bool:
    if n.kind not in PROFILED_CONSUMERS:
        return False
    if n.kind in _DIM_ONLY:
        return len(n.inputs) > 2 and "[]" in str(n.inputs[1].type)
    return True


def _producer_profiled(n: Node) -> bool:
    return _consumer_profiled(n) or n.kind in ("prim::AutogradAdd", "prim::AutogradZero")


def _tensor_like(t) -> bool:
    """Tensors and optional tensors (`Tensor?`, profiled with `seen_none`) are profiled."""
    return isinstance(t, TensorType) or (isinstance(t, OptionalType) and isinstance(t.elem, TensorType))


def insert_profile(user: Node, offset: int) -> Node:
    g = user.graph
    v = user.inputs[offset]
    p = g.create("prim::profile", [v], output_types=[v.type if _tensor_like(v.type) else TENSOR])
    p.set_attr("profiled_type", "ty", TENSOR)
    p.set_attr("seen_none", "i", 0)
    p.insert_before(user)
    user.replace_input(offset, p.output)
    return p


def instrument_block(block: Block) -> None:
    for n in list(block.nodes()):
        for i, v in enumerate(list(n.inputs)):
            if _tensor_like(v.type) and (_consumer_profiled(n) or _producer_profiled(v.node)):
                insert_profile(n, i)
        for b in n.blocks:
            instrument_block(b)
    ret = block.return_node
    for i, v in enumerate(list(ret.inputs)):
        if isinstance(v.type, TensorType):
            insert_profile(ret, i)


def is_instrumented(graph: Graph) -> bool:
    return any(n.kind == "prim::profile" for n in graph.walk())


@register_pass("insert_profiling")
def run(graph: Graph) -> bool:
    """ProfilingRecord::instrumentGraph: prim::profile on tensor uses and outputs."""
    if is_instrumented(graph):
        return False
    instrument_block(graph.block)
    graph.block.append_node(graph.create("prim::profile", num_outputs=0))
    return True
