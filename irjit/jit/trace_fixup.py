"""From the tracer's raw graph to PyTorch's traced module (its FixupTraceScopeBlocks): module
attributes read where they are used (`prim::TracedAttr` placeholders become `prim::GetAttr`
chains at the start of the tightest module call), values lifted out of the call that defines
them where they are used later, each submodule call's block turned into a method of that
submodule (`forward`, `forward1`, ... for repeated calls; inputs in order of first use) called
by `prim::CallMethod`, then LowerSimpleTuples and dead code elimination on every graph."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from irjit.compiler.ir import Block, Graph, Node, Value
from irjit.compiler.passes.eliminate_dead_code import eliminate_dead_code
from irjit.compiler.passes.erase_shape_information import unshaped
from irjit.ops.types import NONE, TupleType, Type

TRACED_ATTR = "prim::TracedAttr"
FORWARD = "prim::TracedModuleForward"


@dataclass
class TracedMethods:
    """The methods the trace created, per module instance (by id): name -> graph, in creation
    order (callees before callers)."""

    modules: dict[int, Any] = field(default_factory=dict)
    methods: dict[int, dict[str, Graph]] = field(default_factory=dict)

    def add(self, module: Any, graph: Graph) -> str:
        mine = self.methods.setdefault(id(module), {})
        self.modules[id(module)] = module
        name = "forward" if not mine else f"forward{len(mine)}"
        mine[name] = graph
        return name


def _is_prefix(prefix: str, name: str) -> bool:
    a, b = prefix.split("."), name.split(".")
    return len(a) <= len(b) and b[:len(a)] == a


class _AttrReferences:
    """Step 1 of the fixup: `self` inputs on module calls, GetAttrs in the tightest scope."""

    def __init__(self, graph: Graph, type_of: Callable[[str], Type]):
        self.attrs = {n.attr("scope"): n.output for n in graph.nodes() if n.kind == TRACED_ATTR}
        self.type_of = type_of

    def run(self, graph: Graph) -> None:
        self._add_self_args(graph.block)
        self._convert(graph.block, "__module", graph.inputs[0])
        for v in self.attrs.values():
            v.node.destroy()

    def _add_self_args(self, b: Block) -> None:
        for n in b.nodes():
            if n.kind == FORWARD:
                owner = self.attrs[n.attr("scope")]
                n.add_input(owner)
                n.blocks[0].add_input(owner.type, "self")
                self._add_self_args(n.blocks[0])

    def _convert(self, b: Block, prefix: str, self_value: Value) -> list[Value]:
        unresolved: list[Value] = []
        remaps: dict[Value, Value] = {}
        for n in list(b.nodes()) + [b.return_node]:
            if n.kind == FORWARD:
                for v in self._convert(n.blocks[0], n.attr("scope"), n.blocks[0].inputs[0]):
                    n.add_input(v)
            else:
                for sub in n.blocks:
                    for v in self._convert(sub, prefix, self_value):
                        n.add_input(v)
            for i, inp in enumerate(n.inputs):
                if inp in remaps:
                    n.replace_input(i, remaps[inp])
                elif inp.node.kind == TRACED_ATTR:
                    remaps[inp] = self._replace(n, i, b, prefix, self_value, unresolved)
        return unresolved

    def _replace(self, n: Node, i: int, b: Block, prefix: str, self_value: Value,
                 unresolved: list[Value]) -> Value:
        inp = n.inputs[i]
        name = inp.node.attr("scope")
        if _is_prefix(prefix, name):  # this module's (or a submodule's) attribute
            value, at, path = self_value, b.first_node, prefix
            for atom in name.split(".")[len(prefix.split(".")):]:
                path = f"{path}.{atom}"
                get = b.graph.create("prim::GetAttr", [value], output_types=[self.type_of(path)])
                get.set_attr("name", "s", atom)
                get.scope = b.graph.scope_root
                get.insert_before(at)
                get.output.set_debug_name(atom if not atom.isdigit() else f"_{atom}")
                value = get.output
        else:  # an outer module's attribute: an input of this block
            value = b.add_input(inp.type).copy_metadata(inp)
            unresolved.append(inp)
        n.replace_input(i, value)
        return value


class _DefsDominateUses:
    """Step 2: a value defined inside a module call and used after it becomes an output of
    that call (and of every enclosing call up to the common block)."""

    def __init__(self):
        self.remap: dict[Value, Value] = {}

    def run(self, b: Block) -> None:
        for n in list(b.nodes()) + [b.return_node]:
            self._process(n, b)

    def _process(self, n: Node, b: Block) -> None:
        for i, inp in enumerate(n.inputs):
            if inp in self.remap:
                inp = self.remap[inp]
                n.replace_input(i, inp)
            if inp.node.owning_block is not b:
                common = _common_block(n, inp.node)
                v, block = inp, inp.node.owning_block
                while block is not common:
                    block.register_output(v)
                    v = block.owning_node.add_output(v.type)  # the type, not the name
                    block = block.owning_node.owning_block
                self.remap[inp] = v
                n.replace_input(i, v)
        if n.kind == FORWARD:
            self.run(n.blocks[0])


def _blocks_up(n: Node) -> list[Block]:
    out, b = [], n.owning_block
    while b is not None:
        out.append(b)
        b = b.owning_node.owning_block if b.owning_node is not None else None
    return out


def _common_block(a: Node, b: Node) -> Block:
    mine = set(map(id, _blocks_up(a)))
    for block in _blocks_up(b):
        if id(block) in mine:
            return block
    raise AssertionError("nodes of different graphs")


def _returns_to_tuples(b: Block) -> None:
    """Step 3: a call returning several values returns one tuple (unpacked after the call);
    one returning nothing returns None."""
    g = b.graph
    for n in list(b.nodes()):
        if n.kind != FORWARD:
            continue
        sub = n.blocks[0]
        _returns_to_tuples(sub)
        if len(sub.outputs) > 1:
            items = list(sub.outputs)
            tup = g.create("prim::TupleConstruct", items,
                           output_types=[TupleType(tuple(v.type for v in items))])
            tup.insert_before(sub.return_node)
            while sub.outputs:
                sub.erase_output(0)
            sub.register_output(tup.output)
            packed = n.add_output(TupleType(tuple(o.type for o in n.outputs)))
            unpack = g.create("prim::TupleUnpack", [packed],
                              output_types=[o.type for o in n.outputs[:-1]])
            unpack.insert_after(n)
            for i in reversed(range(len(unpack.outputs))):
                n.outputs[i].replace_all_uses_with(unpack.outputs[i])
                n.erase_output(i)
        elif not sub.outputs:
            none = g.create("prim::Constant", output_types=[NONE])
            none.insert_before(sub.return_node)
            sub.register_output(none.output)
            n.add_output(NONE)


def _lambda_lift(b: Block) -> None:
    """Step 4: each call's block becomes a graph whose inputs are the block's inputs, then the
    outer values it uses in order of first use (added to the call's inputs too)."""
    for n in b.nodes():
        if n.kind != FORWARD:
            continue
        _lambda_lift(n.blocks[0])
        g = Graph()
        remaps: dict[Value, Value] = {}

        def outer(v: Value, n=n, g=g, remaps=remaps) -> Value:
            if v not in remaps:
                remaps[v] = g.add_input(None, v.type).copy_metadata(v)
                n.add_input(v)
            return remaps[v]
        g.block.clone_from(n.blocks[0], outer)
        n.set_attr("Subgraph", "g", g)
        n.erase_block(0)


def _method_calls(g: Graph, objects: dict[str, Any], methods: TracedMethods) -> None:
    """Step 5: each call becomes a method of its module and a `prim::CallMethod` of it."""
    for n in list(g.nodes()):
        if n.kind != FORWARD:
            continue
        sub = n.attr("Subgraph")
        _method_calls(sub, objects, methods)
        name = methods.add(objects[n.attr("scope")], sub)
        call = g.create("prim::CallMethod", n.inputs,
                        output_types=[unshaped(v.type) for v in sub.outputs])
        call.set_attr("name", "s", name)
        call.scope = g.scope_root
        call.insert_before(n)
        n.output.replace_all_uses_with(call.output)
        n.destroy()


def lower_simple_tuples(block: Block) -> None:
    """PyTorch's LowerSimpleTuples: a TupleUnpack/TupleIndex of a visible TupleConstruct reads
    the construct's inputs (the unpack itself is left to dead code elimination)."""
    from irjit.compiler.ir.constants import constant_value
    for n in block.nodes():
        if n.kind in ("prim::TupleUnpack", "prim::TupleIndex") and \
                n.inputs[0].node.kind == "prim::TupleConstruct":
            items = n.inputs[0].node.inputs
            if n.kind == "prim::TupleUnpack":
                for o, v in zip(n.outputs, items):
                    o.replace_all_uses_with(v)
            elif n.inputs[1].node.kind == "prim::Constant":
                n.output.replace_all_uses_with(items[constant_value(n.inputs[1].node)])
        for b in n.blocks:
            lower_simple_tuples(b)


def _cleanup(g: Graph) -> None:
    lower_simple_tuples(g.block)
    eliminate_dead_code(g)


def fixup(graph: Graph, objects: Optional[dict[str, Any]],
          type_of: Optional[Callable[[str], Type]] = None) -> TracedMethods:
    """Rewrite the raw traced `graph` in place; `objects` maps scope names (`__module.a`) to
    the traced module's submodules and tensors (None for a traced function), `type_of` gives
    their types in the graph. Returns the methods created on the submodules."""
    methods = TracedMethods()
    if objects is not None:
        _AttrReferences(graph, type_of).run(graph)
    _DefsDominateUses().run(graph.block)
    _returns_to_tuples(graph.block)
    if objects is not None:
        _lambda_lift(graph.block)
        _method_calls(graph, objects, methods)
        for by_name in methods.methods.values():
            for g in by_name.values():
                _cleanup(g)
    _cleanup(graph)
    return methods
