"""What a picture of a graph shows, before any drawing: boxes for nodes, arrows for values,
nested clusters for scopes (the module hierarchy a tracer records), subgraphs (autodiff,
fusion and native groups) and If/Loop blocks. `irjit.graph_dot` draws it with Graphviz and
`irjit.html_view` puts it in a page.

Arguments that are constants (numbers, int lists, strings, None) are written into the box of
the node that reads them (`stride=[1, 1]`, named after the op's schema) instead of being drawn;
`prim::GetAttr` chains from `%self` become one box per parameter (`conv.weight`), placed with
the node that reads it. Scopes deeper than `depth` levels collapse into one box each.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from irjit.compiler.ir import (BOOL, ClassType, Graph, ListType, Node, OptionalType, TensorType,
                               TupleType, Value)
from irjit.compiler.ir.attributes import format_attribute

# Nodes that hold a `Subgraph` and how their cluster is labelled and coloured.
NATIVE_GROUP = "prim::NativeGroup"
_MODULE_PREFIX = "__module."
_LEGACY_ID = re.compile(r"\$\d+$")
_MANGLE = re.compile(r"___torch_mangle_\d+\.")
MAX_LABEL = 48
# Graphviz's layout time grows steeply with cluster nesting (200 nested If blocks take it
# minutes); clusters deeper than this are drawn flat inside the deepest one.
MAX_CLUSTER_DEPTH = 16


@dataclass
class PNode:
    """One box: an op, a graph input or output, a parameter, a block's parameters or results,
    or a collapsed scope."""
    id: str
    role: str  # "op", "input", "param", "output", "block_param", "block_return", "collapsed"
    title: str  # the first line (the op's kind, the input's name)
    details: list[str] = field(default_factory=list)  # constant arguments, attributes
    kind: str = ""  # the IR node kind, for ops
    info: str = ""  # the full text shown on hover: node line, outputs' types, source, scope
    source: Optional[str] = None  # `file:line:col`
    scope: str = ""  # `__module.seq/__module.seq.0`
    count: int = 1  # nodes folded into it (a collapsed scope)


@dataclass
class PEdge:
    """An arrow from the box that makes a value to a box that reads it."""
    tail: str
    head: str
    label: str  # the value's type, shortened (`Float(1, 32, 6, 6)`), or "" when unknown
    info: str  # `%name : full type`
    style: str = "data"  # "data", or "flow" (into a block's parameters, out of its results)


@dataclass
class PCluster:
    """A box around boxes: a scope, a group's subgraph, an If/Loop node or one of its blocks."""
    id: str
    role: str  # "root", "scope", "group", "native", "control", "block"
    label: str
    info: str = ""
    scope_path: tuple[str, ...] = ()  # for scopes: the names from the root
    nodes: list[PNode] = field(default_factory=list)
    clusters: list["PCluster"] = field(default_factory=list)
    depth: int = 0  # how many clusters are around it

    def child(self, make) -> "PCluster":
        """A new cluster inside this one (`make()` builds it), or this one when clusters
        would nest deeper than MAX_CLUSTER_DEPTH."""
        if self.depth >= MAX_CLUSTER_DEPTH:
            return self
        c = make()
        c.depth = self.depth + 1
        self.clusters.append(c)
        return c

    def walk(self):
        """This cluster and every cluster inside it, outermost first."""
        yield self
        for c in self.clusters:
            yield from c.walk()

    def all_nodes(self):
        for c in self.walk():
            yield from c.nodes


@dataclass
class Picture:
    root: PCluster
    edges: list[PEdge]
    title: str = ""

    def node(self, node_id: str) -> PNode:
        return next(n for n in self.root.all_nodes() if n.id == node_id)


def scope_label(name: str) -> str:
    """A scope's own name as a reader wants it: `__module.seq.0` -> `seq.0`,
    `Linear$4569919120` (the 2017 format's) -> `Linear`."""
    if name.startswith(_MODULE_PREFIX):
        name = name[len(_MODULE_PREFIX):] or name
    return _LEGACY_ID.sub("", name)


