"""TorchScript's builtins on Python numbers (int/float/bool/complex): arithmetic, comparison,
bool logic, identity, min/max. Semantics are TorchScript's, not Python's where they differ:
float division by zero gives inf/nan, `int / int` is float, `a ** b` on ints is float
(`aten::pow.int`), floordiv/remainder follow Python's sign rules.
"""

from __future__ import annotations

import math
import operator

from .registry import op

INT_MIN = -(2 ** 63)


def _pairs(name: str, ret: dict[str, str] | None = None) -> list[str]:
    """The int/float/int_float/float_int/complex/Scalar overloads of a binary builtin;
    `ret` maps overload -> return type where it is not the usual one."""
    ret = ret or {}
    kinds = {"int": ("int", "int", "int"), "float": ("float", "float", "float"),
             "int_float": ("int", "float", "float"), "float_int": ("float", "int", "float"),
             "complex": ("complex", "complex", "complex"),
             "int_complex": ("int", "complex", "complex"), "complex_int": ("complex", "int", "complex"),
             "float_complex": ("float", "complex", "complex"),
             "complex_float": ("complex", "float", "complex")}
    out = []
    for ov, (a, b, r) in kinds.items():
        if ov in ret and ret[ov] is None:
            continue
        out.append(f"aten::{name}.{ov}({a} a, {b} b) -> {ret.get(ov, r)}")
    out.append(f"aten::{name}(Scalar a, Scalar b) -> {ret.get('Scalar', 'Scalar')}")
    return out


def _true_div(a, b):
    """C++ double division: x/0 is +-inf, 0/0 is nan."""
    if isinstance(a, complex) or isinstance(b, complex):
        return complex(a) / complex(b)
    a, b = float(a), float(b)
    if b == 0:
        if a == 0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def _binary(fn):
    """A Python-level wrapper (so every registered impl is a function of this module)."""
    return lambda a, b: fn(a, b)


op(*_pairs("add"))(_binary(operator.add))
op(*_pairs("sub"))(_binary(operator.sub))
op(*_pairs("mul"))(_binary(operator.mul))

@op("aten::div.int(int a, int b) -> float", "aten::div.float(float a, float b) -> float",
    "aten::div.complex(complex a, complex b) -> complex", "aten::div(Scalar a, Scalar b) -> float")
def div(a, b):
    return _true_div(a, b)


def _floordiv(a, b):
    if isinstance(a, int) and isinstance(b, int):
        if b == 0:
            raise ZeroDivisionError("division by 0")
        return a // b
    a, b = float(a), float(b)
    if b == 0:
        return _true_div(a, b)
    return float(math.floor(a / b)) if math.isinf(a) else a // b


def _remainder(a, b):
    if isinstance(a, int) and isinstance(b, int):
        if b == 0:
            raise ZeroDivisionError("integer modulo by zero")
        return a % b
    a, b = float(a), float(b)
    if b == 0 or math.isinf(a):
        return math.nan
    return a % b


_REAL = {k: None for k in ("complex", "int_complex", "complex_int", "float_complex", "complex_float")}
op(*_pairs("floordiv", _REAL))(_floordiv)
op(*_pairs("remainder", _REAL))(_remainder)


@op("aten::__round_to_zero_floordiv.int(int a, int b) -> int")
def round_to_zero_floordiv(a, b):
    if b == 0:
        raise ZeroDivisionError("division by 0")
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


@op(*_pairs("fmod", {**_REAL, "int": "float", "Scalar": "float"}))
def fmod(a, b):
    a, b = float(a), float(b)
    return math.nan if b == 0 or math.isinf(a) else math.fmod(a, b)


def _float_pow(a, b):
    if a == 0 and b < 0:
        raise ZeroDivisionError("0.0 cannot be raised to a negative power")
    try:
        return math.pow(a, b)
    except ValueError:  # negative base, fractional exponent: C++ gives nan
        return math.nan
    except OverflowError:
        return math.inf if a > 0 or float(b).is_integer() and b % 2 == 0 else -math.inf


@op("aten::pow.int(int a, int b) -> float", "aten::pow.float(float a, float b) -> float",
    "aten::pow.int_float(int a, float b) -> float", "aten::pow.float_int(float a, int b) -> float",
    "aten::pow.Scalar_Scalar(Scalar a, Scalar b) -> float")
def pow_(a, b):
    if isinstance(a, complex) or isinstance(b, complex):
        return complex(a) ** complex(b)
    return _float_pow(float(a), float(b))


@op("aten::pow.complex(complex a, complex b) -> complex",
    "aten::pow.float_complex(float a, complex b) -> complex",
    "aten::pow.complex_float(complex a, float b) -> complex")
def pow_complex(a, b):
    return complex(a) ** complex(b)


@op("aten::pow.int_to_int(int a, int b) -> int")
def pow_int_to_int(a, b):
    if b < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    return a ** b


@op("aten::neg.int(int a) -> int", "aten::neg.float(float a) -> float",
    "aten::neg.complex(complex a) -> complex", "aten::neg.Scalar(Scalar a) -> Scalar")
def neg(a):
    return -a


@op("prim::abs.int(int a) -> int", "prim::abs.float(float a) -> float",
    "prim::abs.complex(complex a) -> float", "prim::abs.Scalar(Scalar a) -> Scalar")
def abs_(a):
    return abs(a)


# ---- comparisons

_CMP = {"eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le,
        "gt": operator.gt, "ge": operator.ge}


