"""IR -> the TorchScript-style Python PyTorch prints as `.code` (its python_print): unnamed
single-use values are inlined into their use when that keeps evaluation order, lines that
get long are split into `_N = ...` temporaries, constants print inline, If/Loop print as
Python `if`/`for`/`while` with their outputs assigned in each block."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Optional

from irjit.compiler.ir import Block, Graph, Node, OptionalType, Type, Value, constant_value
from irjit.compiler.ir.attributes import TensorData
from irjit.compiler.schema_match import schema_for_inputs
from irjit.ops.facts import printed_as_builtin
from irjit.ops.registry import NO_DEFAULT, parse_schema
from irjit.ops.types import Device, annotation

_RESERVED = frozenset((
    "_", "as", "aten", "attribute", "CONSTANTS", "fork", "getattr", "inf", "nan", "infj", "nanj",
    "ops", "__torch__", "and", "assert", "async", "await", "break", "class", "continue", "def",
    "del", "elif", "else", "except", "False", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "None", "nonlocal", "not", "or", "pass", "raise", "return", "True",
    "try", "with", "while", "yield", "uninitialized", "unchecked_cast"))
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_NAME_SUFFIX = re.compile(r"\.\d+$")
_INT64_MAX = 9223372036854775807
# schemas of prims the interpreter runs itself (no registry entry), for printing their arguments
_UNREGISTERED_SCHEMAS = {
    "prim::RaiseException": parse_schema("prim::RaiseException(str msg, str? cls=None) -> ()"),
}


@dataclass
class FunctionHeader:
    """What `def` prints: the name, (name, type, default or NO_DEFAULT) per parameter, the
    return type; `self_type` given, the first parameter is `self` printed without a type."""

    name: str
    params: list[tuple[str, Type, Any]]
    return_type: Type
    self_type: Optional[Type] = None


def constant_repr(value: Any) -> str:
    """A constant as IValue's repr prints it (`1.`, `0.10000000000000001`, `"a"`, `[1, 2]`,
    `torch.device("cpu")`)."""
    if value is None:
        return "None"
    if isinstance(value, Device):
        return f'torch.device("{value}")'
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        text = "%.17g" % value
        return text if any(c in text for c in ".e") else text + "."
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, (list, tuple)):
        inner = ", ".join(constant_repr(v) for v in value)
        if isinstance(value, tuple):
            return f"({inner},)" if len(value) == 1 else f"({inner})"
        return f"[{inner}]"
    return str(value)


def _loop_is_for(n: Node) -> Optional[bool]:
    """True: a `for ... in range`, False: a `while`, None: neither (PyTorch's ModifiedLoop)."""
    body = n.blocks[0]
    trip, cond, next_cond = n.inputs[0], n.inputs[1], body.outputs[0]

    def const(v: Value):
        return constant_value(v.node) if v.node.kind == "prim::Constant" else None
    always_true = const(cond) is True and const(next_cond) is True
    trip_value = const(trip)
    specified = trip_value is None or trip_value != _INT64_MAX or bool(body.inputs[0].uses)
    if always_true:
        return specified
    return None if specified else False


class _Printer:
    def __init__(self, qualified_functions: dict[str, str]):
        self.qualified_functions = qualified_functions
        self.inline: set = set()
        self.exprs: dict[Value, str] = {}
        self.idents: dict[Value, str] = {}
        self.used: set[str] = set()
        self.next_id: dict[str, int] = {}
        self.visited_split: dict[Node, int] = {}
        self.level = 0
        self.out: list[str] = []
        self.tensor_constants: list[Node] = []  # printed as CONSTANTS.c<i>, in order of use

    # ---- inlining decisions (python_print's scanBlock/scanNode/scanValue)
    def can_inline(self, v: Value) -> bool:
        n = v.node
        if len(n.outputs) != 1 or len(v.uses) != 1 or n.blocks:
            return False
        use = v.uses[0]
        if v.debug_name is not None and use.user.kind != "prim::Return":
            return False
        if use.user.kind == "prim::Loop" and use.offset >= 2:
            return False
        return n.kind != "prim::isinstance"

    def scan_value(self, block_point: Node, v: Value) -> Node:
        n = v.node
        if n is block_point and self.can_inline(v):
            block_point = self.scan_node(block_point)
            self.inline.add(n)
        elif n.kind == "prim::Constant":
            self.inline.add(n)
        return block_point

    def scan_node(self, n: Node) -> Node:
        if n in self.inline:
            return n
        for b in n.blocks:
            self.scan_block(b)
        block_point = n.prev
        while block_point.kind == "prim::Constant":
            block_point = block_point.prev
        for v in reversed(n.inputs):
            block_point = self.scan_value(block_point, v)
        return block_point

    def scan_block(self, b: Block) -> None:
        self.scan_node(b.return_node)
        for n in list(b.reversed_nodes()):
            self.scan_node(n)

    # ---- names
    def gen_name(self, candidate: str) -> str:
        name = candidate
        while name in self.used or name in _RESERVED:
            k = self.next_id.get(name, 0)
            self.next_id[name] = k + 1
            name = candidate + str(k)
        self.used.add(name)
        return name

    def unique_name_for(self, v: Value) -> str:
        if v.debug_name is None:
            return self.gen_name("_")
        base = _NAME_SUFFIX.sub("", v.debug_name)
        valid = ("_" if not base or base[0].isdigit() else "") + \
            "".join(c if c.isalnum() or c == "_" else "_" for c in base)
        return self.gen_name(valid)

    def name_values(self, values) -> None:
        for v in values:
            self.idents[v] = self.unique_name_for(v)

    def use(self, v: Value) -> str:
        if v in self.idents:
            return self.idents[v]
        return self.exprs[v]

    # ---- statements
    def emit(self, text: str) -> None:
        self.out.append("  " * self.level + text + "\n")

    def values(self, vs) -> str:
        return ", ".join(self.use(v) for v in vs)

    def assignment(self, lhs, rhs) -> None:
        if lhs:
            self.emit(f"{self.values(lhs)} = {self.values(rhs)}")

    def is_long(self, text: str) -> bool:
        return len(text) + self.level * 2 >= 40

    def output_definition(self, n: Node, expr: str) -> None:
        self.name_values(n.outputs)
        self.emit(f"{self.values(n.outputs)} = {expr}" if n.outputs else expr)

    def split_long_inlines(self, v: Value) -> None:
        to_split: list[Value] = []
        use = v.uses[0]
        self.scan_long_inlines(use.user, use.offset, to_split)
        for x in reversed(to_split):
            self.output_definition(x.node, self.use(x))

    def scan_long_inlines(self, user: Node, offset: int, to_split: list[Value]) -> None:
        present = user in self.visited_split
        stop = self.visited_split[user] + 1 if present else 0
        for i in range(offset, stop - 1, -1):
            arg = user.inputs[i]
            if arg.node.kind != "prim::Constant" and arg.node in self.inline:
                to_split.append(arg)
        self.visited_split[user] = offset
        if not present and user in self.inline:
            use = user.output.uses[0]
            self.scan_long_inlines(use.user, use.offset - 1, to_split)

    def print_block(self, b: Block, has_other_statements: bool) -> None:
        if not has_other_statements and not list(b.nodes()):
            self.emit("pass")
        for n in b.nodes():
            self.print_node(n, print_const=False)

    def print_node(self, n: Node, print_const: bool) -> None:
        if n.kind == "prim::Constant" and not print_const:
            return
        if n.kind == "prim::Return":
            if n.inputs:
                self.emit("return " + self.values(n.inputs))
        elif n.kind == "prim::If":
            self.print_if(n)
        elif n.kind == "prim::Loop":
            self.print_loop(n)
        elif n.kind in ("prim::TupleUnpack", "prim::ListUnpack"):
            self.name_values(n.outputs)
            self.emit(f"{self.values(n.outputs)}, = {self.use(n.inputs[0])}")
        else:
            rhs = self.rhs(n)
            if n not in self.inline or (n.kind == "prim::Constant" and self.is_long(rhs)):
                self.output_definition(n, rhs)
            else:
                self.exprs[n.output] = rhs
                if self.is_long(rhs):
                    self.split_long_inlines(n.output)

    def print_if(self, n: Node) -> None:
        self.name_values(n.outputs)
        self.emit(f"if {self.use(n.inputs[0])}:")
        for i, block in enumerate(n.blocks):
            if i == 1:
                self.emit("else:")
            self.level += 1
            self.print_block(block, bool(n.outputs))
            self.assignment(n.outputs, block.outputs)
            self.level -= 1

    def print_loop(self, n: Node) -> None:
        is_for = _loop_is_for(n)
        if is_for is None:
            raise ValueError("loop cannot be printed as python because it has gone through "
                             "an optimization that combined while and for loops")
        body = n.blocks[0]
        outs = n.outputs
        self.name_values(outs)
        for block_input, out in zip(body.inputs[1:], outs):
            self.idents[block_input] = self.use(out)
        for out, init in zip(outs, n.inputs[2:]):
            note = "" if out.type == init.type else f": {annotation(out.type)}"
            self.emit(f"{self.use(out)}{note} = {self.use(init)}")
        trip = body.inputs[0]
        self.name_values([trip])
        if is_for:
            self.emit(f"for {self.use(trip)} in range({self.use(n.inputs[0])}):")
        else:
            self.assignment([trip], [n.inputs[1]])
            self.emit(f"while {self.use(trip)}:")
        self.level += 1
        offset = 1 if is_for else 0
        carried_inputs = body.inputs[offset:]
        self.print_block(body, len(carried_inputs) > 0)
        self.assignment(carried_inputs, body.outputs[offset:])
        self.level -= 1

    # ---- expressions
    def rhs(self, n: Node) -> str:
        k = n.kind
        ins = n.inputs
        if k == "prim::Uninitialized":
            return f"uninitialized({annotation(n.output.type)})"
        if k == "prim::Constant":
            if str(n.output.type) == "Function":
                name = n.attr("name")
                return self.qualified_functions.get(name, name)
            value = constant_value(n)
            if isinstance(value, TensorData):  # a module's constant table, as PyTorch prints it
                if n not in self.tensor_constants:
                    self.tensor_constants.append(n)
                return f"CONSTANTS.c{self.tensor_constants.index(n)}"
            return constant_repr(value)
        builtin = printed_as_builtin(k)
        if builtin is not None:
            return f"{builtin}({self.values(ins)})"
        if k == "aten::__getitem__":
            base = self.use(ins[0])
            base = base if _IDENTIFIER.match(base) else f"({base})"
            return f"{base}[{self.use(ins[1])}]"
        if k == "prim::TupleConstruct":
            return f"({self.values(ins)},)" if len(ins) == 1 else f"({self.values(ins)})"
        if k == "prim::TupleIndex":
            return f"({self.use(ins[0])})[{self.use(ins[1])}]"
        if k == "prim::ListConstruct":
            t = n.output.type
            if not ins:
                return f"annotate({annotation(t)}, [])"
            if isinstance(t.elem, OptionalType):
                return f"annotate({annotation(t)}, [{self.values(ins)}])"
            return f"[{self.values(ins)}]"
        if k == "prim::DictConstruct":
            pairs = ", ".join(f"{self.use(ins[i])}: {self.use(ins[i + 1])}"
                              for i in range(0, len(ins), 2))
            if not ins:
                return f"annotate({annotation(n.output.type)}, {{}})"
            return "{" + pairs + "}"
        if k == "prim::GetAttr":
            name = n.attr("name")
            if _IDENTIFIER.match(name):
                return f"{self.use(ins[0])}.{name}"
            return f'getattr({self.use(ins[0])}, "{name}")'
        if k == "prim::CallFunction":
            return self.use(ins[0]) + "(" + "".join(f"{self.use(v)}, " for v in ins[1:]) + ")"
        if k == "prim::CallMethod":
            return f"({self.use(ins[0])}).{n.attr('name')}(" + \
                "".join(f"{self.use(v)}, " for v in ins[1:]) + ")"
        if k in ("prim::unchecked_cast", "prim::unchecked_unwrap_optional"):
            return f"unchecked_cast({annotation(n.output.type)}, {self.use(ins[0])})"
        return self.op_call(n)

    def op_call(self, n: Node) -> str:
        ns, _, name = n.kind.partition("::")
        head = f"torch.{name}" if ns == "aten" else f"ops.{ns}.{name}"
        schema = _UNREGISTERED_SCHEMAS.get(n.kind) or schema_for_inputs(n.kind, list(n.inputs))
        if schema is None:
            return f"{head}({self.values(n.inputs)})"
        args = schema.arguments
        necessary = len(n.inputs)
        if len(args) >= len(n.inputs):
            necessary = 0
            for i in range(len(n.inputs) - 1, -1, -1):
                default = args[i].default
                v = n.inputs[i]
                if default is NO_DEFAULT or v.node.kind != "prim::Constant" or \
                        not _same_constant(constant_value(v.node), default):
                    necessary = i + 1
                    break
        parts = []
        for i, v in enumerate(n.inputs[:necessary]):
            prefix = f"{args[i].name}=" if i < len(args) and args[i].kwarg_only else ""
            parts.append(prefix + self.use(v))
        return f"{head}({', '.join(parts)})"

    def print_body(self, b: Block) -> None:
        constants: list[Node] = []
        seen: set = set()

        def collect(block: Block) -> None:
            for n in list(block.nodes()) + [block.return_node]:
                for v in n.inputs:
                    if v.node.kind == "prim::Constant" and v.node not in seen:
                        seen.add(v.node)
                        constants.append(v.node)
                for inner in n.blocks:
                    collect(inner)
        collect(b)
        self.scan_block(b)
        self.level += 1
        for n in constants:
            self.print_node(n, print_const=True)
        self.print_block(b, bool(b.return_node.inputs))
        self.print_node(b.return_node, print_const=False)
        self.level -= 1


def _same_constant(value: Any, default: Any) -> bool:
    if isinstance(default, (list, tuple)) or isinstance(value, (list, tuple)):
        return isinstance(value, (list, tuple)) and isinstance(default, (list, tuple)) and \
            list(value) == list(default)
    return type(value) is type(default) and value == default or (value is None and default is None)


def print_function(graph: Graph, header: FunctionHeader,
                   qualified_functions: Optional[dict[str, str]] = None) -> str:
    """`graph` as the `def` PyTorch's `.code` prints; `qualified_functions` maps the names of
    called functions (`prim::Constant[name=...]`) to how they print (`__torch__.m.f`)."""
    p = _Printer(qualified_functions or {})
    parts = []
    inputs = list(graph.inputs)
    if header.self_type is not None:
        p.idents[inputs[0]] = p.gen_name("self")
        parts.append("self")
        inputs = inputs[1:]
    for v, (name, t, default) in zip(inputs, header.params):
        arg = p.gen_name(name)
        p.idents[v] = arg
        text = f"{arg}: {annotation(t)}"
        if default is not NO_DEFAULT:
            text += "=" + constant_repr(default)
        parts.append(text)
    p.out.append(f"def {header.name}(" + ",\n    ".join(parts) +
                 f") -> {annotation(header.return_type)}:\n")
    p.print_body(graph.block)
    return "".join(p.out)


__all__ = ["FunctionHeader", "annotation", "constant_repr", "print_function"]
