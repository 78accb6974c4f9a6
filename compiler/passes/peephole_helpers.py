"""Small shared helpers for the peephole-family passes: constants, None-ness, schema-shaped
matching on IR types, an approximate `hasWriters`, and a conservative dead-code elimination."""

from __future__ import annotations

from typing import Any, Optional

from irjit.compiler.ir import Graph, Node, Value
from irjit.compiler.ir.constants import constant_value
from irjit.ops.types import (BOOL, FLOAT, INT, NONE, ListType, NamedType, OptionalType,
                               TensorType, Type)

_MISSING = object()

# ops that mutate their first (list / dict / tensor) argument without a trailing underscore
LIST_MUTATORS = {
    "aten::append", "aten::insert", "aten::_set_item", "aten::pop", "aten::clear", "aten::extend",
    "aten::remove", "aten::reverse", "aten::sort", "aten::__setitem__", "aten::add_",
    "aten::copy_", "aten::setdefault", "aten::update", "aten::popitem", "aten::delete",
    "aten::__delitem__",
}
SIDE_EFFECT_KINDS = {
    "prim::RaiseException", "prim::Print", "prim::SetAttr", "prim::Store", "prim::Enter",
    "prim::Exit", "prim::AddStatValue", "prim::TimePoint", "prim::CallFunction",
    "prim::CallMethod", "prim::BailOut", "prim::Guard", "prim::profile", "prim::profile_ivalue",
    "prim::TypeCheck", "prim::RequiresGradCheck", "aten::warn", "prim::rpc_async",
    "aten::manual_seed", "prim::fork", "aten::wait", "prim::IgnoredPythonOp",
}


def const_value(v: Value, default: Any = _MISSING) -> Any:
    """The value of a `prim::Constant` output (None for a None constant), else `default`."""
    if v.node.kind != "prim::Constant" or v.node.has_attr("name"):
        return default
    return constant_value(v.node)


def is_const(v: Value) -> bool:
    return const_value(v) is not _MISSING


def const_int(v: Value) -> Optional[int]:
    x = const_value(v, None)
    return x if isinstance(x, int) and not isinstance(x, bool) and v.type == INT else None


def const_bool(v: Value) -> Optional[bool]:
    x = const_value(v, None)
    return x if isinstance(x, bool) else None


def must_be_none(v: Value) -> bool:
    n = v.node
    return v.type == NONE or n.kind == "prim::AutogradZero" or (
        n.kind == "prim::Constant" and not n.attrs and isinstance(v.type, OptionalType))


def must_not_be_none(v: Value) -> bool:
    if v.node.kind == "prim::AutogradAdd":
        return True
    t = v.type
    if isinstance(t, OptionalType) or t == NONE:
        return False
    if isinstance(t, NamedType) and t.name in ("Any", "AnyType"):
        return False
    if getattr(t, "name", None) == "Union":
        return False
    return True


def type_fits(t: Type, want: str) -> bool:
    """Whether an IR value type fits a schema argument type written as in schemas."""
    if want.endswith("?"):
        return t == NONE or (isinstance(t, OptionalType) and type_fits(t.elem, want[:-1])) \
            or type_fits(t, want[:-1])
    if want == "Tensor":
        return isinstance(t, TensorType)
    if want in ("int", "SymInt"):
        return t == INT
    if want == "float":
        return t == FLOAT
    if want == "bool":
        return t == BOOL
    if want == "Scalar":
        return t in (INT, FLOAT, BOOL) or t == NamedType("Scalar") or t == NamedType("number")
    if want.endswith("[]"):
        return isinstance(t, ListType) and (want == "t[]" or type_fits(t.elem, want[:-2]))
    if want == "Any":
        return True
    return str(t) == want


def matches(node: Node, kind: str, *arg_types: str) -> bool:
    """PyTorch's `node->matches(schema)`: the kind, the arity and each input's type."""
    return node.kind == kind and len(node.inputs) == len(arg_types) and all(
        type_fits(v.type, t) for v, t in zip(node.inputs, arg_types))


def tensor_type(v: Value) -> Optional[TensorType]:
    return v.type if isinstance(v.type, TensorType) else None


def _writes(use) -> bool:
    user, off = use.user, use.offset
    if user.kind in LIST_MUTATORS and off == 0:
        return True
    if user.kind.startswith("aten::") and user.kind.endswith("_") and not user.kind.endswith("__") \
            and off == 0:
        return True
    return False


def has_writers(v: Value, _seen: Optional[set] = None) -> bool:
    """An approximation of `aliasDb.hasWriters(v)`: v, or a value it flows into by aliasing
    (views, containers, block outputs), is written in place."""
    seen = _seen if _seen is not None else set()
    if v in seen:
        return False
    seen.add(v)
    for use in v.uses:
        if _writes(use):
            return True
        u = use.user
        if u.kind in ("prim::ListConstruct", "prim::TupleConstruct", "prim::DictConstruct",
                      "aten::view", "aten::t", "aten::transpose", "aten::reshape",
                      "aten::expand", "aten::slice", "aten::select", "aten::squeeze",
                      "aten::unsqueeze", "aten::permute", "aten::flatten", "aten::detach",
                      "prim::unchecked_cast", "aten::__getitem__", "prim::ListUnpack",
                      "prim::TupleUnpack", "aten::contiguous", "aten::alias",
                      "prim::TupleIndex"):
            if any(has_writers(o, seen) for o in u.outputs):
                return True
        elif u.kind in ("prim::Return",):
            owner = u.owning_block.owning_node if u.owning_block is not None else None
            if owner is not None and has_writers(owner.outputs[use.offset], seen) \
                    if owner is not None and use.offset < len(owner.outputs) else False:
                return True
        elif u.kind in ("prim::Loop", "prim::If", "prim::CallFunction", "prim::CallMethod"):
            return True  # conservatively: the callee or loop body may write it
    return False


def has_side_effects(n: Node) -> bool:
    if n.kind in SIDE_EFFECT_KINDS or n.kind in LIST_MUTATORS:
        return True
    if n.kind.startswith("aten::") and n.kind.endswith("_") and not n.kind.endswith("__"):
        return True
    return any(has_side_effects(m) for b in n.blocks for m in b.nodes())


def eliminate_dead_code(graph: Graph) -> None:
    """The shared dead code eliminator (eliminate_dead_code.py) over the whole graph."""
    from .eliminate_dead_code import eliminate_dead_code as dce
    dce(graph)


def _local_dce(block) -> None:
    from .eliminate_dead_code import eliminate_dead_code_in_block
    eliminate_dead_code_in_block(block)


def _dce_loop_carried(loop: Node) -> None:
    """Drop loop-carried values whose loop output and body input are both unused."""
    body = loop.blocks[0]
    for i in reversed(range(len(loop.outputs))):
        out, param = loop.outputs[i], body.inputs[i + 1]
        if out.uses or param.uses:
            continue
        body.erase_output(i + 1)
        body.erase_input(i + 1)
        loop.remove_input(i + 2)
        loop.erase_output(i)
