"""Reading printed TorchScript graphs into the IR (grammar/torchscript.lark, LALR).

The grammar's callbacks run in textual order while Lark parses, so the IR is built in one
pass with no parse tree: each node line creates its node in the current block, `blockN(...)`
opens a block and `-> (...)` closes it. Graphs read from the 2017 format go through
`compiler.legacy_parser`; `parse_ir` picks the reader from the text.
"""

from __future__ import annotations

import re
from typing import Optional

from lark import Lark, Token, Transformer
from lark.exceptions import UnexpectedInput

from irjit.grammar import grammar_text

from irjit.ops.errors import IRParseError, SubParseError
from .ir.attributes import TensorData
from .ir.graph import Graph
from .ir.node import Block, Node, Value
from .ir.source import SourceLocation
from irjit.ops.types import SCALAR_TYPES, TENSOR, ListType, TensorType
from irjit.ops.type_parser import parse_type_text

from . import progress
from .attribute_parser import parse_attributes_text
from .lark_errors import PARSE_LOCK, lark_error

_GROUP_KIND = re.compile(r"^(.*)_([0-9]+)$")
_ARG_NAME = re.compile(r"%([A-Za-z0-9_.]+)")
_NUMERIC_NAME = re.compile(r"%([0-9]+)\b")
_LEGACY_HEADER = re.compile(r"\A\s*graph\((?:[^()]|\([^()]*\))*\)\s*\{")


class _Env:
    """Value names visible at the current point: one layer per open block, as in SSA."""

    def __init__(self):
        self.layers: list[dict[str, Value]] = [{}]

    def lookup(self, name: str) -> Optional[Value]:
        for layer in reversed(self.layers):
            v = layer.get(name)
            if v is not None:
                return v
        return None

    def bind(self, name: str, v: Value) -> None:
        self.layers[-1][name] = v


class _GraphState:
    def __init__(self, graph: Graph, kind: Optional[str], token: Optional[Token]):
        self.graph = graph
        self.section_kind = kind
        self.section_token = token
        self.env = _Env()
        self.blocks: list[Block] = [graph.block]
        self.indent: list[Optional[int]] = [None]
        self.group_candidates: list[Node] = []
        self.pending: list[list[tuple[str, Value]]] = []  # outputs of nodes whose blocks are open


class _Builder(Transformer):
    """Lark callbacks that build graphs as the parser reduces each line."""

    def __init__(self, reader: "_Reader"):
        super().__init__()
        self.r = reader

    # graphs and sections
    def graph_head(self, c):
        self.r.open_graph(None, None, c)

    def section_head(self, c):
        self.r.open_graph(str(c[0]), c[0], c[2:])

    def return_stmt(self, c):
        self.r.check_indent(c[0])
        g = self.r.state.graph
        for v in self.r.resolve_args(c[1]):
            g.register_output(v)

    # nodes and blocks
    def node_head(self, c):
        self.r.add_node(c)

    def stmt(self, c):
        self.r.bind_node_outputs()

    def block_head(self, c):
        self.r.open_block(c[0], c[1:])

    def block_end(self, c):
        self.r.close_block(c[0], c[1])


