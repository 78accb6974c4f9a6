"""Element-wise fusion into `prim::FusionGroup` subgraphs, mirroring PyTorch's legacy graph
fuser (graph_fuser.cpp, `_jit_pass_fuse`): scanning nodes in reverse, a fusible consumer pulls
its fusible producers into one group (producer-consumer merging, groups merging groups),
constant scalar arguments are copied into the group, and each group's subgraph is cleaned
(DCE, constant pooling). A fusion group is what the native backend compiles.

Option `strict` mirrors `strict_fuser_check`: outputs of unknown device are then not fused.
"""

from __future__ import annotations

from irjit.compiler.ir import Block, Graph, Node
from irjit.ops.types import FLOAT, TensorType

from .peephole_helpers import _local_dce, eliminate_dead_code
from .registry import register_pass

GROUP = "prim::FusionGroup"
SUBGRAPH_ARG_LIMIT = 128
_FLOAT_TYPES = {"Float", "Double", "Half", "BFloat16"}

# The fusible element-wise ops, as PyTorch's legacy fuser's simple-map list (kind -> arity
# patterns: "T" tensor, "S" scalar that must be a constant or a float).
FUSIBLE_OPS: dict[str, tuple[str, ...]] = {
    **{k: ("T",) for k in (
        "aten::abs", "aten::acos", "aten::asin", "aten::atan", "aten::ceil", "aten::cos",
        "aten::cosh", "aten::erf", "aten::erfc", "aten::exp", "aten::expm1", "aten::floor",
        "aten::frac", "aten::lgamma", "aten::log", "aten::log10", "aten::log1p", "aten::log2",
        "aten::neg", "aten::reciprocal", "aten::relu", "aten::round", "aten::rsqrt",
        "aten::sigmoid", "aten::sin", "aten::sinh", "aten::sqrt", "aten::tan", "aten::tanh",
        "aten::trunc", "aten::rand_like")},
    **{k: ("TT", "TS") for k in (
        "aten::mul", "aten::div", "aten::eq", "aten::ne", "aten::ge", "aten::gt", "aten::le",
        "aten::lt", "aten::fmod", "aten::remainder", "aten::pow", "aten::atan2",
        "aten::max", "aten::min", "aten::type_as", "aten::_sigmoid_backward",
        "aten::_tanh_backward")},
    "aten::add": ("TTS", "TSS"), "aten::sub": ("TTS", "TSS"),
    "aten::clamp": ("TSS",), "aten::threshold": ("TSS",), "aten::lerp": ("TTS", "TTT"),
    "aten::addcmul": ("TTTS",), "aten::where": ("TTT",),
}


def _is_simple_map(n: Node) -> bool:
    patterns = FUSIBLE_OPS.get(n.kind)
    if patterns is None:
        return False
    kinds = "".join("T" if isinstance(v.type, TensorType) else "S" for v in n.inputs)
    if kinds not in patterns:
        return False
    for v in n.inputs:
        if not isinstance(v.type, TensorType) and v.type != FLOAT and v.node.kind != "prim::Constant":
            return False
    return True


