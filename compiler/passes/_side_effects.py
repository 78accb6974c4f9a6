"""Side effects, mutation, nondeterminism and a small alias analysis, shared by the passes.

Mirrors what PyTorch's passes ask of `Node::hasSideEffects`, `Node::isNondeterministic` and
`AliasDb` (torch/csrc/jit/ir/ir.cpp, alias_analysis.cpp), conservatively, from the op layer's
facts (`ops.facts`): values are grouped into alias sets (views, containers, control flow and
pass-through nodes join sets), graph inputs, values put into a container and anything
unanalysable join the *wildcard* set of their type's kind (one for tensors, one per list
element kind, ...), and writes are taken from schemas (`Tensor(a!)`) or, for ops the registry
does not know yet, from naming conventions.
"""

from __future__ import annotations

from typing import Iterable, Optional

from irjit.compiler.ir import Block, Graph, Node, Value
from irjit.compiler.ir.constants import constant_value
from irjit.ops import facts
from irjit.ops.types import (ClassType, GenericType, ListType, NamedType, OptionalType,
                               TensorType, TupleType, Type)


def is_mutable_type(t: Type) -> bool:
    """PyTorch's `AliasDb::isMutableType`: tensors, lists, dicts, objects, and tuples or
    optionals containing them."""
    if isinstance(t, (TensorType, ListType, ClassType)):
        return True
    if isinstance(t, GenericType):
        return t.name not in ("Union",) or any(is_mutable_type(a) for a in t.args)
    if isinstance(t, (TupleType, OptionalType)):
        return any(is_mutable_type(e) for e in t.contained())
    if isinstance(t, NamedType):
        return t.name in ("Any", "Capsule")
    return False


def has_side_effects(node: Node) -> bool:
    """`Node::hasSideEffects`: kinds that act on the world. Like torch 2.13's DCE, a bare
    ` = prim::profile()` is not one (it is removed once the profiling run is over)."""
    return facts.has_side_effects(node.kind)


def _entries(kind: str):
    from irjit.ops.registry import overloads
    return overloads(kind)


def is_nondeterministic(node: Node) -> bool:
    """`Node::isNondeterministic`: random ops (by name or the registry's flag); dropout with a
    constant `train=False` is deterministic."""
    if not node.kind.startswith("aten::"):
        return False
    if node.kind in ("aten::dropout", "aten::feature_dropout") and len(node.inputs) >= 3:
        train = node.inputs[2]
        if train.node.kind == "prim::Constant" and constant_value(train.node) is False:
            return False
    return facts.has_tag(node.kind, "random")


def mutated_inputs(node: Node) -> list[int]:
    """Positions of the inputs the node writes to (schema arguments marked `(a!)`)."""
    kind = node.kind
    if kind == "prim::SetAttr":
        return [0]
    n = len(node.inputs)
    found: set[int] = set()
    known = False
    for e in _entries(kind):
        s = e.schema
        if s.variadic:
            continue
        args = s.arguments
        if n > len(args) or any(a.default is _no_default() for a in args[n:]):
            continue
        known = True
        found.update(i for i, a in enumerate(args[:n]) if (a.alias or "").endswith("!"))
    if known:
        return sorted(found)
    outs = _out_overload_outputs(node)
    if outs:
        return outs
    name = kind.split("::", 1)[-1]
    if facts.has_tag(kind, "writes_first_input") or (kind.startswith("aten::") and name.endswith("_")
                                       and not name.startswith("__") and n > 0):
        return [0]
    return []


def _out_overload_outputs(node: Node) -> list[int]:
    """The `out=` tensors of a call to an op's `.out` overload (`aten::add(%x, %y, %a, %out)`).

    PyTorch writes every `.out` overload as its functional overload's arguments followed by
    one `Tensor(a!)` per return; the registry holds the functional ones, so a call with exactly
    that many extra tensor inputs is taken to write them, unless a registered overload takes
    that many arguments itself (`aten::max(%x, %y)` is max.other, not `max(%x, out=%y)`)."""
    n = len(node.inputs)
    if any(len(e.schema.arguments) == n and not e.schema.variadic for e in _entries(node.kind)):
        return []
    for e in _entries(node.kind):
        s = e.schema
        extra = n - len(s.arguments)
        if s.variadic or extra <= 0 or extra != len(s.returns):
            continue
        tail = list(range(len(s.arguments), n))
        if all(isinstance(node.inputs[i].type, TensorType) for i in tail):
            return tail
    return []


def _no_default():
    from irjit.ops.registry import NO_DEFAULT
    return NO_DEFAULT


def is_mutating(node: Node) -> bool:
    """Whether the node's schema writes to one of its inputs (`FunctionSchema::is_mutable`)."""
    return bool(mutated_inputs(node))


