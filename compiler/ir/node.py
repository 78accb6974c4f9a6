"""Values, nodes and blocks: the SSA core of the IR, with use-def chains kept up to date.

As in PyTorch, a block's nodes form a circular doubly-linked list whose sentinel is the
block's return node (`prim::Return`, whose inputs are the block's outputs); the block's
parameters are the outputs of its `prim::Param` node. Every mutation goes through methods
here so that `Value.uses` is always exact.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator, Optional

from .scope import Scope
from .source import SourceLocation
from irjit.ops.types import Type, TENSOR

if TYPE_CHECKING:
    from .graph import Graph

_POS_STEP = 1 << 20
_POS_MIN = -(1 << 62)
_POS_MAX = 1 << 62


class Use:
    """One use of a value: input number `offset` of `user`."""

    __slots__ = ("user", "offset")

    def __init__(self, user: "Node", offset: int):
        self.user = user
        self.offset = offset

    def __eq__(self, other):
        return isinstance(other, Use) and self.user is other.user and self.offset == other.offset

    def __hash__(self):
        return hash((id(self.user), self.offset))

    def __repr__(self):
        return f"Use({self.user.kind}, {self.offset})"


class Value:
    """An SSA value: an output of exactly one node (block parameters are outputs of `prim::Param`)."""

    __slots__ = ("node", "offset", "type", "unique", "debug_name", "uses")

    def __init__(self, node: "Node", offset: int, type: Type, unique: int):
        self.node = node
        self.offset = offset
        self.type = type
        self.unique = unique
        self.debug_name: Optional[str] = None
        self.uses: list[Use] = []

    @property
    def graph(self) -> "Graph":
        return self.node.graph

    @property
    def name(self) -> str:
        """The name PyTorch prints after `%`: the debug name, or else the unique number."""
        return self.debug_name if self.debug_name is not None else str(self.unique)

    def set_debug_name(self, name: Optional[str]) -> "Value":
        """Name the value; like PyTorch, a previous owner of the name is renamed `name.N`."""
        self.graph.rename_value(self, name)
        return self

    def copy_metadata(self, other: "Value") -> "Value":
        self.type = other.type
        if other.debug_name is not None:
            self.set_debug_name(other.debug_name)
        return self

    def replace_all_uses_with(self, new: "Value") -> None:
        assert new is not self
        for use in list(self.uses):
            use.user._set_input(use.offset, new)

    def replace_all_uses_after_node_with(self, node: "Node", new: "Value") -> None:
        """Redirect only the uses that come after `node` (in program order)."""
        for use in list(self.uses):
            if use.user.is_after(node):
                use.user._set_input(use.offset, new)

    def __repr__(self):
        return f"%{self.name} : {self.type}"


class Node:
    """An operation: a kind (`aten::add`), inputs, outputs, attributes, nested blocks, a scope
    and optionally a source location."""

    __slots__ = ("kind", "graph", "owning_block", "inputs", "outputs", "attrs", "blocks",
                 "scope", "source", "text_line", "prev", "next", "_pos", "legacy_uses", "python_op",
                 "__weakref__")

    def __init__(self, graph: "Graph", kind: str):
        self.kind = kind
        self.graph = graph
        self.owning_block: Optional[Block] = None
        self.inputs: list[Value] = []
        self.outputs: list[Value] = []
        self.attrs: dict[str, tuple[str, Any]] = {}
        self.blocks: list[Block] = []
        self.scope: Scope = graph.current_scope
        self.source: Optional[SourceLocation] = None
        self.text_line: Optional[int] = None  # the line of the .ir text it was read from
        self.prev: Optional[Node] = None
        self.next: Optional[Node] = None
        self._pos = 0
        self.legacy_uses: Optional[str] = None  # verbatim `uses = [...]` of the 2017 format
        self.python_op: Optional[tuple[str, str]] = None  # prim::PythonOp: (name, "(scalar args)")

    # ---- identity and description
    @property
    def output(self) -> Value:
        """The single output of a one-output node."""
        assert len(self.outputs) == 1, f"{self.kind} has {len(self.outputs)} outputs"
        return self.outputs[0]

    def is_inserted(self) -> bool:
        return self.owning_block is not None

    def __repr__(self):
        outs = ", ".join("%" + o.name for o in self.outputs)
        ins = ", ".join("%" + i.name for i in self.inputs)
        return f"<{outs} = {self.kind}({ins})>"

    # ---- attributes
    def set_attr(self, name: str, kind: str, value: Any) -> "Node":
        self.attrs[name] = (kind, value)
        return self

    def attr(self, name: str, default: Any = None) -> Any:
        entry = self.attrs.get(name)
        return default if entry is None else entry[1]

    def attr_kind(self, name: str) -> Optional[str]:
        entry = self.attrs.get(name)
        return None if entry is None else entry[0]

    def has_attr(self, name: str) -> bool:
        return name in self.attrs

    @property
    def subgraph(self) -> "Graph":
        return self.attr("Subgraph")

    def copy_attrs(self, other: "Node") -> "Node":
        for name, (kind, value) in other.attrs.items():
            if kind == "g" and value is not None:
                value = value.copy()
            elif kind == "gs":
                value = tuple(g.copy() for g in value if g is not None)
            self.attrs[name] = (kind, value)
        return self

    # ---- inputs
    def add_input(self, v: Value) -> Value:
        v.uses.append(Use(self, len(self.inputs)))
        self.inputs.append(v)
        return v

    def insert_input(self, i: int, v: Value) -> Value:
        for j in range(i, len(self.inputs)):
            self._find_use(j).offset += 1
        self.inputs.insert(i, v)
        v.uses.append(Use(self, i))
        return v

    def replace_input(self, i: int, new: Value) -> Value:
        old = self.inputs[i]
        self._set_input(i, new)
        return old

    def remove_input(self, i: int) -> None:
        self._drop_use(i)
        for j in range(i + 1, len(self.inputs)):
            self._find_use(j).offset -= 1
        del self.inputs[i]

    def remove_all_inputs(self) -> None:
        for i in range(len(self.inputs)):
            self._drop_use(i)
        self.inputs.clear()

    def _find_use(self, i: int) -> Use:
        for use in self.inputs[i].uses:
            if use.user is self and use.offset == i:
                return use
        raise AssertionError(f"use list of %{self.inputs[i].name} is missing input {i} of {self.kind}")

    def _drop_use(self, i: int) -> None:
        v = self.inputs[i]
        for k, use in enumerate(v.uses):
            if use.user is self and use.offset == i:
                del v.uses[k]
                return
        raise AssertionError("use list out of sync")

    def _set_input(self, i: int, new: Value) -> None:
        self._drop_use(i)
        self.inputs[i] = new
        new.uses.append(Use(self, i))

    # ---- outputs
    def add_output(self, type: Type = TENSOR, unique: Optional[int] = None) -> Value:
        v = Value(self, len(self.outputs), type, self.graph.claim_unique(unique))
        self.outputs.append(v)
        return v

    def insert_output(self, i: int, type: Type = TENSOR) -> Value:
        v = Value(self, i, type, self.graph.claim_unique(None))
        self.outputs.insert(i, v)
        for j in range(i + 1, len(self.outputs)):
            self.outputs[j].offset = j
        return v

    def erase_output(self, i: int) -> None:
        v = self.outputs[i]
        assert not v.uses, f"erasing output %{v.name} of {self.kind} which still has uses"
        self.graph.forget_value(v)
        del self.outputs[i]
        for j in range(i, len(self.outputs)):
            self.outputs[j].offset = j

    # ---- blocks
    def add_block(self) -> "Block":
        b = Block(self.graph, self)
        self.blocks.append(b)
        return b

    def erase_block(self, i: int) -> None:
        self.blocks[i].destroy()
        del self.blocks[i]

    # ---- position in the program
    def _link_after(self, prev: "Node") -> None:
        assert self.owning_block is None, f"{self.kind} is already inserted"
        nxt = prev.next
        self.owning_block = prev.owning_block
        self.prev, self.next = prev, nxt
        prev.next = self
        nxt.prev = self
        self._assign_position()

    def _assign_position(self) -> None:
        lo = self.prev._pos if self.prev is not self.owning_block.return_node else _POS_MIN
        hi = self.next._pos if self.next is not self.owning_block.return_node else _POS_MAX
        if self.prev is self.owning_block.return_node and self.next is self.owning_block.return_node:
            self._pos = 0
        elif hi == _POS_MAX and lo + _POS_STEP < _POS_MAX:
            self._pos = lo + _POS_STEP
        elif lo == _POS_MIN and hi - _POS_STEP > _POS_MIN:
            self._pos = hi - _POS_STEP
        elif hi - lo > 1:
            self._pos = (lo + hi) // 2
        else:
            self.owning_block._renumber()

    def insert_before(self, n: "Node") -> "Node":
        """Insert this (unlinked) node just before `n`."""
        self._link_after(n.prev)
        return self

    def insert_after(self, n: "Node") -> "Node":
        self._link_after(n)
        return self

    def _unlink(self) -> None:
        self.prev.next = self.next
        self.next.prev = self.prev
        self.prev = self.next = None
        self.owning_block = None

    def move_before(self, n: "Node") -> None:
        self._unlink()
        self.insert_before(n)

    def move_after(self, n: "Node") -> None:
        self._unlink()
        self.insert_after(n)

    def destroy(self) -> None:
        """Remove the node and its blocks from the graph; its outputs must be unused."""
        for v in self.outputs:
            assert not v.uses, f"destroying {self.kind} whose output %{v.name} is still used"
        for b in list(self.blocks):
            b.destroy()
        self.blocks.clear()
        self.remove_all_inputs()
        for v in self.outputs:
            self.graph.forget_value(v)
        if self.owning_block is not None:
            self._unlink()

    def is_before(self, other: "Node") -> bool:
        """Whether this node comes before `other` in program order (blocks nest inside nodes)."""
        if self is other:
            return False
        a, b = self, other
        if a.owning_block is b.owning_block:
            return a._precedes_sibling(b)
        depth_a, depth_b = a._depth(), b._depth()
        while depth_a > depth_b:
            a, depth_a = a.owning_block.owning_node, depth_a - 1
        while depth_b > depth_a:
            b, depth_b = b.owning_block.owning_node, depth_b - 1
        if a is b:  # one is nested inside the other
            return depth_a == self._depth()
        while a.owning_block is not b.owning_block:
            a, b = a.owning_block.owning_node, b.owning_block.owning_node
        if a is b:
            ba, bb = self._block_under(a), other._block_under(a)
            return a.blocks.index(ba) < a.blocks.index(bb)
        return a._precedes_sibling(b)

    def _precedes_sibling(self, other: "Node") -> bool:
        """Order within one block: the block's `prim::Return` comes after every node."""
        ret = self.owning_block.return_node
        if self is ret or other is ret:
            return other is ret
        return self._pos < other._pos

    def is_after(self, other: "Node") -> bool:
        return other.is_before(self)

    def _depth(self) -> int:
        d, b = 0, self.owning_block
        while b is not None and b.owning_node is not None:
            d += 1
            b = b.owning_node.owning_block
        return d

    def _block_under(self, ancestor: "Node") -> "Block":
        n = self
        while n.owning_block.owning_node is not ancestor:
            n = n.owning_block.owning_node
        return n.owning_block

    def walk(self) -> Iterator["Node"]:
        """This node's nested nodes, at any depth, in program order (not the node itself)."""
        return _walk_blocks(self.blocks)