def short_type(t) -> str:
    """The part of a type worth printing on an arrow: dtype and sizes of a tensor
    (`Float(1, 32, 6, 6)`), the type of anything else; "" when nothing is known."""
    if isinstance(t, TensorType):
        if t.sizes is None:
            return t.scalar_type or ""
        sizes = ", ".join("*" if s is None else str(s) for s in t.sizes)
        return f"{t.scalar_type or 'Tensor'}({sizes})"
    if isinstance(t, ClassType):
        return t.name
    if isinstance(t, TupleType) and not getattr(t, "names", None):
        return _clip("(" + ", ".join(short_type(e) or "Tensor" for e in t.elems) + ")")
    if isinstance(t, ListType) and isinstance(t.elem, TensorType):
        return f"{short_type(t.elem) or 'Tensor'}[]"
    if isinstance(t, OptionalType) and isinstance(t.elem, TensorType):
        return f"{short_type(t.elem) or 'Tensor'}?"
    return _clip(_MANGLE.sub("", str(t)))


def _clip(text: str, limit: int = MAX_LABEL) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def constant_text(n: Node) -> str:
    """How a `prim::Constant` reads as an argument: `1`, `True`, `[1, 1]`, `"mean"`, `None`."""
    entry = n.attrs.get("value")
    if entry is None:
        return "None"
    kind, value = entry
    if kind == "i" and n.outputs[0].type == BOOL:
        return "True" if value else "False"
    if kind == "f":  # the shortest repr (1e-05), not the printed 1.0000000000000001e-05
        return repr(float(value))
    return _clip(format_attribute(kind, value))


def _small_tensor(n: Node) -> bool:
    """A tensor constant whose printed value is short (`{2}`), written where it is read."""
    if n.attr_kind("value") != "t":
        return False
    text = format_attribute("t", n.attr("value"))
    return not text.startswith("<") and len(text) <= 24


def _argument_names(n: Node) -> list[Optional[str]]:
    """The schema's names for `n`'s inputs (None where no schema is known)."""
    if n.kind == "prim::Loop":
        return (["max_trip_count", "condition"] + [None] * len(n.inputs))[:len(n.inputs)]
    if n.kind == "prim::If":
        return ["condition"]
    if "::" not in n.kind or n.kind.startswith("prim::"):
        return [None] * len(n.inputs)
    try:
        from irjit.compiler.schema_match import schema_for_inputs
        schema = schema_for_inputs(n.kind, list(n.inputs))
    except Exception:  # noqa: BLE001  (a node whose op the registry does not know)
        schema = None
    if schema is None:
        return [None] * len(n.inputs)
    names = [a.name for a in schema.arguments]
    return names[:len(n.inputs)] + [None] * (len(n.inputs) - len(names))


def _short_kind(kind: str) -> str:
    return kind[len("aten::"):] if kind.startswith("aten::") else kind


def _module_classes(graph: Graph) -> dict[str, str]:
    """Attribute path -> class name of the submodules `%self`'s GetAttr chains reach
    (`seq.0` -> `Linear`), to name traced scopes."""
    from irjit.runtime.loader import module_classes
    return {path: ClassType(name).name for path, name in module_classes(graph).items()}


