"""The Graph: owner of a top-level block, of value numbering and debug names, and of the scope tree."""

from __future__ import annotations

import re
from typing import Any, Iterator, Optional, Sequence

from .node import Block, Node, Value
from .scope import Scope
from irjit.ops.types import Type, TENSOR

_NUMERIC = re.compile(r"^[0-9]+$")


class Graph:
    """A TorchScript graph: inputs, nodes in one top block (with nested blocks), outputs."""

    def __init__(self):
        self.next_unique = 0
        self.unique_names: dict[str, Value] = {}
        self._name_base_suffix: dict[str, int] = {}
        self._used_uniques: set[int] = set()
        self.scope_root = Scope()
        self.current_scope = self.scope_root
        self.block = Block(self, None)
        self._insert_point: Node = self.block.return_node

    # ---- numbering and names
    def claim_unique(self, wanted: Optional[int]) -> int:
        """A fresh value number; `wanted` is honoured when still free (the parser keeps `%43`)."""
        if wanted is not None and wanted not in self._used_uniques:
            u = wanted
        else:
            while self.next_unique in self._used_uniques:
                self.next_unique += 1
            u = self.next_unique
        self._used_uniques.add(u)
        if u >= self.next_unique:
            self.next_unique = u + 1
        return u

    def forget_value(self, v: Value) -> None:
        if v.debug_name is not None and self.unique_names.get(v.debug_name) is v:
            del self.unique_names[v.debug_name]
        self._used_uniques.discard(v.unique)

    def rename_value(self, v: Value, name: Optional[str]) -> None:
        """PyTorch's `Value::setDebugName`, including how it renames a previous owner."""
        if name is not None and _NUMERIC.match(name):
            raise ValueError(f"names may not be numbers: {name!r}")
        if v.debug_name is not None and self.unique_names.get(v.debug_name) is v:
            del self.unique_names[v.debug_name]
        v.debug_name = None
        if not name:
            return
        old = self.unique_names.get(name)
        if old is not None:
            suffix, base = 1, name
            dot = name.rfind(".")
            if dot != -1 and dot + 1 != len(name) and name[dot + 1:].isdigit():
                suffix, base = int(name[dot + 1:]), name[:dot]
            if base in self._name_base_suffix:
                suffix = max(suffix, self._name_base_suffix[base] + 1)
            while True:
                replacement = f"{base}.{suffix}"
                suffix += 1
                if replacement not in self.unique_names:
                    break
            self._name_base_suffix[base] = suffix
            self.rename_value(old, replacement)
        self.unique_names[name] = v
        v.debug_name = name

    # ---- structure
    @property
    def inputs(self) -> list[Value]:
        return self.block.inputs

    @property
    def outputs(self) -> list[Value]:
        return self.block.outputs

    @property
    def return_node(self) -> Node:
        return self.block.return_node

    @property
    def param_node(self) -> Node:
        return self.block.param_node

    def add_input(self, name: Optional[str] = None, type: Type = TENSOR) -> Value:
        return self.block.add_input(type, name)

    def insert_input(self, i: int, name: Optional[str] = None, type: Type = TENSOR) -> Value:
        return self.block.insert_input(i, type, name)

    def erase_input(self, i: int) -> None:
        self.block.erase_input(i)

    def register_output(self, v: Value) -> int:
        return self.block.register_output(v)

    def erase_output(self, i: int) -> None:
        self.block.erase_output(i)

    def nodes(self) -> Iterator[Node]:
        return self.block.nodes()

    def walk(self) -> Iterator[Node]:
        """All nodes, recursively through blocks, in program order."""
        return self.block.walk()

    # ---- creating nodes
    def create(self, kind: str, inputs: Sequence[Value] = (), num_outputs: int = 1,
               output_types: Optional[Sequence[Type]] = None) -> Node:
        """A new node, not yet inserted anywhere."""
        n = Node(self, kind)
        for v in inputs:
            n.add_input(v)
        types = output_types if output_types is not None else [TENSOR] * num_outputs
        for t in types:
            n.add_output(t)
        return n

    def set_insert_point(self, point) -> None:
        """Insert new nodes before `point` (a node), or at the end of `point` (a block)."""
        self._insert_point = point.return_node if isinstance(point, Block) else point

    @property
    def insert_point(self) -> Node:
        return self._insert_point

    def insert_node(self, n: Node) -> Node:
        return n.insert_before(self._insert_point)

    def insert(self, kind: str, inputs: Sequence[Value] = (), num_outputs: int = 1,
               output_types: Optional[Sequence[Type]] = None, **attrs: tuple[str, Any]) -> Node:
        """Create a node at the insertion point; `attrs` are `name=(kind, value)`."""
        n = self.create(kind, inputs, num_outputs, output_types)
        for name, (akind, value) in attrs.items():
            n.set_attr(name, akind, value)
        return self.insert_node(n)

    def insert_constant(self, value: Any, type: Optional[Type] = None) -> Value:
        """A `prim::Constant` at the insertion point, typed and attributed as PyTorch does."""
        from .constants import make_constant
        n = make_constant(self, value, type)
        self.insert_node(n)
        return n.output

    def clone_node(self, n: Node, value_map, copy_blocks: bool = True) -> Node:
        """A copy of `n` (from this or another graph), not inserted: PyTorch's `createClone`.
        `value_map` maps `n`'s inputs to the copy's: a dict (values not in it are kept, and
        the copy's outputs are added to it) or a function of the old value."""
        env = value_map if callable(value_map) else (lambda v: value_map.get(v, v))
        c = Node(self, n.kind)
        c.copy_attrs(n)
        c.source = n.source
        c.text_line = n.text_line  # errors in a copy (a specialized plan) point at the text
        c.scope = self.scope_root.lookup(n.scope.names_from_root()) if n.graph is not self else n.scope
        c.legacy_uses = n.legacy_uses
        c.python_op = n.python_op
        for v in n.inputs:
            c.add_input(env(v))
        for v in n.outputs:
            nv = c.add_output(v.type).copy_metadata(v)
            if not callable(value_map):
                value_map[v] = nv
        if copy_blocks:
            for b in n.blocks:
                c.add_block().clone_from(b, value_map)
        return c

    def copy(self) -> "Graph":
        """A deep copy, numbered afresh as PyTorch's `Graph::copy` does, keeping debug names."""
        g = Graph()
        g.block.clone_from(self.block, {})
        return g

    # ---- scopes
    def push_scope(self, name: str) -> Scope:
        self.current_scope = self.current_scope.push(name)
        return self.current_scope

    def pop_scope(self) -> None:
        assert self.current_scope.parent is not None, "pop_scope on the root scope"
        self.current_scope = self.current_scope.parent

    # ---- checking and printing
    def lint(self) -> None:
        """Raise `IRVerificationError` unless the graph is well formed."""
        from .verifier import verify
        verify(self)

    def __str__(self) -> str:
        from irjit.compiler.printer import print_graph
        return print_graph(self)

    def str(self, print_source_locations: bool = True, print_scopes: bool = True) -> str:
        from irjit.compiler.printer import print_graph
        return print_graph(self, print_source_locations=print_source_locations,
                           print_scopes=print_scopes)

    def num_nodes(self) -> int:
        return sum(1 for _ in self.walk())

