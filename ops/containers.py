"""TorchScript's list builtins (len, indexing, append/extend/insert/pop/remove, slicing,
concatenation and repetition, sort/sorted, count/index, ...), `range` helpers and `warn`.

Lists are Python lists mutated in place; elements (run-time Tensors included) are kept by
identity. Elements compare as TorchScript does: numbers/strings by value, tensors by
`bool(a == b)` (which fails for multi-element tensors).
"""

from __future__ import annotations

import re
import sys

import numpy as np

from .tensor import Tensor
from .registry import op


def schema_compat(text: str) -> str:
    """The few rewrites of a PyTorch schema the registry and `call_op` still need; alias
    annotations are kept (the passes read mutation from `(a!)`).

    - `(str self, ...)` becomes `(...)`: `parse_schema` reads only a fully variadic list.
    - `-> ()` becomes `-> NoneType`: `call_op` cannot wrap an empty return list.
    - `Tensor[]` lists an op mutates or returns elements of (`Tensor[](a!)`, `Tensor[](a)`)
      and the `Tensor` keys of `Dict(Tensor, t)` ops become `t[]`/`t`: `call_op` unwraps
      Tensor-typed arguments, which would mutate a copy of the list / lose key identity.
    Every other schema is registered verbatim (see the report to the lead).
    """
    head, _, rest = text.partition("(")
    args_text, _, ret = rest.rpartition(") -> ")
    if args_text.endswith(", ..."):
        args_text = "..."
    if "Dict(Tensor" in args_text:
        args_text = re.sub(r"\bTensor(\([a-z] -> \*\))? (key|idx)\b", r"t\1 \2", args_text)
    args_text = re.sub(r"\bTensor\[\](\([a-z]!?\))", r"t[]\1", args_text)
    if ret == "()":
        ret = "NoneType"
    return f"{head}({args_text}) -> {ret}"


# registered (rewritten) schema text -> PyTorch's exact text
ORIGINAL_SCHEMAS: dict[str, str] = {}


def cop(*schema_texts: str):
    """`op` for container/string schemas, through `schema_compat`."""
    for t in schema_texts:
        ORIGINAL_SCHEMAS[schema_compat(t)] = t
    return op(*(schema_compat(t) for t in schema_texts))


def data_of(x):
    return x.data if isinstance(x, Tensor) else x


def truth(x) -> bool:
    """bool() of a tensor, as TorchScript's is_nonzero."""
    x = np.asarray(x)
    if x.size != 1:
        raise RuntimeError("Boolean value of Tensor with "
                           f"{'no values' if x.size == 0 else 'more than one value'} is ambiguous")
    return bool(x.reshape(()))


def elem_eq(a, b) -> bool:
    if isinstance(a, (Tensor, np.ndarray)) or isinstance(b, (Tensor, np.ndarray)):
        return truth(np.equal(data_of(a), data_of(b)))
    return a == b


def elem_lt(a, b) -> bool:
    if isinstance(a, (Tensor, np.ndarray)) or isinstance(b, (Tensor, np.ndarray)):
        return truth(np.less(data_of(a), data_of(b)))
    return a < b


def _norm_index(n: int, idx: int) -> int:
    i = idx + n if idx < 0 else idx
    if not 0 <= i < n:
        raise IndexError("list index out of range")
    return i


# ---- size and element access


@cop("aten::len.t(t[] a) -> int", "aten::len.any(Any[] a) -> int")
def len_list(a):
    return len(a)


@cop("aten::len.Tensor(Tensor t) -> int")
def len_tensor(t):
    if t.ndim == 0:
        raise RuntimeError("len() of a 0-d tensor")
    return int(t.shape[0])


@cop("aten::__getitem__.t(t[](a) list, int idx) -> t(*)")
def getitem(list, idx):
    return list[_norm_index(len(list), idx)]


@cop("aten::_set_item.t(t[](a!) l, int idx, t(b -> *) el) -> t[](a!)")
def set_item(l, idx, el):
    l[_norm_index(len(l), idx)] = el
    return l


@cop("aten::slice.t(t[] l, int? start=None, int? end=None, int step=1) -> t[]")
def slice_list(l, start=None, end=None, step=1):
    if step == 0:
        raise ValueError("List slice should have non-zero step")
    return list(l[start:end:step])


# ---- mutation


@cop("aten::append.t(t[](a!) self, t(c -> *) el) -> t[](a!)")
def append(self, el):
    self.append(el)
    return self


@cop("aten::extend.t(t[](a!) self, t[] other) -> ()")
def extend(self, other):
    self.extend(list(other))


@cop("aten::add_.t(t[](a!) self, t[] b) -> t[]")
def add_in_place(self, b):
    """`l += other` in TorchScript: extends `self` and returns it."""
    self.extend(list(b))
    return self


@cop("aten::insert.t(t[](a!) self, int idx, t(b -> *) el) -> ()")
def insert(self, idx, el):
    self.insert(idx, el)