def _tensor_truth(x) -> bool:
    """bool() of a tensor comparison result, as TorchScript's is_nonzero."""
    import numpy as np
    x = np.asarray(x)
    if x.size != 1:
        raise RuntimeError(f"Boolean value of Tensor with {'no values' if x.size == 0 else 'more than one value'} "
                           "is ambiguous")
    return bool(x.reshape(()))


def _tensor_list_eq(a, b) -> bool:
    import numpy as np
    if len(a) != len(b):
        return False
    return all(_tensor_truth(np.equal(x, y)) for x, y in zip(a, b))


for _name, _fn in _CMP.items():
    _schemas = [f"aten::{_name}.int(int a, int b) -> bool", f"aten::{_name}.float(float a, float b) -> bool",
                f"aten::{_name}.int_float(int a, float b) -> bool",
                f"aten::{_name}.float_int(float a, int b) -> bool",
                f"aten::{_name}(Scalar a, Scalar b) -> bool", f"aten::{_name}.str(str a, str b) -> bool"]
    if _name in ("eq", "ne"):
        _schemas[4:4] = [f"aten::{_name}.bool(bool a, bool b) -> bool",
                         f"aten::{_name}.complex(complex a, complex b) -> bool",
                         f"aten::{_name}.float_complex(float a, complex b) -> bool",
                         f"aten::{_name}.complex_float(complex a, float b) -> bool"]
        _schemas += [f"aten::{_name}.int_list(int[] a, int[] b) -> bool",
                     f"aten::{_name}.float_list(float[] a, float[] b) -> bool",
                     f"aten::{_name}.bool_list(bool[] a, bool[] b) -> bool",
                     f"aten::{_name}.str_list(str[] a, str[] b) -> bool",
                     f"aten::{_name}.device(Device a, Device b) -> bool"]
    op(*_schemas)(lambda a, b, _fn=_fn: bool(_fn(list(a), list(b)) if isinstance(a, (list, tuple)) else _fn(a, b)))


@op("aten::eq.Tensor_list(Tensor[] a, Tensor[] b) -> bool")
def eq_tensor_list(a, b):
    return _tensor_list_eq(a, b)


@op("aten::ne.Tensor_list(Tensor[] a, Tensor[] b) -> bool")
def ne_tensor_list(a, b):
    return not _tensor_list_eq(a, b)


# ---- bool / int logic and identity

op("aten::__and__.bool(bool a, bool b) -> bool", "aten::__and__.int(int a, int b) -> int")(_binary(operator.and_))
op("aten::__or__.bool(bool a, bool b) -> bool", "aten::__or__.int(int a, int b) -> int")(_binary(operator.or_))
op("aten::__xor__.bool(bool a, bool b) -> bool", "aten::__xor__.int(int a, int b) -> int")(_binary(operator.xor))


@op("aten::__not__(bool self) -> bool")
def not_(self):
    return not self


def is_same(a, b) -> bool:
    """TorchScript's `is`: None is None; numbers and bools by type and value; anything else
    (tensors, lists, dicts, strings, objects) by identity."""
    if a is None or b is None:
        return a is b
    if isinstance(a, (bool, int, float)) and isinstance(b, (bool, int, float)):
        return type(a) is type(b) and a == b
    return a is b


@op("aten::__is__(t1 self, t2 obj) -> bool")
def is_(self, obj):
    return is_same(self, obj)


@op("aten::__isnot__(t1 self, t2 obj) -> bool")
def isnot(self, obj):
    return not is_same(self, obj)


# ---- min / max (TorchScript compiles min()/max() on numbers and lists to prim::)


def _minmax(name, pick):
    op(f"prim::{name}.int(int a, int b) -> int", f"prim::{name}.float(float a, float b) -> float",
       f"prim::{name}.int_float(int a, float b) -> float", f"prim::{name}.float_int(float a, int b) -> float",
       f"prim::{name}(Scalar a, Scalar b) -> Scalar")(
        lambda a, b: _as_float_if_mixed(pick(a, b), a, b))
    op(f"prim::{name}.int_list(int[] l, int[] r) -> int[]",
       f"prim::{name}.float_list(float[] l, float[] r) -> float[]",
       f"prim::{name}.bool_list(bool[] l, bool[] r) -> bool[]")(lambda l, r: list(pick(list(l), list(r))))

    def of_list(self):
        if not self:
            raise ValueError(f"{name}() arg is an empty sequence")
        best = self[0]
        for x in self[1:]:
            best = pick(best, x)
        return best
    op(f"prim::{name}.self_int(int[] self) -> int", f"prim::{name}.self_float(float[] self) -> float",
       f"prim::{name}.self_bool(bool[] self) -> bool")(of_list)


def _as_float_if_mixed(v, a, b):
    if isinstance(a, float) or isinstance(b, float):
        return float(v)
    return v


def _nan_max(a, b):
    """C++ std::max-like but NaN-propagating, as TorchScript's prim::max on floats."""
    if isinstance(a, float) and math.isnan(a) or isinstance(b, float) and math.isnan(b):
        return math.nan
    return b if b > a else a


def _nan_min(a, b):
    if isinstance(a, float) and math.isnan(a) or isinstance(b, float) and math.isnan(b):
        return math.nan
    return b if b < a else a


_minmax("max", _nan_max)
_minmax("min", _nan_min)


@op("aten::all.bool(bool[] self) -> bool", "aten::all.int(int[] self) -> bool",
    "aten::all.float(float[] self) -> bool")
def all_list(self):
    return all(bool(x) for x in self)


@op("aten::any.bool(bool[] self) -> bool", "aten::any.int(int[] self) -> bool",
    "aten::any.float(float[] self) -> bool", "aten::any.str(str[] self) -> bool")
def any_list(self):
    return any(bool(x) for x in self)
