"""Specialize a backward graph on which gradients are zero (undefined), mirroring PyTorch's
specializeAutogradZero (specialize_autogradzero.cpp).

Each value gets a state (Zero, Nonzero, Unknown): `prim::AutogradAdd` with a Zero side is
dropped, with two Nonzero sides becomes `aten::add`; an If on `prim::AutogradAnyNonZero` of all
Zero inputs becomes `prim::AutogradZero`, of all Nonzero inputs is inlined. With `profiling`
(the default, as PyTorch's profiling executor) input states come from the `profiled_type` of
`prim::profile` uses (`[Undefined]` or not) and the graph is versioned: `prim::If` on
`aten::all([AutogradAllNonZero(..), AutogradAllZero(..)])` with the specialized graph and a
`prim::FallbackGraph`; without it, from the inputs' own `undefined` flags.
"""

from __future__ import annotations

from irjit.compiler.ir import Graph, Node
from irjit.ops.types import BOOL, ListType, TensorType

from .peephole_helpers import must_be_none
from .registry import register_pass

ZERO, NONZERO, UNKNOWN = "zero", "nonzero", "unknown"


class _Specializer:
    def __init__(self, graph: Graph):
        self.graph = graph
        self.state: dict = {}

    def is_backward_graph(self) -> bool:
        return any(n.kind in ("prim::AutogradAnyNonZero", "prim::AutogradAdd",
                              "aten::_grad_sum_to_size") for n in self.graph.walk())

    def states_from_inputs(self) -> None:
        for v in self.graph.inputs:
            t = v.type
            if isinstance(t, TensorType):
                self.state[v] = UNKNOWN if t.undefined is None else (ZERO if t.undefined else NONZERO)
            elif isinstance(t, ListType) and isinstance(t.elem, TensorType):
                self.state[v] = NONZERO
            else:
                self.state[v] = UNKNOWN

    def _profiled_state(self, v):
        for use in v.uses:
            if use.user.kind == "prim::profile" and use.user.has_attr("profiled_type"):
                t = use.user.attr("profiled_type")
                if isinstance(t, TensorType) and t.undefined is not None:
                    return ZERO if t.undefined else NONZERO
        return None

    def guard_specializations(self):
        g = self.graph
        vif = g.create("prim::If", num_outputs=len(g.outputs))
        true_b, false_b = vif.add_block(), vif.add_block()
        for b in (true_b, false_b):
            b.clone_from(g.block, lambda v: v)
            for i in reversed(range(len(b.inputs))):
                b.inputs[i].replace_all_uses_with(g.inputs[i])
                b.erase_input(i)
        _replace_with_fallback(false_b, g.inputs)
        g.set_insert_point(g.block.first_node)
        g.insert_constant(None)
        zeros, nonzeros = [], []
        for v in g.inputs:
            s = self._profiled_state(v) if isinstance(v.type, TensorType) else None
            if s is None:
                continue
            self.state[v] = s
            (zeros if s == ZERO else nonzeros).append(v)
        if not zeros and not nonzeros:
            vif.destroy()
            return None
        nz = g.insert("prim::AutogradAllNonZero", nonzeros, output_types=[BOOL]).output
        z = g.insert("prim::AutogradAllZero", zeros, output_types=[BOOL]).output
        lst = g.insert("prim::ListConstruct", [nz, z], output_types=[ListType(BOOL)]).output
        cond = g.insert("aten::all", [lst], output_types=[BOOL]).output
        vif.add_input(cond)
        g.insert_node(vif)
        ret = g.return_node
        for i, old in enumerate(list(ret.inputs)):
            vif.outputs[i].copy_metadata(old)
            ret.replace_input(i, vif.outputs[i])
        for n in list(g.block.reversed_nodes()):
            if n is vif:
                break
            n.destroy()
        return vif

    def specialize(self, block) -> None:  # noqa: C901 - one case per node kind, as PyTorch
        g, st = self.graph, self.state
        for n in list(block.nodes()):
            k = n.kind
            if k == "prim::AutogradAdd":
                a, b = n.inputs
                sa, sb = st.get(a, UNKNOWN), st.get(b, UNKNOWN)
                if sa == ZERO or must_be_none(a) and a.node.kind == "prim::AutogradZero":
                    n.output.replace_all_uses_with(b)
                    n.destroy()
                elif sb == ZERO or must_be_none(b) and b.node.kind == "prim::AutogradZero":
                    n.output.replace_all_uses_with(a)
                    n.destroy()
                elif sa == NONZERO and sb == NONZERO:
                    g.set_insert_point(n)
                    one = g.insert_constant(1)
                    add = g.insert("aten::add", [a, b, one], output_types=[n.output.type])
                    st[add.output] = NONZERO
                    n.output.replace_all_uses_with(add.output)
                    n.destroy()
                else:
                    st[n.output] = UNKNOWN
            elif k == "prim::AutogradZero":
                st[n.output] = ZERO
            elif k == "prim::profile" and n.inputs and n.outputs:
                st[n.output] = st.get(n.inputs[0], UNKNOWN)
            elif k == "prim::If":
                self._specialize_if(n)
            else:
                for o in n.outputs:
                    st[o] = UNKNOWN

    def _specialize_if(self, n: Node) -> None:
        g, st = self.graph, self.state
        cond = n.inputs[0].node
        if cond.kind == "prim::AutogradAnyNonZero":
            states = [st.get(v, UNKNOWN) for v in cond.inputs]
            if all(s == ZERO for s in states):
                zero = g.create("prim::AutogradZero").insert_after(n).output
                st[zero] = ZERO
                for o in n.outputs:
                    o.replace_all_uses_with(zero)
                n.destroy()
                return
            if all(s == NONZERO for s in states):
                body = n.blocks[0]
                self.specialize(body)
                for m in list(body.nodes()):
                    m.move_before(n)
                for o, bo in zip(n.outputs, body.outputs):
                    o.replace_all_uses_with(bo)
                n.destroy()
                return
        for b in n.blocks:
            self.specialize(b)
        for o in n.outputs:
            st[o] = UNKNOWN