@cop("aten::pop.t(t[](a!) self, int idx=-1) -> t(*)")
def pop(self, idx=-1):
    if not self:
        raise IndexError("pop from empty list")
    return self.pop(_norm_index(len(self), idx))


@cop("aten::remove.int(int[](a!) self, int el) -> ()", "aten::remove.float(float[](a!) self, float el) -> ()",
     "aten::remove.bool(bool[](a!) self, bool el) -> ()", "aten::remove.Tensor(Tensor[](a!) self, Tensor el) -> ()",
     "aten::remove.str(str[](a!) self, str el) -> ()")
def remove(self, el):
    for i, x in enumerate(self):
        if elem_eq(x, el):
            del self[i]
            return
    raise ValueError("list.remove(x): x not in list")


@cop("aten::clear.t(t[](a!) self) -> ()")
def clear(self):
    self.clear()


@cop("aten::reverse.t(t[](a!) self) -> ()")
def reverse(self):
    self.reverse()


class _Key:
    """Sort key ordering elements with `elem_lt` (tensors compare via their 1-element value)."""

    __slots__ = ("v",)

    def __init__(self, v):
        self.v = v

    def __lt__(self, other):
        return elem_lt(self.v, other.v)


def _sorted(items, reverse):
    return sorted(items, key=_Key, reverse=reverse)


@cop("aten::sort.int(int[](a!) self, bool reverse=False) -> ()",
     "aten::sort.float(float[](a!) self, bool reverse=False) -> ()",
     "aten::sort.Tensor(Tensor[](a!) self, bool reverse=False) -> ()",
     "aten::sort.bool(bool[](a!) self, bool reverse=False) -> ()",
     "aten::sort.str(str[](a!) self, bool reverse=False) -> ()",
     "aten::sort.any(t[](a!) self, bool reverse=False) -> ()")
def sort(self, reverse=False):
    self[:] = _sorted(self, reverse)


@cop("aten::sorted.int(int[](a) input) -> int[]", "aten::sorted.float(float[](a) input) -> float[]",
     "aten::sorted.Tensor(Tensor[](a) input) -> Tensor[]", "aten::sorted.bool(bool[](a) input) -> bool[]",
     "aten::sorted.str(str[](a) input) -> str[]", "aten::sorted.any(t[](a) self) -> t[]")
def sorted_(input):
    return _sorted(input, False)


# ---- building new lists


@cop("aten::add.t(t[] a, t[] b) -> t[]")
def concat(a, b):
    return list(a) + list(b)


@cop("aten::mul.left_t(t[] l, int n) -> t[]")
def repeat_left(l, n):
    return list(l) * max(n, 0)


@cop("aten::mul.right_(int n, t[] l) -> t[]")
def repeat_right(n, l):
    return list(l) * max(n, 0)


@cop("aten::list.t(t[] l) -> t[]", "aten::copy.t(t[](a) self) -> t[]")
def list_copy(l):
    return list(l)


# ---- searching


@cop("aten::__contains__.int_list(int[] l, int item) -> bool",
     "aten::__contains__.float_list(float[] l, float item) -> bool",
     "aten::__contains__.str_list(str[] l, str item) -> bool")
def contains(l, item):
    return any(elem_eq(x, item) for x in l)


@cop("aten::count.int(int[] self, int el) -> int", "aten::count.float(float[] self, float el) -> int",
     "aten::count.bool(bool[] self, bool el) -> int", "aten::count.Tensor(Tensor[] self, Tensor el) -> int",
     "aten::count.str(str[] self, str el) -> int")
def count(self, el):
    return sum(1 for x in self if elem_eq(x, el))


@cop("aten::index.list_int(int[] self, int el) -> int", "aten::index.list_float(float[] self, float el) -> int",
     "aten::index.list_bool(bool[] self, bool el) -> int", "aten::index.list_Tensor(Tensor[] self, Tensor el) -> int",
     "aten::index.list_str(str[] self, str el) -> int")
def index(self, el):
    for i, x in enumerate(self):
        if elem_eq(x, el):
            return i
    raise ValueError(f"'{el}' is not in list")


# ---- range helpers and warnings


@cop("aten::__range_length(int lo, int hi, int step) -> int")
def range_length(lo, hi, step):
    if step == 0:
        raise ValueError("range() arg 3 must not be zero")
    return len(range(lo, hi, step))


@cop("aten::__derive_index(int index, int start, int step) -> int")
def derive_index(index, start, step):
    return start + index * step


_WARNED: set = set()


@cop("aten::warn(str message, int stacklevel=2) -> ()")
def warn(message, stacklevel=2):
    """Print a warning to stderr, once per distinct message (Python's default filter)."""
    if message not in _WARNED:
        _WARNED.add(message)
        print(f"UserWarning: {message}", file=sys.stderr)