class _Fuser:
    def __init__(self, block: Block, strict: bool):
        self.block = block
        self.strict = strict

    def fusible_device(self, n: Node) -> bool:
        for o in n.outputs:
            if not o.uses or not isinstance(o.type, TensorType):
                continue
            t = o.type
            if t.device is None:
                if self.strict:
                    return False
            elif t.device != "cpu":
                return False
            if t.scalar_type is not None and t.scalar_type not in _FLOAT_TYPES:
                return False
        return True

    def fusible(self, n: Node) -> bool:
        if n.owning_block is not self.block:
            return False
        return n.kind == GROUP or (self.fusible_device(n) and _is_simple_map(n))

    def run(self) -> bool:
        changed_any, changed = False, True
        while changed:
            changed = False
            n = self.block.return_node.prev
            while n is not self.block.param_node and n is not self.block.return_node:
                n, c = self.scan(n)
                changed |= c
            changed_any |= changed
        for n in self.block.nodes():
            if n.kind == GROUP:
                _clean_subgraph(n.attr("Subgraph"))
            for b in n.blocks:
                changed_any |= _Fuser(b, self.strict).run()
        return changed_any

    def scan(self, consumer: Node):
        if self.fusible(consumer):
            inputs = [v for v in consumer.inputs if v.node.owning_block is self.block]
            inputs.sort(key=lambda v: v.node._pos if v.node.kind != "prim::Param" else -1,
                        reverse=True)
            seen = []
            for v in inputs:
                if v in seen:
                    continue
                seen.append(v)
                group = self.try_fuse(consumer, v)
                if group is not None:
                    return group, True
        return consumer.prev, False

    def can_move_before(self, producer: Node, consumer: Node) -> bool:
        n = producer.next
        while n is not consumer:
            if any(v in producer.outputs for v in n.inputs) or any(
                    v in producer.outputs for m in n.walk() for v in m.inputs):
                return False
            n = n.next
        return True

    def try_fuse(self, consumer: Node, v):
        producer = v.node
        if producer.kind == "prim::Param" or not self.fusible(producer):
            return None
        if not self.can_move_before(producer, consumer):
            return None
        producer.move_before(consumer)
        if len(consumer.inputs) + len(consumer.outputs) + len(producer.inputs) + \
                len(producer.outputs) > SUBGRAPH_ARG_LIMIT:
            return None
        group = consumer if consumer.kind == GROUP else self.singleton(consumer)
        if producer.kind == GROUP:
            self.merge_groups(group, producer)
            return group
        merged = self.merge_node(group, producer)
        if v.uses:
            group.attr("Subgraph").register_output(merged.output)
            out = group.add_output(v.type)
            out.copy_metadata(v)
            v.replace_all_uses_with(out)
        producer.destroy()
        return group

    def singleton(self, n: Node) -> Node:
        g = n.graph
        group = g.create(GROUP, num_outputs=0)
        group.set_attr("Subgraph", "g", Graph())
        group.insert_before(n)
        merged = self.merge_node(group, n)
        group.attr("Subgraph").register_output(merged.output)
        out = group.add_output(n.output.type)
        out.copy_metadata(n.output)
        n.output.replace_all_uses_with(out)
        n.destroy()
        return group

    def merge_node(self, group: Node, n: Node) -> Node:
        sub: Graph = group.attr("Subgraph")
        inputs_map = dict(zip(group.inputs, sub.inputs))
        tensor_idx = 0
        for i, v in enumerate(group.inputs):
            if isinstance(v.type, TensorType):
                tensor_idx = i + 1
        first = sub.block.first_node
        for v in n.inputs:
            if v in inputs_map:
                continue
            if isinstance(v.type, TensorType):
                inputs_map[v] = sub.insert_input(tensor_idx, type=v.type)
                group.insert_input(tensor_idx, v)
                tensor_idx += 1
            elif v.type == FLOAT and v.node.kind != "prim::Constant":
                inputs_map[v] = sub.add_input(type=v.type)
                group.add_input(v)
            else:
                c = sub.clone_node(v.node, lambda x: x).insert_before(first)
                inputs_map[v] = c.output
        clone = sub.clone_node(n, lambda x: inputs_map[x])
        for i, o in enumerate(n.outputs):
            if o in group.inputs:
                p = group.inputs.index(o)
                group.remove_input(p)
                sub.inputs[p].replace_all_uses_with(clone.outputs[i])
                sub.erase_input(p)
        return clone.insert_before(first)

    def merge_groups(self, consumer: Node, producer: Node) -> None:
        """Inline the producer group's nodes into the consumer group, one by one."""
        sub: Graph = producer.attr("Subgraph")
        g = producer.graph
        g.set_insert_point(producer)
        vmap = dict(zip(sub.inputs, producer.inputs))
        temps = []
        for m in list(sub.nodes()):
            c = g.clone_node(m, lambda x: vmap.get(x, x))
            g.insert_node(c)
            vmap.update(zip(m.outputs, c.outputs))
            temps.append(c)
        for o, so in zip(producer.outputs, sub.outputs):
            o.replace_all_uses_with(vmap[so])
        producer.destroy()
        for c in reversed(temps):
            merged = self.merge_node(consumer, c)
            for o, mo in zip(c.outputs, merged.outputs):
                if o.uses:
                    consumer.attr("Subgraph").register_output(mo)
                    out = consumer.add_output(o.type)
                    o.replace_all_uses_with(out)
            c.destroy()


def _clean_subgraph(sub: Graph) -> None:
    """DCE and constant pooling of a group's subgraph (as optimizeFusedGraphs does)."""
    _local_dce(sub.block)
    seen: dict = {}
    for n in list(sub.nodes()):
        if n.kind != "prim::Constant":
            continue
        key = (str(n.output.type), repr(sorted(n.attrs.items())))
        if key in seen:
            n.output.replace_all_uses_with(seen[key].output)
            n.destroy()
            continue
        seen[key] = n
        first = sub.block.first_node
        if n is not first:
            n.move_before(first)


@register_pass("fuse_graph")
def run(graph: Graph, strict: bool = False) -> bool:
    """PyTorch's legacy FuseGraph: pointwise ops into prim::FusionGroup subgraphs."""
    changed = _Fuser(graph.block, bool(int(strict))).run()
    if changed:
        eliminate_dead_code(graph)
    return changed
