"""Native lowering rules of the ops on numbers (int, float, bool) for scalar programs: a rule
is `f(e, *args) -> value` written against the number emitter `e` of
compiler/codegen/scalar_program_emit.py, with TorchScript's (this interpreter's) semantics:
ints are int64 and an overflow, a division or modulo by zero or an int() of nan/inf is a
refused call (the interpreter re-runs the program and raises), `//` and `%` floor like
Python, `/` is true division, mixed int/float comparisons are exact.

The emitter offers add, sub, mul, div, floordiv, remainder, fmod, pow (float result), neg, abs, maximum, minimum, copysign, round_to_zero_floordiv; lt, le, gt, ge, eq,
ne; not_, and_, or_, xor; to_float, to_int (truncation), to_bool, floor, ceil (to int),
round (half to even); isnan, isinf, isfinite; call(name, x) for the math library; all(list),
any(list); for tensor arguments: defined(x) (not None), is_none(x) (numbers never are),
item(x, zero_dim=False) (the one element, a number of the dtype's kind), dim(x), numel(x),
size(x, dim), each checking the argument's layout at run time; for lists (built in the
program, constant, or read-only list arguments): length(xs), getitem(xs, i), contains(xs, x);
for lists the program builds (compiler/codegen/scalar_program_lists.py): append(xs, x),
slice_list(xs, start, end, step), concat(xs, ys) and sorted_list(xs) (new lists)."""

from __future__ import annotations

from . import containers, scalar, scalar_math  # noqa: F401  (registers the overloads named below)
from typing import Callable, Optional

from .lowering_common import NotLowerable
from .registry import OpEntry, get

# full overload name -> rule; kept apart from the tensor rules (`OpEntry.lowering`), which are
# written against the kernel emitter
NUMBER_RULES: dict[str, Callable] = {}


def lowering(*full_names: str):
    """Decorator: the scalar-program rule of the named (registered) overloads."""
    def wrap(fn):
        for name in full_names:
            get(name)  # a KeyError for an unregistered overload
            NUMBER_RULES[name] = fn
        return fn
    return wrap


def number_rule(entry: OpEntry) -> Optional[Callable]:
    """The scalar-program rule of an overload, or None."""
    return NUMBER_RULES.get(entry.schema.full_name)

_MIXED = ("int", "float", "int_float", "float_int")


def _names(op: str, overloads) -> list[str]:
    return [f"{op}.{o}" if o else op for o in overloads]


# the Scalar overloads ("") are what bool operands resolve to; the node's declared type must
# still be the kind the emitter computes (checked where the rule is applied)
for _name, _method in (("add", "add"), ("sub", "sub"), ("mul", "mul"), ("floordiv", "floordiv"),
                       ("remainder", "remainder"), ("fmod", "fmod"), ("copysign", "copysign"),
                       ("lt", "lt"), ("le", "le"), ("gt", "gt"), ("ge", "ge"), ("eq", "eq"),
                       ("ne", "ne")):
    lowering(*_names(f"aten::{_name}", _MIXED + ("",)))(
        lambda e, a, b, _method=_method: getattr(e, _method)(a, b))
lowering("aten::eq.bool")(lambda e, a, b: e.eq(a, b))
lowering("aten::ne.bool")(lambda e, a, b: e.ne(a, b))
lowering("prim::max.int", "prim::max.float", "prim::max.int_float", "prim::max.float_int")(
    lambda e, a, b: e.maximum(a, b))
lowering("prim::min.int", "prim::min.float", "prim::min.int_float", "prim::min.float_int")(
    lambda e, a, b: e.minimum(a, b))


@lowering("aten::div.int", "aten::div.float", "aten::div")
def _div(e, a, b):
    return e.div(a, b)


@lowering(*_names("aten::pow", _MIXED), "aten::pow.Scalar_Scalar")
def _pow(e, a, b):
    return e.pow(a, b)


@lowering("aten::__round_to_zero_floordiv.int")
def _round_to_zero_floordiv(e, a, b):
    return e.round_to_zero_floordiv(a, b)


@lowering("aten::neg.int", "aten::neg.float")
def _neg(e, a):
    return e.neg(a)


@lowering("prim::abs.int", "prim::abs.float")
def _abs(e, a):
    return e.abs(a)


for _name, _method in (("__and__", "and_"), ("__or__", "or_"), ("__xor__", "xor")):
    lowering(f"aten::{_name}.bool", f"aten::{_name}.int")(
        lambda e, a, b, _method=_method: getattr(e, _method)(a, b))


@lowering("aten::__not__")
def _not(e, a):
    return e.not_(a)


# ---- conversions and rounding