class Block:
    """A list of nodes with parameters (the `prim::Param` node's outputs) and outputs (the
    `prim::Return` node's inputs). Owned by a node (`prim::If`, `prim::Loop`) or a graph."""

    __slots__ = ("graph", "owning_node", "param_node", "return_node")

    def __init__(self, graph: "Graph", owning_node: Optional[Node]):
        self.graph = graph
        self.owning_node = owning_node
        self.param_node = Node(graph, "prim::Param")
        self.return_node = Node(graph, "prim::Return")
        for n in (self.param_node, self.return_node):
            n.owning_block = self
        ret = self.return_node
        ret.next = ret.prev = ret
        self.param_node.prev = self.param_node.next = None

    @property
    def inputs(self) -> list[Value]:
        return self.param_node.outputs

    @property
    def outputs(self) -> list[Value]:
        return self.return_node.inputs

    def add_input(self, type: Type = TENSOR, name: Optional[str] = None,
                  unique: Optional[int] = None) -> Value:
        v = self.param_node.add_output(type, unique)
        if name is not None:
            v.set_debug_name(name)
        return v

    def insert_input(self, i: int, type: Type = TENSOR, name: Optional[str] = None) -> Value:
        v = self.param_node.insert_output(i, type)
        if name is not None:
            v.set_debug_name(name)
        return v

    def erase_input(self, i: int) -> None:
        self.param_node.erase_output(i)

    def register_output(self, v: Value) -> int:
        self.return_node.add_input(v)
        return len(self.return_node.inputs) - 1

    def insert_output(self, i: int, v: Value) -> None:
        self.return_node.insert_input(i, v)

    def erase_output(self, i: int) -> None:
        self.return_node.remove_input(i)

    def nodes(self) -> Iterator[Node]:
        """The block's nodes in order; the node just yielded may be destroyed safely."""
        ret = self.return_node
        n = ret.next
        while n is not ret:
            nxt = n.next
            yield n
            n = nxt

    def reversed_nodes(self) -> Iterator[Node]:
        ret = self.return_node
        n = ret.prev
        while n is not ret:
            prv = n.prev
            yield n
            n = prv

    def walk(self) -> Iterator[Node]:
        """Every node in this block and, at any depth, in the blocks of its nodes."""
        return _walk_blocks([self])

    @property
    def first_node(self) -> Node:
        """The first node, or the return node when the block is empty."""
        return self.return_node.next

    def append_node(self, n: Node) -> Node:
        n._link_after(self.return_node.prev)
        return n

    def prepend_node(self, n: Node) -> Node:
        n._link_after(self.return_node)
        return n

    def _renumber(self) -> None:
        pos = 0
        for n in self.nodes():
            n._pos = pos
            pos += _POS_STEP

    def destroy(self) -> None:
        """Destroy all nodes (last first, so every use disappears before its definition)."""
        self.return_node.remove_all_inputs()
        for n in list(self.reversed_nodes()):
            n.destroy()
        for v in self.param_node.outputs:
            self.graph.forget_value(v)

    def clone_from(self, src: "Block", value_map) -> None:
        """Append copies of `src`'s params, nodes and outputs (PyTorch's `Block::cloneFrom`).
        `value_map` gives the values defined outside `src`: a dict (which also collects the
        copies of `src`'s values) or a function of the old value. As in PyTorch, outputs get
        their metadata twice (in `createClone` and here), so names cloned within one graph
        get PyTorch's suffixes."""
        local: dict = value_map if isinstance(value_map, dict) else {}

        def env(v: Value) -> Value:
            if v in local:
                return local[v]
            return value_map(v) if callable(value_map) else v

        for v in src.inputs:
            local[v] = self.add_input(v.type).copy_metadata(v)
        for n in src.nodes():
            c = self.append_node(self.graph.clone_node(n, env))
            for old, new in zip(n.outputs, c.outputs):
                local[old] = new.copy_metadata(old)
        for v in src.outputs:
            self.register_output(env(v))




def _walk_blocks(blocks) -> Iterator[Node]:
    """The nodes of `blocks` in program order, nested blocks included, with an explicit stack
    (not recursion) so that graphs nested thousands of levels deep can be walked."""
    stack = [iter(blocks)]
    while stack:
        item = next(stack[-1], None)
        if item is None:
            stack.pop()
        elif isinstance(item, Block):
            stack.append(item.nodes())
        else:
            yield item
            if item.blocks:
                stack.append(iter(item.blocks))