def _view_sources(node: Node) -> Optional[list[int]]:
    """Inputs each output may alias according to the schema (`Tensor(a)` returns), or None
    when the registry has no schema for the node."""
    entries = [e for e in _entries(node.kind) if not e.schema.variadic]
    if not entries:
        return None
    out: set[int] = set()
    for e in entries:
        letters = {(r.alias or "").rstrip("!") for r in e.schema.returns if r.alias}
        out.update(i for i, a in enumerate(e.schema.arguments[:len(node.inputs)])
                   if a.alias and a.alias.rstrip("!") in letters)
    out.update(_out_overload_outputs(node))
    return sorted(out)


def _alias_kinds(t: Type) -> list:
    """The wildcard sets a value of type `t` may point into (PyTorch's mapTypeToAliasTypeSet):
    one for tensors, one per kind of list, dict or other mutable type; a tuple or optional
    those of what it contains."""
    if isinstance(t, OptionalType):
        return _alias_kinds(t.elem)
    if isinstance(t, TupleType):
        return sorted({k for e in t.contained() for k in _alias_kinds(e)})
    if not is_mutable_type(t):
        return []
    if isinstance(t, TensorType):
        return ["Tensor"]
    if isinstance(t, ListType):
        # a list's own set, and (a wildcard list holds wildcards) those of its elements
        elem = t.elem.elem if isinstance(t.elem, OptionalType) else t.elem
        return sorted({"List[Tensor]" if isinstance(elem, TensorType) else f"List[{elem}]",
                       *_alias_kinds(t.elem)})
    return [str(t)]



