"""Compile-time overload resolution for scripted calls: pick the registry schema TorchScript
would pick for arguments known only by their IR types, and emit the call node.

Matching follows TorchScript's schema matching: positional then keyword arguments, defaults
as constants, a list argument built from several trailing positional ints (`x.view(2, 3)`),
a single int for `int[N]`, and two rounds (exact types first, then int->float and
number->Tensor conversions)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from irjit.compiler.ir import (ANY, FLOAT, INT, NONE, NUMBER, TENSOR, GenericType, ListType,
                               OptionalType, TensorType, TupleType, Type, Value)
from irjit.ops import registry
from irjit.ops.registry import NO_DEFAULT, OpEntry
from irjit.ops.type_parser import parse_type_text

_FIXED_LIST = re.compile(r"\[\d+\]")
_ALIAS_SET = re.compile(r"\((?:[a-z*!|]|\s|->)*\)")
_TYPE_VARS = ("t", "t1", "t2", "tVal", "tKey")
_NUMBER_NAMES = ("int", "float", "bool", "complex", "Scalar")


class MatchError(Exception):
    """No schema of the op accepts the arguments; the message says why."""


def schema_type(text: str) -> Type:
    """The IR type of a schema argument's spelling (`int[2]?` -> `int[]?`, `t` kept as a name)."""
    text = _ALIAS_SET.sub("", _FIXED_LIST.sub("[]", text))
    return parse_type_text(text.replace("SymInt", "int"))


def fixed_size_lists(schema: registry.Schema) -> frozenset[str]:
    """Names of the `int[N]` arguments, which also accept a single int (`x.sum(1)`)."""
    return frozenset(re.findall(r"\[\d+\]\??\s+(\w+)", schema.text))


def _is_number(t: Type) -> bool:
    return str(t) in _NUMBER_NAMES


def accepts(formal: Type, actual: Type, bindings: dict, loose: bool) -> bool:
    """Whether a value of type `actual` may be passed for `formal`, binding type variables."""
    name = str(formal)
    if name in _TYPE_VARS:
        bound = bindings.get(name)
        if bound is None:
            bindings[name] = actual
            return True
        return bound == actual or (isinstance(bound, TensorType) and isinstance(actual, TensorType))
    if name == "Any":
        return True
    if isinstance(formal, OptionalType):
        if actual == NONE:
            return True
        if isinstance(actual, OptionalType):
            return accepts(formal.elem, actual.elem, bindings, loose)
        return accepts(formal.elem, actual, bindings, loose)
    if isinstance(formal, TensorType):
        return isinstance(actual, TensorType) or (loose and _is_number(actual))
    if isinstance(formal, ListType):
        if isinstance(actual, ListType):
            return accepts(formal.elem, actual.elem, bindings, loose)
        return False
    if isinstance(formal, TupleType):
        return isinstance(actual, TupleType) and len(actual.elems) == len(formal.elems) and \
            all(accepts(f, a, bindings, loose) for f, a in zip(formal.elems, actual.elems))
    if isinstance(formal, GenericType):
        return isinstance(actual, GenericType) and actual.name == formal.name and \
            len(actual.args) == len(formal.args) and \
            all(accepts(f, a, bindings, loose) for f, a in zip(formal.args, actual.args))
    if name in ("int", "ScalarType", "Layout", "MemoryFormat"):
        return actual == INT
    if name == "float":
        return actual == FLOAT or (loose and actual == INT)
    if name in ("Scalar", "number"):
        return _is_number(actual)
    if name == "complex":
        return str(actual) == "complex" or (loose and actual in (INT, FLOAT))
    if name in ("Device",):
        return str(actual) in ("Device", "str")
    return actual == formal