class _Reader:
    """State of one parse: the text (for error messages) and the graphs built so far."""

    def __init__(self, text: str, filename: str):
        self.text = text
        self.filename = filename
        self.lines = text.splitlines()
        # named values are numbered above every `%N` in the text, so `%N` keeps its number
        self.first_free_unique = max((int(m) for m in _NUMERIC_NAME.findall(text)), default=-1) + 1
        self.graphs: list[_GraphState] = []
        self.state: Optional[_GraphState] = None
        self.progress: Optional[progress.Task] = None  # set when someone shows progress
        self.progress_pos = 0

    # ---- errors
    def error(self, reason: str, line: int, column: int) -> IRParseError:
        line_text = self.lines[line - 1] if 0 < line <= len(self.lines) else None
        return IRParseError(reason, self.filename, line, column, line_text)

    def error_at(self, tok: Token, reason: str, offset: int = 0) -> IRParseError:
        return self.error(reason, tok.line, tok.column + offset)

    # ---- values
    def resolve_args(self, tok: Token) -> list[Value]:
        """The values an ARGS token `(%a, %b)` names."""
        text = str(tok)
        if "%" not in text:
            return []
        lookup = self.state.env.lookup
        values = []
        for m in _ARG_NAME.finditer(text):
            v = lookup(m.group(1))
            if v is None:
                raise self.error_at(tok, f"undefined value %{m.group(1)}", m.start())
            values.append(v)
        return values

    def define(self, tok: Token, make, bind: bool = True) -> Value:
        """Create the value a DECL token `%name : Type` declares via `make(type, unique)`."""
        text = str(tok)
        colon = text.find(":")
        name = text[1:colon].rstrip() if colon >= 0 else text[1:]
        if name.endswith(".") or name.startswith("."):
            raise self.error_at(tok, f"invalid value name %{name}")
        if colon < 0:  # `%name` without a type is a Tensor, as torch._C.parse_ir reads it
            t = TENSOR
        else:
            type_start = colon + 1
            while text[type_start] in " \t":
                type_start += 1
            try:
                t = parse_type_text(text[type_start:])
            except SubParseError as e:
                raise self.error_at(tok, e.reason, type_start + e.offset) from None
        if name.isdigit():
            v = make(t, int(name))
        else:
            v = make(t, None)
            v.set_debug_name(name)
        if bind:
            self.state.env.bind(name, v)
        else:
            self.state.pending[-1].append((name, v))
        return v

    def bind_node_outputs(self) -> None:
        """A node's outputs become visible after its blocks (they are not defined inside)."""
        for name, v in self.state.pending.pop():
            self.state.env.bind(name, v)

    # ---- indentation: lines of one block share a column, deeper than the enclosing line
    def check_indent(self, tok: Token, adjust: int = 0) -> None:
        st = self.state
        want = st.indent[-1]
        column = tok.column + adjust
        if want is None:
            if len(st.indent) > 1 and column <= st.block_header_column:
                raise self.error_at(tok, "a block's lines must be indented deeper than its header")
            st.indent[-1] = column
        elif column != want:
            raise self.error_at(tok, f"inconsistent indentation: expected column {want} "
                                     f"like the other lines of this block")

    # ---- graphs
    def open_graph(self, kind: Optional[str], tok: Optional[Token], params) -> None:
        g = Graph()
        g.next_unique = self.first_free_unique
        self.state = _GraphState(g, kind, tok)
        self.state.block_header_column = 0
        self.graphs.append(self.state)
        for decl in params:
            self.define(decl, lambda t, u: g.block.add_input(t, unique=u))

    def add_node(self, c) -> None:
        st = self.state
        i = 0
        while c[i].type == "DECL":
            i += 1
        outputs = c[:i]
        eq_tok = c[i]
        kind_tok = c[i + 1]
        rest = c[i + 2:]
        # a node without outputs prints as `<indent> = kind(...)`: its line starts one column early
        self.check_indent(outputs[0] if outputs else eq_tok, 0 if outputs else -1)
        g = st.graph
        j = 0
        if kind_tok.type == "PYTHON_OP":
            n = Node(g, "prim::PythonOp")
            n.python_op = (str(kind_tok)[1:], str(rest[1]))
            rest = rest[:1] + rest[2:]
        else:
            n = Node(g, str(kind_tok))
        if j < len(rest) and rest[j].type == "ATTRS":
            try:
                attrs = parse_attributes_text(str(rest[j]))
            except SubParseError as e:
                raise self.error_at(rest[j], e.reason, e.offset) from None
            for name, kind, value in attrs:
                n.attrs[name] = (kind, value)
            j += 1
        for v in self.resolve_args(rest[j]):
            n.add_input(v)
        j += 1
        while j < len(rest):
            tok = rest[j]
            if tok.type == "SCOPE":
                n.scope = g.scope_root.lookup(str(tok)[len(", scope: "):].rstrip())
            elif tok.type == "COMMENT":
                n.source = SourceLocation.from_text(str(tok)[1:].strip())
            j += 1
        st.pending.append([])
        for decl in outputs:
            self.define(decl, lambda t, u: n.add_output(t, u), bind=False)
        if n.kind == "prim::Constant":
            self.check_constant(n, rest[0] if rest and rest[0].type == "ATTRS" else kind_tok)
        st.blocks[-1].append_node(n)
        n.text_line = kind_tok.line
        if self.progress is not None and kind_tok.start_pos - self.progress_pos > 1 << 16:
            self.progress.update(kind_tok.start_pos - self.progress_pos)
            self.progress_pos = kind_tok.start_pos
        if _GROUP_KIND.match(n.kind):
            st.group_candidates.append(n)

    def check_constant(self, n: Node, tok: Token) -> None:
        """A constant's value must fit its declared type (as PyTorch's parser insists)."""
        kind = n.attr_kind("value")
        if kind == "t":
            _cast_tensor_constant(n)
        elif kind == "ival" and n.outputs:
            t, value = n.outputs[0].type, n.attr("value")
            if isinstance(t, ListType) and not isinstance(t.elem, ListType) and \
                    isinstance(value, list) and any(isinstance(x, list) for x in value):
                raise self.error_at(tok, f"a constant of type {t} cannot hold a nested list")

    def open_block(self, tok: Token, params) -> None:
        st = self.state
        owner = st.blocks[-1].return_node.prev
        if owner is st.blocks[-1].return_node:
            raise self.error_at(tok, "a block must follow the node that owns it")
        if tok.column <= (st.indent[-1] or 0):
            raise self.error_at(tok, "a block header must be indented deeper than its node")
        if str(tok) != f"block{len(owner.blocks)}":
            raise self.error_at(tok, f"expected block{len(owner.blocks)} here")
        b = owner.add_block()
        st.blocks.append(b)
        st.indent.append(None)
        st.block_header_column = tok.column
        st.env.layers.append({})
        for decl in params:
            self.define(decl, lambda t, u: b.add_input(t, unique=u))

    def close_block(self, tok: Token, args: Token) -> None:
        st = self.state
        if len(st.blocks) == 1:
            raise self.error_at(tok, "'->' outside a block")
        self.check_indent(tok)
        b = st.blocks[-1]
        for v in self.resolve_args(args):
            b.register_output(v)
        st.blocks.pop()
        st.indent.pop()
        st.env.layers.pop()

    # ---- `with kind_N = graph(...)` sections
    def attach_sections(self) -> Graph:
        """Give each `kind_N(...)` node the subgraph its section holds (sections follow their
        graph, depth first, numbered in print order as Graph::print numbers them)."""
        sections = iter(self.graphs[1:])

        def attach(st: _GraphState) -> None:
            count = 0
            for n in st.group_candidates:
                m = _GROUP_KIND.match(n.kind)
                if int(m.group(2)) != count:
                    continue
                sec = next(sections, None)
                if sec is None:
                    return
                if sec.section_kind != n.kind:
                    tok = sec.section_token
                    raise self.error_at(tok, f"expected section 'with {n.kind} = graph(...)' "
                                             f"here, for the node on line {n.text_line}")
                n.kind = m.group(1)
                n.attrs["Subgraph"] = ("g", sec.graph)
                count += 1
                attach(sec)

        attach(self.graphs[0])
        leftover = next(sections, None)
        if leftover is not None:
            raise self.error_at(leftover.section_token,
                                f"no node uses the subgraph {leftover.section_kind}")
        return self.graphs[0].graph