class AliasDb:
    """Alias sets and writes of a graph, enough for DCE, CSE, pooling and constant folding."""

    def __init__(self, graph: Graph):
        self.graph = graph
        self._parent: dict[Value, Value] = {}
        self._wildcard_roots: dict[str, Value] = {}
        # set root -> the wildcard kinds a container in that set holds (PyTorch's contained
        # elements): it may reach those wildcards without the kinds' sets being merged
        self._contains: dict[Value, set[str]] = {}
        self._writes: dict[Node, set[Value]] = {}
        self._wildcard_writers: set[Node] = set()
        for v in graph.inputs:
            self._set_wildcard(v)
        self._analyze_block(graph.block)
        self._written_roots = {self._find(v) for vs in self._writes.values() for v in vs}
        if self._wildcard_writers:
            self._written_roots.update(self._find(r) for r in self._wildcard_roots.values())

    @property
    def _wildcard_root(self) -> Optional[Value]:
        """A representative wildcard (any kind), for callers asking whether one exists."""
        return next(iter(self._wildcard_roots.values()), None)

    # ---- union-find
    def _find(self, v: Value) -> Value:
        root = v
        while self._parent.get(root, root) is not root:
            root = self._parent[root]
        while v is not root:
            nxt = self._parent.get(v, v)
            self._parent[v] = root
            v = nxt
        return root

    def _union(self, a: Value, b: Value) -> None:
        if not (is_mutable_type(a.type) and is_mutable_type(b.type)):
            return
        ra, rb = self._find(a), self._find(b)
        if ra is not rb:
            self._parent[ra] = rb
            if ra in self._contains:
                self._contains.setdefault(rb, set()).update(self._contains.pop(ra))

    def _roots(self, v: Value) -> set:
        """The sets `v` may reach: its own, and those of the wildcards it contains."""
        r = self._find(v)
        kinds = self._contains.get(r)
        if not kinds:
            return {r}
        return {r} | {self._find(self._wildcard_roots[k]) for k in kinds}

    def _set_wildcard(self, v: Value) -> None:
        if not is_mutable_type(v.type) or isinstance(v.type, ClassType):
            return
        for kind in _alias_kinds(v.type):
            root = self._wildcard_roots.get(kind)
            if root is None:
                self._wildcard_roots[kind] = v
            else:
                self._union(v, root)

    # ---- building
    def _analyze_block(self, block: Block) -> None:
        for n in block.nodes():
            self._analyze_node(n)

    def _analyze_node(self, n: Node) -> None:
        for b in n.blocks:
            self._analyze_block(b)
        kind = n.kind
        if kind == "prim::If":
            for b in n.blocks:
                for o, bo in zip(n.outputs, b.outputs):
                    self._union(o, bo)
        elif kind == "prim::Loop":
            body = n.blocks[0]
            for o, init, param, bo in zip(n.outputs, n.inputs[2:], body.inputs[1:], body.outputs[1:]):
                for v in (init, param, bo):
                    self._union(o, v)
        elif facts.has_tag(kind, "opaque"):
            for v in list(n.inputs) + list(n.outputs):
                self._set_wildcard(v)
            self._wildcard_writers.add(n)
        elif kind == "prim::GetAttr":
            for o in n.outputs:
                self._set_wildcard(o)
        elif facts.has_tag(kind, "container_construct") and is_mutable_type(n.output.type):
            self._analyze_container_construct(n)
        elif facts.has_tag(kind, "extractor"):
            # PyTorch's analyzeExtractor: an element taken out may be anything put in
            for o in n.outputs:
                self._set_wildcard(o)
        elif facts.has_tag(kind, "pass_through"):
            for o in n.outputs:
                for i in n.inputs:
                    self._union(o, i)
        elif kind.startswith("aten::") or kind.startswith("prim::"):
            sources = _view_sources(n)
            if sources is None and kind.startswith("aten::"):
                sources = list(range(len(n.inputs))) if is_mutating(n) else []
            for i in sources or ():
                for o in n.outputs:
                    self._union(o, n.inputs[i])
        written = [n.inputs[i] for i in mutated_inputs(n) if i < len(n.inputs)]
        if written:
            self._writes[n] = set(written)

    def _analyze_container_construct(self, n: Node) -> None:
        """PyTorch's analyzeContainerConstruct: what goes into a container may be reached
        through it from anywhere, so the elements become wildcards and the container holds
        their kinds' wildcards; a list only read by one cat/stack (or a tuple the graph
        returns) keeps its elements instead."""
        uses = n.output.uses
        if len(uses) == 1 and (facts.has_tag(uses[0].user.kind, "non_escaping_list_user") or (
                isinstance(n.output.type, TupleType) and uses[0].user.kind == "prim::Return"
                and uses[0].user.owning_block is self.graph.block)):
            for i in n.inputs:
                self._union(n.output, i)
            return
        for i in n.inputs:
            self._set_wildcard(i)
        kinds = {k for i in n.inputs for k in _alias_kinds(i.type) if is_mutable_type(i.type)}
        if kinds:
            self._contains.setdefault(self._find(n.output), set()).update(kinds)

    # ---- queries
    def is_wildcard(self, v: Value) -> bool:
        if not is_mutable_type(v.type):
            return False
        root = self._find(v)
        return any(self._find(self._wildcard_roots[k]) is root
                   for k in _alias_kinds(v.type) if k in self._wildcard_roots)

    def may_alias(self, a: Value, b: Value) -> bool:
        if not (is_mutable_type(a.type) and is_mutable_type(b.type)):
            return False
        return self._find(a) is self._find(b)

    def may_contain_alias(self, a: Iterable[Value], b: Iterable[Value]) -> bool:
        roots = set().union(*(self._roots(v) for v in b if is_mutable_type(v.type)))
        return any(is_mutable_type(v.type) and not self._roots(v).isdisjoint(roots) for v in a)

    def written_by(self, node: Node) -> list[Value]:
        """The values a node writes (its own and those of nodes nested in its blocks)."""
        out = list(self._writes.get(node, ()))
        for inner in node.walk():
            out.extend(self._writes.get(inner, ()))
        return out

    def writes_to_wildcard(self, node: Node) -> bool:
        if node in self._wildcard_writers or any(m in self._wildcard_writers for m in node.walk()):
            return True
        return any(self.is_wildcard(v) for v in self.written_by(node))

    def writes_to_alias(self, node: Node, values: Iterable[Value]) -> bool:
        written = {self._find(v) for v in self.written_by(node)}
        if node in self._wildcard_writers or any(m in self._wildcard_writers for m in node.walk()):
            written.update(self._find(r) for r in self._wildcard_roots.values())
        if not written:  # (most nodes write nothing: no need to look at `values`)
            return False
        return any(is_mutable_type(v.type) and not self._roots(v).isdisjoint(written) for v in values)

    def has_writers_value(self, v: Value) -> bool:
        return is_mutable_type(v.type) and not self._roots(v).isdisjoint(self._written_roots)

    def has_writers(self, node: Node) -> bool:
        """Whether anything in the graph writes to memory an input or output may alias."""
        return any(self.has_writers_value(v) for v in list(node.inputs) + list(node.outputs))

    def escapes_scope(self, values: Iterable[Value]) -> bool:
        vals = [v for v in values if is_mutable_type(v.type)]
        return any(self.is_wildcard(v) for v in vals) or \
            self.may_contain_alias(vals, self.graph.outputs)

    def safe_to_change_aliasing(self, a: Iterable[Value], b: Iterable[Value]) -> bool:
        """`AliasDb::safeToChangeAliasingRelationship`."""
        a, b = list(a), list(b)
        if any(self.has_writers_value(v) for v in a + b):
            return False
        return not (self.escapes_scope(a) and self.escapes_scope(b))
