"""The operator registry: one entry per PyTorch schema, with its numpy implementation and,
where the op is differentiable, its derivative formula.

Implementations take and return numpy arrays for tensors and plain Python values for
everything else, positionally in schema order (TorchScript passes keyword-only arguments
positionally too). Overloads are resolved from the argument values the way TorchScript's
schema matching does: exact types first, then the implicit int->float and bool->int
conversions. Every layer asks this registry; no op is defined twice.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import numpy as np

from .errors import IRTypeError

NO_DEFAULT = object()


@dataclass(frozen=True)
class Argument:
    name: str
    type: str  # as written in the schema: "Tensor", "int[]", "Scalar?", "t", ...
    default: Any = NO_DEFAULT
    kwarg_only: bool = False
    alias: Optional[str] = None  # "a" for `Tensor(a)`, "a!" for `Tensor(a!)`
    wildcard: bool = False  # `t(c -> *)`: the value may end up anywhere (stored in a container)

    @property
    def is_tensor(self) -> bool:
        return self.type in ("Tensor", "Tensor?")

    @property
    def is_tensor_list(self) -> bool:
        return self.type in ("Tensor[]", "Tensor?[]")




@dataclass(frozen=True)
class Schema:
    name: str  # qualified: "aten::add"
    overload: str  # "Tensor", "" for the default overload
    arguments: tuple[Argument, ...]
    returns: tuple[Argument, ...]
    variadic: bool = False  # `(...)`: any number of arguments of any type
    text: str = ""

    @property
    def full_name(self) -> str:
        return f"{self.name}.{self.overload}" if self.overload else self.name

    @property
    def identity_args(self) -> tuple[bool, ...]:
        """Per argument: whether the run-time object itself must reach the implementation
        (a list that is written or aliased, or a tensor stored into a written container),
        rather than its array."""
        writes_container = any((a.alias or "").endswith("!") and not a.is_tensor
                               for a in self.arguments)
        return tuple((a.is_tensor_list and a.alias is not None) or (a.wildcard and writes_container)
                     for a in self.arguments)

    @property
    def is_inplace(self) -> bool:
        return bool(self.arguments) and self.arguments[0].is_tensor and \
            (self.arguments[0].alias or "").endswith("!")

    @property
    def is_view(self) -> bool:
        return bool(self.returns) and self.returns[0].alias is not None and \
            not self.returns[0].alias.endswith("!")

    def __str__(self) -> str:
        return self.text


@dataclass
class OpEntry:
    schema: Schema
    impl: Callable
    derivative: Optional[Callable] = None
    # `rule(shapes, values) -> sizes`: output sizes from the inputs' (partial) sizes and the
    # non-tensor inputs' values, None when unknown (see `shape_rules`)
    shape_rule: Optional[Callable] = None
    # `rule(dtypes) -> dtype`: output dtype from the tensor inputs' numpy dtypes (`shape_rules`)
    dtype_rule: Optional[Callable] = None
    # category tags ("pointwise", "comparison", "view", "fusible", "differentiable", "random",
    # "side_effects", ...), set from the op layer's facts once every op is registered (`facts`)
    tags: frozenset = frozenset()
    # ops whose result depends on more than their inputs (random ops) are not folded or CSE'd
    nondeterministic: bool = False
    extras: dict = field(default_factory=dict)
    # `f(e, *args) -> value` written against a scalar emitter `e` (see ops/lowering_common.py)
    lowering: Optional[Callable] = None

    def __repr__(self) -> str:
        return f"<op {self.schema.text}>"

    @property
    def has_side_effects(self) -> bool:
        return "side_effects" in self.tags

    @property
    def is_random(self) -> bool:
        return "random" in self.tags


_REGISTRY: dict[str, list[OpEntry]] = {}
_BY_FULL_NAME: dict[str, OpEntry] = {}

# ---- schema parsing


def _split_args(text: str) -> list[str]:
    from .type_parser import split_top_level
    return [p for p in split_top_level(text) if p]


def _parse_default(text: str) -> Any:
    text = text.strip()
    if text == "None":
        return None
    if text in ("True", "False"):
        return text == "True"
    if text.startswith("[") and text.endswith("]"):
        inner = text[1:-1].strip()
        return [] if not inner else [_parse_default(x) for x in inner.split(",")]
    if text.startswith(("'", '"')):
        import ast
        return ast.literal_eval(text)
    if text == "contiguous_format":
        return 0
    if text in ("long", "float", "int"):
        return text
    try:
        return int(text)
    except ValueError:
        return float(text)


_ALIAS = re.compile(r"[a-z][a-z|!* ]*(?:->[a-z* ]*)?")


def _balanced(text: str, i: int) -> int:
    """The index just past the bracket group that opens at `text[i]`."""
    depth = 0
    for j in range(i, len(text)):
        if text[j] in "([":
            depth += 1
        elif text[j] in ")]":
            depth -= 1
            if depth == 0:
                return j + 1
    raise ValueError(f"unbalanced brackets in schema argument {text!r}")


def _parse_arg(text: str, kwarg_only: bool) -> Argument:
    """One schema argument or return: `Tensor(a!) self`, `int[2] stride=1`, `Tensor(a -> *)`,
    `Dict(str, t)(a!) self`, `(str, t)`."""
    text = text.strip()
    i = 0
    if text.startswith("("):  # a tuple type
        i = _balanced(text, 0)
    else:
        m = re.match(r"[A-Za-z_][A-Za-z0-9_]*", text)
        if m is None:
            raise ValueError(f"bad schema argument {text!r}")
        i = m.end()
    type_text, alias, wildcard = text[:i], None, False
    while i < len(text) and text[i] in "([?":
        if text[i] == "?":
            type_text += "?"
            i += 1
            continue
        j = _balanced(text, i)
        inner = text[i + 1:j - 1].strip()
        if text[i] == "(" and _ALIAS.fullmatch(inner):
            wildcard = "*" in inner
            sets = inner.split("->")[0].strip()
            alias = sets.split("|")[0].strip().rstrip("!") + ("!" if "!" in sets else "")
        else:  # `[]`, `[2]`, or the parameters of a type such as Dict(str, t)
            type_text += text[i:j]
        i = j
    rest = text[i:].strip()
    name, default = "", NO_DEFAULT
    if rest:
        nm = re.match(r"^([A-Za-z_][A-Za-z0-9_]*)(?:\s*=\s*(.+))?$", rest)
        if nm is None:
            raise ValueError(f"bad schema argument {text!r}")
        name = nm.group(1)
        if nm.group(2) is not None:
            default = _parse_default(nm.group(2))
    return Argument(name, _normalize_type(type_text), default, kwarg_only, alias, wildcard)


def _normalize_type(t: str) -> str:
    return re.sub(r"\[[0-9]+\]", "[]", t)


def parse_schema(text: str) -> Schema:
    """A Schema from PyTorch's schema syntax, e.g.
    `aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor`."""
    m = re.match(r"^\s*([A-Za-z_][A-Za-z0-9_]*::[A-Za-z0-9_]+)(?:\.([A-Za-z0-9_]+))?\((.*)\)\s*->\s*(.+?)\s*$",
                 text)
    if m is None:
        raise ValueError(f"bad schema {text!r}")
    name, overload, args_text, ret_text = m.group(1), m.group(2) or "", m.group(3), m.group(4)
    if args_text.strip() == "..." or args_text.rstrip().endswith(", ..."):
        return Schema(name, overload, (), (Argument("", "Any"),), True, text)
    args, kwarg_only = [], False
    for part in _split_args(args_text):
        if part == "*":
            kwarg_only = True
            continue
        args.append(_parse_arg(part, kwarg_only))
    ret_text = ret_text.strip()
    if ret_text == "()":
        rets = ()
    elif ret_text == "...":
        rets = (Argument("", "Any"),)
    elif ret_text.startswith("(") and ret_text.endswith(")"):
        rets = tuple(_parse_arg(p, False) for p in _split_args(ret_text[1:-1]))
    else:
        rets = (_parse_arg(ret_text, False),)
    return Schema(name, overload, tuple(args), rets, False, text)


# ---- registration


def register(schema_text: str, impl: Callable, derivative: Optional[Callable] = None,
             nondeterministic: bool = False) -> OpEntry:
    schema = parse_schema(schema_text)
    if schema.full_name in _BY_FULL_NAME:
        raise AssertionError(f"{schema.full_name} is registered twice")
    entry = OpEntry(schema, impl, derivative, nondeterministic=nondeterministic)
    _REGISTRY.setdefault(schema.name, []).append(entry)
    _BY_FULL_NAME[schema.full_name] = entry
    _resolution_cache.clear()
    return entry


def op(*schema_texts: str, nondeterministic: bool = False):
    """Decorator: register the function as the implementation of each schema."""
    def wrap(fn):
        for text in schema_texts:
            register(text, fn, nondeterministic=nondeterministic)
        return fn
    return wrap


def derivative(*full_names: str):
    """Decorator: the derivative formula of the named overloads (`aten::mul.Tensor`).

    A formula is `f(e, grads, inputs, outputs) -> list`, written with the emitter `e`
    (`e.op(kind, *args)`, `e.sum_to(x, like)`, ...) so that the same formula serves the
    interpreter's tape autograd (numeric) and symbolic differentiation (IR). It returns one
    gradient (or None) per input; for a `Tensor[]` input, a list.
    """
    def wrap(fn):
        for name in full_names:
            entry = _BY_FULL_NAME.get(name)
            if entry is None:
                raise AssertionError(f"derivative for unregistered op {name}")
            entry.derivative = fn
        return fn
    return wrap


def get(full_name: str) -> OpEntry:
    return _BY_FULL_NAME[full_name]


def overloads(kind: str) -> list[OpEntry]:
    return _REGISTRY.get(kind, [])


def all_entries() -> list[OpEntry]:
    return list(_BY_FULL_NAME.values())


def is_registered(kind: str) -> bool:
    return kind in _REGISTRY


# ---- overload resolution from runtime values


_ARRAY_TYPES: tuple = (np.ndarray,)


_LEAF_KEYS: dict = {int: int, float: float, bool: bool, str: str, type(None): type(None),
                    np.ndarray: "T"}  # exact types whose key is fixed (Tensor added with it)


def _type_key(v: Any) -> Any:
    key = _LEAF_KEYS.get(type(v))
    if key is not None:
        return key
    if isinstance(v, _ARRAY_TYPES):
        return "T"
    if isinstance(v, (list, tuple)):
        if not v:
            return ("L", "empty") if isinstance(v, list) else ("U", 0)
        if isinstance(v, tuple):
            return ("U", tuple(_type_key(x) for x in v))
        return ("L", _type_key(v[0]))
    if isinstance(v, np.generic):
        return type(v.item())
    return type(v)


def _matches(key: Any, t: str, loose: bool) -> bool:
    if t.endswith("?"):
        if key is type(None):
            return True
        t = t[:-1]
    if t == "AnyEnumType":
        return getattr(key, "is_enum_member", False)
    if t in ("Any", "t", "t1", "t2"):
        return True
    if t == "Tensor":
        return key == "T"
    if t.endswith("[]"):
        elem = t[:-2]
        if isinstance(key, tuple) and key[0] == "L":
            return key[1] == "empty" or _matches(key[1], elem, loose)
        if isinstance(key, tuple) and key[0] == "U":  # tuples pass as lists of ints (sizes)
            return all(_matches(k, elem, loose) for k in key[1]) if key[1] else True
        return elem in ("int", "SymInt") and key is int  # `int[2]` accepts a single int
    if t in ("int", "SymInt", "ScalarType", "Layout", "MemoryFormat"):
        return key is int or (loose and key is bool)
    if t == "float":
        return key is float or (loose and key in (int, bool))
    if t == "bool":
        return key is bool
    if t in ("Scalar", "number"):
        return key in (int, float, bool, complex)
    if t == "complex":
        return key is complex or (loose and key in (int, float))
    if t == "str":
        return key is str or (key is not None and getattr(key, "__name__", "") == "Device")
    if t == "Device":
        return key is str or getattr(key, "__name__", "") == "Device"
    if t == "Generator":
        return False
    if t.startswith("Dict("):
        return key is dict
    if t.startswith("("):
        return isinstance(key, tuple) and key[0] == "U"
    return False


_resolution_cache: dict[tuple, OpEntry] = {}


def _register_tensor_type() -> None:
    """Run-time Tensors count as tensors in overload resolution (imported late: no cycle)."""
    global _ARRAY_TYPES
    from .tensor import Tensor
    _ARRAY_TYPES = (Tensor, np.ndarray)
    _LEAF_KEYS[Tensor] = "T"


def find_op(kind: str, args: list) -> OpEntry:
    """The overload of `kind` that TorchScript would pick for these argument values."""
    if len(_ARRAY_TYPES) == 1:
        _register_tensor_type()
    keys = tuple([_type_key(a) for a in args])
    cache_key = (kind, keys)
    entry = _resolution_cache.get(cache_key)
    if entry is not None:
        return entry
    candidates = _REGISTRY.get(kind)
    if not candidates:
        raise IRTypeError(f"unknown operator {kind}")
    for loose in (False, True):
        for entry in candidates:
            s = entry.schema
            if s.variadic:
                _resolution_cache[cache_key] = entry
                return entry
            if len(args) > len(s.arguments):
                continue
            if any(a.default is NO_DEFAULT for a in s.arguments[len(args):]):
                continue
            if all(_matches(k, a.type, loose) for k, a in zip(keys, s.arguments)):
                _resolution_cache[cache_key] = entry
                return entry
    described = ", ".join(_describe_key(k) for k in keys)
    options = "\n  ".join(e.schema.text for e in candidates[:8])
    raise IRTypeError(f"no overload of {kind} accepts ({described}); candidates:\n  {options}")


def _describe_key(k: Any) -> str:
    if k == "T":
        return "Tensor"
    if isinstance(k, tuple):
        if k[0] == "L":
            return "list" if k[1] == "empty" else _describe_key(k[1]) + "[]"
        return "(" + ", ".join(_describe_key(x) for x in k[1]) + ")"
    return getattr(k, "__name__", str(k)).replace("NoneType", "None")


def with_defaults(entry: OpEntry, args: list) -> list:
    """`args` extended with the schema's defaults for omitted trailing arguments."""
    params = entry.schema.arguments
    if entry.schema.variadic or len(args) >= len(params):
        return args
    return list(args) + [a.default for a in params[len(args):]]


def lowering(*full_names: str):
    """Decorator: the native lowering rule of the named overloads, `f(e, *args) -> value`,
    written against the scalar emitter `e` that code generation passes in (tensor arguments
    arrive as the emitter's values, constant arguments as Python values)."""
    def wrap(fn):
        for name in full_names:
            entry = _BY_FULL_NAME.get(name)
            if entry is None:
                raise AssertionError(f"lowering for unregistered op {name}")
            entry.lowering = fn
        return fn
    return wrap