class _Builder:
    """Walks a graph once, filling clusters, boxes and arrows."""

    def __init__(self, graph: Graph, depth: Optional[int], fold_constants: bool):
        self.graph = graph
        self.depth = depth
        self.fold = fold_constants
        self.root = PCluster("root", "root", "")
        self.edges: list[PEdge] = []
        self.makers: dict[Value, str] = {}  # value -> the box that makes it
        self.folded: dict[Value, str] = {}  # value -> its text, written into its readers
        self.attr_paths: dict[Value, str] = {}  # module-valued GetAttr results -> dotted path
        self.pending_params: dict[Value, Node] = {}  # parameter reads placed with a reader
        self.counter = 0
        self.scope_clusters: dict[tuple[str, tuple[str, ...]], PCluster] = {}
        self.collapsed: dict[tuple[str, tuple[str, ...]], PNode] = {}
        self.classes = _module_classes(graph)
        self._edge_keys: set[tuple[str, str, int]] = set()
        self.group_index: dict[int, int] = {}
        self.outer: dict[Value, Value] = {}  # a subgraph's input -> the value passed to it

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def _module_class(self, scope_name: str) -> str:
        """The class of the module a traced scope (`__module.seq.0`) is named after."""
        if not scope_name.startswith(_MODULE_PREFIX):
            return ""
        return self.classes.get(scope_name[len(_MODULE_PREFIX):], "")

    @staticmethod
    def _module_path(cluster: PCluster) -> str:
        """The attribute path of the module a traced scope cluster stands for (`seq.0`)."""
        if cluster.role != "scope" or not cluster.scope_path[-1].startswith(_MODULE_PREFIX):
            return ""
        return cluster.scope_path[-1][len(_MODULE_PREFIX):]

    # ---- placing boxes
    def _scope_cluster(self, container: PCluster, base: tuple[str, ...],
                       path: tuple[str, ...]) -> tuple[PCluster, Optional[tuple[str, ...]]]:
        """The cluster inside `container` for scope `path` (the part below `base`, the
        container's own scope, is nested), and the collapsed scope's path when `path` lies
        deeper than the depth limit."""
        rel_start = len(base) if path[:len(base)] == base else 0
        cluster = container
        for level in range(rel_start + 1, len(path) + 1):
            if self.depth is not None and level > self.depth:
                return cluster, path[:level]
            key = (container.id, path[:level])
            child = self.scope_clusters.get(key)
            if child is None:
                name = scope_label(path[level - 1])
                module = self._module_class(path[level - 1])
                label = f"{name} ({module})" if module and module != name else name
                child = cluster.child(lambda: PCluster(
                    self.fresh("c"), "scope", label, info="/".join(path[:level]),
                    scope_path=path[:level]))
                self.scope_clusters[key] = child
            cluster = child
        return cluster, None

    def place(self, node: Node, container: PCluster, base: tuple[str, ...]
              ) -> tuple[PCluster, Optional[PNode]]:
        """Where `node` goes: its scope's cluster, or the box of a collapsed scope. A group
        node that passes made (in the root scope, or an outer one) goes where its nodes'
        scopes meet."""
        path = tuple(node.scope.path())
        if node.attr_kind("Subgraph") == "g" and node.attr("Subgraph") is not None:
            inner = _common_scope(node.attr("Subgraph"))
            if inner[:len(path)] == path:
                path = inner
        cluster, collapsed = self._scope_cluster(container, base, path)
        if collapsed is None:
            return cluster, None
        key = (container.id, collapsed)
        box = self.collapsed.get(key)
        if box is None:
            name = scope_label(collapsed[-1])
            module = self._module_class(collapsed[-1])
            box = PNode(self.fresh("n"), "collapsed", f"{name} ({module})" if module else name,
                        scope="/".join(collapsed), count=0)
            cluster.nodes.append(box)
            self.collapsed[key] = box
        box.count += 1 + sum(1 for _ in node.walk())
        box.details = [f"{box.count} nodes"]
        box.info = f"scope {box.scope} (collapsed): {box.count} nodes"
        return cluster, box

    # ---- arrows
    def edge(self, value: Value, head: str, style: str = "data") -> None:
        tail = self.makers.get(value)
        if tail is None or tail == head:
            return
        key = (tail, head, id(value))
        if key in self._edge_keys:
            return
        self._edge_keys.add(key)
        label = short_type(value.type)
        outer = self.outer.get(value)
        while not label and outer is not None:  # a subgraph input: the value passed to it
            value, outer = outer, self.outer.get(outer)
            label = short_type(value.type)
        self.edges.append(PEdge(tail, head, label, f"%{value.name} : {value.type}", style))

    def read(self, node_box: PNode, n: Node, cluster: PCluster, base) -> None:
        """Arrows into `node_box` for `n`'s inputs; constant inputs become detail lines."""
        names = _argument_names(n)
        for i, v in enumerate(n.inputs):
            if v in self.folded:
                name = names[i] if i < len(names) and names[i] else f"#{i}"
                node_box.details.append(f"{name}={self.folded[v]}")
                continue
            self.ensure_param(v, cluster, base)
            self.edge(v, node_box.id)

    def ensure_param(self, v: Value, cluster: PCluster, base) -> None:
        """A parameter read (`self.conv.weight`) gets its box beside its first reader."""
        n = self.pending_params.pop(v, None)
        if n is None:
            return
        place, collapsed = self.place(n, cluster, base)
        if collapsed is not None:
            self.makers[v] = collapsed.id
            return
        path = self.attr_paths.get(n.inputs[0])
        name = f"{path}.{n.attr('name')}" if path else str(n.attr("name"))
        module = self._module_path(place)
        shown = name[len(module) + 1:] if module and name.startswith(module + ".") else name
        box = PNode(self.fresh("n"), "param", shown, kind=n.kind, scope=n.scope.names_from_root(),
                    info=f"parameter {name} : {v.type}\n%{v.name} = {n.kind}")
        place.nodes.append(box)
        self.makers[v] = box.id

    # ---- the walk
    def build(self) -> Picture:
        g = self.graph
        for i, v in enumerate(g.inputs):
            if i == 0 and isinstance(v.type, ClassType):
                self.attr_paths[v] = ""
                continue
            box = PNode(self.fresh("n"), "input", f"%{v.name}", details=[short_type(v.type)],
                        info=f"input %{v.name} : {v.type}")
            self.root.nodes.append(box)
            self.makers[v] = box.id
        self.block(g.block, self.root, ())
        out = PNode(self.fresh("n"), "output", "return",
                    info="graph outputs: " + ", ".join(f"%{v.name} : {v.type}"
                                                       for v in g.outputs))
        self.root.nodes.append(out)
        for v in g.outputs:
            self.ensure_param(v, self.root, ())
            self.edge(v, out.id)
        return Picture(self.root, self.edges)

    def block(self, block, container: PCluster, base: tuple[str, ...]) -> None:
        for n in block.nodes():
            self.node(n, container, base)

    def node(self, n: Node, container: PCluster, base: tuple[str, ...]) -> None:
        if self.fold and self._folds(n):
            return
        cluster, collapsed = self.place(n, container, base)
        if collapsed is not None:
            for v in _used_values(n):
                if self.pending_params.pop(v, None) is not None:  # the module's own weights
                    self.makers[v] = collapsed.id
                self.edge(v, collapsed.id)
            for v in n.outputs:
                self.makers[v] = collapsed.id
            return
        if n.attr_kind("Subgraph") == "g" and n.attr("Subgraph") is not None:
            self.group(n, cluster)
        elif n.blocks:
            self.control(n, cluster)
        else:
            box = self.op_box(n)
            cluster.nodes.append(box)
            self.read(box, n, cluster, base)
            for v in n.outputs:
                self.makers[v] = box.id

    def _folds(self, n: Node) -> bool:
        """Constants, constant lists and module GetAttrs are not drawn (see the module doc)."""
        if n.kind == "prim::Constant" and len(n.outputs) == 1 and (
                not isinstance(n.outputs[0].type, TensorType) or _small_tensor(n)):
            self.folded[n.outputs[0]] = constant_text(n)
            return True
        if n.kind == "prim::ListConstruct" and len(n.outputs) == 1 and \
                all(v in self.folded for v in n.inputs):
            self.folded[n.outputs[0]] = _clip("[" + ", ".join(self.folded[v] for v in n.inputs)
                                              + "]")
            return True
        if n.kind == "prim::GetAttr" and n.inputs and n.inputs[0] in self.attr_paths:
            base = self.attr_paths[n.inputs[0]]
            path = f"{base}.{n.attr('name')}" if base else str(n.attr("name"))
            if isinstance(n.outputs[0].type, ClassType):
                self.attr_paths[n.outputs[0]] = path
            else:
                self.pending_params[n.outputs[0]] = n
            return True
        return False

    def op_box(self, n: Node) -> PNode:
        details = []
        if n.kind == "prim::Constant" and isinstance(n.outputs[0].type, TensorType):
            # a tensor constant: a frozen graph's weight
            name = "%" + n.outputs[0].name
            return PNode(self.fresh("n"), "param", name, kind=n.kind, info=self.info(n),
                         source=str(n.source) if n.source else None,
                         scope=n.scope.names_from_root())
        for name, (akind, value) in n.attrs.items():
            if akind not in ("g", "gs"):
                details.append(_clip(f"{name}={format_attribute(akind, value)}"))
        title = _short_kind(n.kind)
        if n.python_op is not None:  # the 2017 format's `^Addmm(0, 1, True)`
            title = n.python_op[0]
            details.insert(0, _clip(n.python_op[1]))
        return PNode(self.fresh("n"), "op", title, details, kind=n.kind,
                     info=self.info(n), source=str(n.source) if n.source else None,
                     scope=n.scope.names_from_root())

    def info(self, n: Node) -> str:
        """What hovering over a node shows: its printed line, outputs' types, source, scope."""
        lines = [f"{n.kind}(" + ", ".join(f"%{v.name}" for v in n.inputs) + ")"]
        lines += [f"%{v.name} : {v.type}" for v in n.outputs]
        if n.source is not None:
            lines.append(f"# {n.source}")
        if not n.scope.is_root():
            lines.append(f"scope: {n.scope.names_from_root()}")
        return "\n".join(lines)

    def group(self, n: Node, cluster: PCluster) -> None:
        """A group node as a cluster around its subgraph: the subgraph's inputs are the
        node's inputs, its outputs the node's outputs."""
        sub: Graph = n.attr("Subgraph")
        index = self.group_index.get(id(n.graph), 0)  # numbered per graph, as printed
        self.group_index[id(n.graph)] = index + 1
        role = "native" if n.kind == NATIVE_GROUP else "group"
        box = cluster.child(lambda: PCluster(self.fresh("c"), role, f"{n.kind}_{index}",
                                             info=self.info(n)))
        base = cluster.scope_path if cluster.role == "scope" else tuple(n.scope.path())
        for inner, outer in zip(sub.inputs, n.inputs):
            self.outer[inner] = outer
            self.ensure_param(outer, cluster, base)
            if outer in self.folded:
                self.folded[inner] = self.folded[outer]
            elif outer in self.makers:
                self.makers[inner] = self.makers[outer]
        self.block(sub.block, box, base)
        for inner, outer in zip(sub.outputs, n.outputs):
            if inner in self.makers:
                self.makers[outer] = self.makers[inner]
            elif inner in self.folded:
                self.folded[outer] = self.folded[inner]
        if not box.nodes and not box.clusters:  # an empty subgraph still shows where it is
            empty = PNode(self.fresh("n"), "op", f"{n.kind}_{index}", kind=n.kind,
                          info=self.info(n))
            box.nodes.append(empty)
            for v in n.inputs:
                self.edge(v, empty.id)
            for v in n.outputs:
                self.makers[v] = empty.id

    def control(self, n: Node, cluster: PCluster) -> None:
        """`prim::If`/`prim::Loop` as a cluster: the node's box (reading its inputs), one
        cluster per block, and a box for its results that the blocks' results flow into."""
        box = cluster.child(lambda: PCluster(
            self.fresh("c"), "control", f"{n.kind} %{n.outputs[0].name}" if n.outputs
            else n.kind, info=self.info(n)))
        base = tuple(n.scope.path())
        head = self.op_box(n)
        box.nodes.append(head)
        self.read(head, n, box, base)
        join = None
        if n.outputs:
            join = PNode(self.fresh("n"), "block_return", "results",
                         [", ".join(f"%{v.name}" for v in n.outputs)], kind=n.kind,
                         info="\n".join(f"%{v.name} : {v.type}" for v in n.outputs))
        names = ("then", "else") if n.kind == "prim::If" else ("body",) * len(n.blocks)
        for i, b in enumerate(n.blocks):
            label = f"block{i} ({names[i]})" if i < len(names) else f"block{i}"
            inner = box.child(lambda: PCluster(self.fresh("c"), "block", label))
            if b.inputs:
                params = PNode(self.fresh("n"), "block_param",
                               ", ".join(f"%{v.name}" for v in b.inputs), kind=n.kind,
                               info="\n".join(f"%{v.name} : {v.type}" for v in b.inputs))
                inner.nodes.append(params)
                self.edges.append(PEdge(head.id, params.id, "", "", "flow"))
                for v in b.inputs:
                    self.makers[v] = params.id
            self.block(b, inner, base)
            if join is not None and b.outputs:
                shown = [f"%{v.name}={self.folded[v]}" if v in self.folded else f"%{v.name}"
                         for v in b.outputs]
                ret = PNode(self.fresh("n"), "block_return", "->", [", ".join(shown)],
                            kind=n.kind,
                            info="\n".join(f"-> %{v.name} : {v.type}" for v in b.outputs))
                inner.nodes.append(ret)
                for v in b.outputs:
                    self.ensure_param(v, inner, base)
                    self.edge(v, ret.id)
                self.edges.append(PEdge(ret.id, join.id, "", "", "flow"))
        if join is not None:
            box.nodes.append(join)
            for v in n.outputs:
                self.makers[v] = join.id