def substitute(t: Type, bindings: dict) -> Type:
    """`t` with its type variables replaced by what matching bound them to."""
    name = str(t)
    if name in _TYPE_VARS:
        return bindings.get(name, ANY)
    if name in ("Scalar", "number"):
        return NUMBER
    if isinstance(t, TensorType):
        return TENSOR
    if isinstance(t, ListType):
        return ListType(substitute(t.elem, bindings))
    if isinstance(t, OptionalType):
        return OptionalType(substitute(t.elem, bindings))
    if isinstance(t, TupleType):
        return TupleType(tuple(substitute(e, bindings) for e in t.elems))
    if isinstance(t, GenericType):
        return GenericType(t.name, tuple(substitute(a, bindings) for a in t.args), t.brackets)
    return t


@dataclass
class Match:
    """A chosen schema and, per schema argument, the value to pass (None: use the default)."""

    entry: OpEntry
    inputs: list
    output_types: list[Type]


def _try_schema(entry: OpEntry, args: list[Value], kwargs: dict[str, Value], loose: bool,
                pack_list) -> Optional[Match]:
    s = entry.schema
    if s.variadic:
        return None
    formals = [schema_type(a.type) for a in s.arguments]
    bindings: dict = {}
    chosen: list = [None] * len(s.arguments)
    positional = list(args)
    n_positional = sum(1 for a in s.arguments if not a.kwarg_only)
    # varargs packed into one list argument: x.view(2, 3), x.permute(1, 0)
    if len(positional) > n_positional and n_positional >= 1:
        last = n_positional - 1
        if isinstance(formals[last], ListType) and str(formals[last].elem) == "int" and \
                all(v.type == INT for v in positional[last:]):
            positional = positional[:last] + [pack_list(positional[last:], INT)]
    if len(positional) > n_positional:
        return None
    for i, v in enumerate(positional):
        chosen[i] = v
    names = [a.name for a in s.arguments]
    for key, v in kwargs.items():
        if key not in names:
            return None
        i = names.index(key)
        if chosen[i] is not None:
            return None
        chosen[i] = v
    for i, (arg, formal) in enumerate(zip(s.arguments, formals)):
        v = chosen[i]
        if v is None:
            if arg.default is NO_DEFAULT:
                return None
            continue
        if v.type == INT and arg.name in fixed_size_lists(s):
            continue  # a single int for int[N]: packed once this schema is chosen
        if not accepts(formal, v.type, bindings, loose):
            return None
    outs = [substitute(schema_type(r.type), bindings) for r in s.returns]
    return Match(entry, chosen, outs)


def match(kind: str, args: list[Value], kwargs: dict[str, Value], pack_list) -> Match:
    """The schema of `kind` TorchScript would call with these arguments; `pack_list(values,
    elem_type)` builds a list value when varargs are packed. Raises MatchError."""
    candidates = registry.overloads(kind)
    if not candidates:
        raise MatchError(f"unknown builtin op: {kind}")
    for loose in (False, True):
        for entry in candidates:
            m = _try_schema(entry, args, kwargs, loose, pack_list)
            if m is not None:
                return m
    described = ", ".join(str(v.type) for v in args)
    if kwargs:
        described += (", " if described else "") + \
            ", ".join(f"{k}={v.type}" for k, v in kwargs.items())
    options = "\n  ".join(e.schema.text for e in candidates[:6])
    raise MatchError(f"arguments for call are not valid: no overload of {kind} accepts "
                     f"({described}); candidates:\n  {options}")


def schema_for_inputs(kind: str, inputs: list[Value]) -> Optional[registry.Schema]:
    """The schema a node of `kind` with these inputs (all passed positionally, as graphs
    hold them) was made from, or None when no registered schema fits."""
    for loose in (False, True):
        for entry in registry.overloads(kind):
            s = entry.schema
            if s.variadic or len(inputs) > len(s.arguments):
                continue
            if any(a.default is NO_DEFAULT for a in s.arguments[len(inputs):]):
                continue
            bindings: dict = {}
            if all(accepts(schema_type(a.type), v.type, bindings, loose)
                   for a, v in zip(s.arguments, inputs)):
                return s
    return None