def _cast_tensor_constant(n: Node) -> None:
    data: TensorData = n.attrs["value"][1]
    t = n.outputs[0].type if n.outputs else None
    if data.array is None or not isinstance(t, TensorType) or t.scalar_type is None:
        return
    dtype = SCALAR_TYPES.get(t.scalar_type)
    if dtype is not None and str(data.array.dtype) != dtype:
        n.attrs["value"] = ("t", TensorData(data.array.astype(dtype), data.text))


_BUILDER = _Builder(None)  # type: ignore[arg-type]
_PARSER: Optional[Lark] = None


def _get_parser() -> Lark:
    global _PARSER
    if _PARSER is None:
        _PARSER = Lark(grammar_text("torchscript"), parser="lalr", transformer=_BUILDER,
                       maybe_placeholders=False)
    return _PARSER


def parse_ir(text: str, filename: str = "<string>") -> Graph:
    """Read a graph as PyTorch prints it (either format) into a new Graph.

    Raises IRParseError, with file, line and column, for any malformed input.
    """
    if _LEGACY_HEADER.match(text):
        from .legacy_parser import parse_legacy_ir
        return parse_legacy_ir(text, filename)
    reader = _Reader(text, filename)
    with PARSE_LOCK, progress.task(f"parsing {filename}", len(text), "B") as reading:
        parser = _get_parser()
        _BUILDER.r = reader
        reader.progress = reading if progress.listening() else None
        try:
            parser.parse(text)
        except UnexpectedInput as e:
            raise lark_error(reader, e) from None
        except RecursionError:
            raise reader.error("input nested too deeply", 1, 1) from None
        finally:
            _BUILDER.r = None
    if not reader.graphs:
        raise reader.error("expected 'graph('", 1, 1)
    return reader.attach_sections()