def _common_scope(graph: Graph) -> tuple[str, ...]:
    """The longest scope path shared by every node of `graph` that has a scope."""
    common: Optional[tuple[str, ...]] = None
    for n in graph.walk():
        if n.kind == "prim::Constant":
            continue
        path = tuple(n.scope.path())
        if common is None:
            common = path
        else:
            k = 0
            while k < min(len(common), len(path)) and common[k] == path[k]:
                k += 1
            common = common[:k]
        if not common:
            return ()
    return common or ()


def _used_values(node: Node) -> list[Value]:
    """The values `node` reads from outside itself: its inputs, then those its blocks read."""
    from irjit.compiler.codegen.partition import used_values
    return used_values(node)


def picture(graph: Graph, depth: Optional[int] = None, fold_constants: bool = True) -> Picture:
    """The picture of `graph`: clusters, boxes and arrows. `depth` collapses scopes nested
    deeper than that many levels into one box each (0: every top-level scope is one box);
    `fold_constants=False` draws constants and GetAttr chains as boxes of their own."""
    if depth is not None and depth < 0:
        raise ValueError(f"depth must not be negative (got {depth})")
    return _Builder(graph, depth, fold_constants).build()


def max_scope_depth(graph: Graph) -> int:
    """How deeply the scopes of `graph`'s nodes (and its subgraphs') nest."""
    deepest = 0
    stack = [graph]
    while stack:
        g = stack.pop()
        for n in g.walk():
            deepest = max(deepest, len(n.scope.path()))
            sub = n.attr("Subgraph") if n.attr_kind("Subgraph") == "g" else None
            if sub is not None:
                stack.append(sub)
    return deepest