@lowering("aten::Float.Tensor")
def _float_of_tensor(e, t):
    return e.to_float(e.item(t))


@lowering("aten::Int.Tensor")
def _int_of_tensor(e, t):
    return e.to_int(e.item(t))


@lowering("aten::Bool.Tensor")
def _bool_of_tensor(e, t):
    return e.to_bool(e.item(t))


@lowering("aten::FloatImplicit")
def _float_implicit(e, t):
    return e.to_float(e.item(t, zero_dim=True))


@lowering("aten::IntImplicit")
def _int_implicit(e, t):
    x = e.item(t, zero_dim=True)
    if x.kind == "float":
        raise NotLowerable("IntImplicit of a float tensor raises")
    return e.to_int(x)


# conversions and roundings whose rule is the emitter method of that name
for _method, _overloads in (
        ("to_float", ("aten::Float.int", "aten::Float.bool", "aten::Float.Scalar")),
        ("to_int", ("aten::Int.float", "aten::Int.bool", "aten::Int.Scalar")),
        ("to_bool", ("aten::Bool.int", "aten::Bool.float")),
        ("floor", ("aten::floor.int", "aten::floor.float")),
        ("ceil", ("aten::ceil.int", "aten::ceil.float")),
        ("round", ("aten::round.int", "aten::round.float"))):
    lowering(*_overloads)(lambda e, a, _method=_method: getattr(e, _method)(a))

for _name in ("isnan", "isinf", "isfinite"):
    lowering(f"aten::{_name}.float")(lambda e, a, _name=_name: getattr(e, _name)(a))

# ---- tensor metadata (checked against the tensor's complete type at run time) and None tests

@lowering("aten::dim")
def _dim(e, t):
    return e.dim(t)


@lowering("aten::numel")
def _numel(e, t):
    return e.numel(t)


@lowering("aten::size.int")
def _size(e, t, dim):
    return e.size(t, dim)


@lowering("aten::len.Tensor")
def _len_of_tensor(e, t):
    return e.size(t, 0)


def _is_none(e, a, b):
    if a is not None and b is not None:
        raise NotLowerable("`is` of two values that are not None")
    return e.is_none(b if a is None else a)


@lowering("aten::__is__")
def _is(e, a, b):
    return _is_none(e, a, b)


@lowering("aten::__isnot__")
def _isnot(e, a, b):
    return e.not_(_is_none(e, a, b))


# ---- math functions (the math library's, on doubles)

for _name in ("sqrt", "exp", "expm1", "log", "log1p", "log10", "sin", "cos", "tan", "asin", "acos",
              "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "erfc"):
    lowering(f"aten::{_name}.int", f"aten::{_name}.float")(lambda e, a, _name=_name: e.call(_name, a))


@lowering(*_names("aten::log", ("int_int", "float_float", "int_float", "float_int")))
def _log_base(e, a, b):
    return e.div(e.call("log", a), e.call("log", b))


# ---- lists of numbers built in the program, and the autograd-zero checks

@lowering("aten::all.bool", "aten::all.int", "aten::all.float")
def _all(e, xs):
    return e.all(xs)


@lowering("aten::any.bool", "aten::any.int", "aten::any.float")
def _any(e, xs):
    return e.any(xs)


@lowering("aten::len.t")
def _len(e, xs):
    return e.length(xs)


@lowering("aten::__getitem__.t")
def _getitem(e, xs, idx):
    return e.getitem(xs, idx)


@lowering("aten::__contains__.int_list", "aten::__contains__.float_list")
def _contains(e, xs, item):
    return e.contains(xs, item)


# prims without a registry entry: kind -> rule
PRIM_NUMBER_RULES = {
    "prim::ListConstruct": lambda e, *xs: list(xs),
    "prim::AutogradAllNonZero": lambda e, *xs: e.all([e.defined(x) for x in xs]),
    "prim::AutogradAllZero": lambda e, *xs: e.all([e.not_(e.defined(x)) for x in xs]),
    "prim::AutogradAnyNonZero": lambda e, *xs: e.any([e.defined(x) for x in xs]),
}


# ---- lists the program builds (compiler/codegen/scalar_program_lists.py)

@lowering("aten::append.t")
def _append(e, xs, x):
    return e.append(xs, x)


@lowering("aten::slice.t")
def _slice_list(e, xs, start=None, end=None, step=1):
    return e.slice_list(xs, start, end, step)


@lowering("aten::add.t")
def _concat(e, xs, ys):
    return e.concat(xs, ys)


@lowering("aten::sorted.int", "aten::sorted.float")
def _sorted(e, xs):
    return e.sorted_list(xs)