def _replace_with_fallback(block, inputs) -> None:
    """PyTorch's replaceBlockWithFallbackGraph: the block's code moves into a FallbackGraph."""
    sub = Graph()
    vmap = {}
    for v in inputs:
        vmap[v] = sub.add_input(type=v.type)
        if v.debug_name:
            vmap[v].set_debug_name(v.debug_name)
    sub.block.clone_from(block, lambda v: vmap.get(v, v))
    g = block.owning_node.graph
    fb = g.create("prim::FallbackGraph", list(inputs), num_outputs=len(block.outputs))
    fb.set_attr("Subgraph", "g", sub)
    block.prepend_node(fb)
    for i, v in enumerate(list(block.outputs)):
        fb.outputs[i].copy_metadata(v)
        block.return_node.replace_input(i, fb.outputs[i])
    for n in list(sub.walk()):
        if n.kind in ("prim::profile", "prim::profile_ivalue") and n.is_inserted():
            if n.outputs and n.inputs:
                n.output.replace_all_uses_with(n.inputs[0])
            n.destroy()
    for n in list(block.reversed_nodes()):
        if n is fb:
            break
        n.destroy()


@register_pass("specialize_autograd_zero")
def run(graph: Graph, profiling: bool = True) -> bool:
    """PyTorch's specializeAutogradZero: fold AutogradAdd/AnyNonZero by known zero gradients."""
    s = _Specializer(graph)
    if not s.is_backward_graph():
        return False
    before = str(graph)
    if int(profiling):
        vif = s.guard_specializations()
        if vif is not None:
            s.specialize(vif.blocks[0])
    else:
        s.states_from_inputs()
        s.specialize(graph.block)
    return str(graph) != before
