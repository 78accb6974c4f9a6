"""TorchScript's string builtins: str()/format() with TorchScript's value printing, and the
str methods (split, strip, find, replace, ...) with TorchScript's quirks where they differ
from Python (negative `end` means "to the end + 1", zfill ignores signs, splitlines splits
"\\r\\n" twice)."""

from __future__ import annotations

import math

import numpy as np

from .dtypes import scalar_type_name
from .tensor import Tensor
from .containers import cop

_WHITESPACE = " \n\t\f\v"


def _chars(chars: str) -> str:
    # the registry keeps the schema default " \n\t\f\v" with its escapes unprocessed
    return _WHITESPACE if chars == r" \n\t\f\v" else chars


def format_float(v: float) -> str:
    """A double as TorchScript prints it: %.17g, with a '.' appended to integral values."""
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if v == 0:
        return "0."
    s = "%.17g" % v
    if v.is_integer() and abs(v) < 1e10:
        return f"{int(v)}."
    if all(c.isdigit() or c == "-" for c in s):
        s += "."
    return s


def format_tensor(a: np.ndarray) -> str:
    """An approximation of at::Tensor's `operator<<` (what str(tensor) gives in TorchScript)."""
    type_str = f"CPU{scalar_type_name(a.dtype)}Type"
    sizes = ",".join(str(s) for s in a.shape)
    flat = a.reshape(-1)
    if a.dtype == np.bool_:
        cells = ["1" if x else "0" for x in flat]
    elif a.dtype.kind in "iu" or (np.all(np.isfinite(flat)) and np.all(flat == np.round(flat))):
        cells = [str(int(x)) if np.isfinite(x) else str(x) for x in flat]
    else:
        cells = [f"{x:.4f}" for x in flat]
    width = max((len(c) for c in cells), default=0)
    cells = [c.rjust(width + 1) for c in cells]
    if a.ndim == 0:
        return f"{cells[0].strip()}\n[ {type_str}{{}} ]"
    if a.ndim == 1:
        body = "\n".join(cells)
    else:
        rows = np.array(cells, dtype=object).reshape(a.shape)
        blocks = []
        for idx in np.ndindex(a.shape[:-2]):
            lines = "\n".join("".join(r) for r in rows[idx])
            prefix = f"({','.join(str(i) for i in idx)},.,.) = \n" if a.ndim > 2 else ""
            blocks.append(prefix + lines)
        body = "\n\n".join(blocks)
    return f"{body}\n[ {type_str}{{{sizes}}} ]"


def to_str(v) -> str:
    """A value printed as TorchScript's `str()`/`format` do (strings inside containers are
    unquoted, floats like `1.`, tuples of one element like `(1,)`)."""
    if v is None:
        return "None"
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, float):
        return format_float(v)
    if isinstance(v, (int, str)):
        return str(v)
    if isinstance(v, Tensor):
        return format_tensor(v.data)
    if isinstance(v, np.ndarray):
        return format_tensor(v)
    if isinstance(v, list):
        return "[" + ", ".join(to_str(x) for x in v) + "]"
    if isinstance(v, tuple):
        return "(" + ", ".join(to_str(x) for x in v) + (",)" if len(v) == 1 else ")")
    if isinstance(v, dict):
        return "{" + ", ".join(f"{to_str(k)}: {to_str(x)}" for k, x in v.items()) + "}"
    return str(v)


@cop("aten::str(t elem) -> str")
def str_(elem):
    return to_str(elem)


@cop("aten::format(str self, ...) -> str")
def format_(self, *args):
    """Replaces each `{}` in order (no format specs, `{{` is not an escape), like TorchScript."""
    out, begin, used = [], 0, 0
    while True:
        loc = self.find("{}", begin)
        if loc < 0:
            out.append(self[begin:])
            return "".join(out)
        out.append(self[begin:loc])
        if used >= len(args):
            raise RuntimeError(f"Too few arguments for format string: {self}")
        out.append(to_str(args[used]))
        used += 1
        begin = loc + 2


@cop("aten::add.str(str a, str b) -> str")
def add_str(a, b):
    return a + b


@cop("aten::len.str(str s) -> int")
def len_str(s):
    return len(s)


@cop("aten::__getitem__.str(str s, int index) -> str")
def getitem_str(s, index):
    i = index + len(s) if index < 0 else index
    if not 0 <= i < len(s):
        raise IndexError("string index out of range")
    return s[i]


@cop("aten::slice.str(str string, int? start=None, int? end=None, int step=1) -> str")
def slice_str(string, start=None, end=None, step=1):
    if step == 0:
        raise ValueError("List slice should have non-zero step")
    return string[start:end:step]


@cop("aten::list(str t) -> str[]")
def list_str(t):
    return list(t)


@cop("aten::join(str self, str[] values) -> str")
def join(self, values):
    return self.join(values)


@cop("aten::split.str(str self, str? separator=None, int max=-1) -> str[]")
def split(self, separator=None, max=-1):
    if separator == "":
        raise ValueError("ValueError: empty separator")
    return self.split(separator, max)


@cop('aten::rsplit(str self, str separator=" ", int max=-1) -> str[]')
def rsplit(self, separator=" ", max=-1):
    if separator == "":
        raise ValueError("ValueError: empty separator")
    return self.rsplit(separator, max)


@cop('aten::strip(str self, str chars=" \\n\\t\\f\\v") -> str')
def strip(self, chars=_WHITESPACE):
    return self.strip(_chars(chars))


@cop('aten::lstrip(str self, str chars=" \\n\\t\\f\\v") -> str')
def lstrip(self, chars=_WHITESPACE):
    return self.lstrip(_chars(chars))


@cop('aten::rstrip(str self, str chars=" \\n\\t\\f\\v") -> str')
def rstrip(self, chars=_WHITESPACE):
    return self.rstrip(_chars(chars))


def _str_method(name):
    def impl(self):
        return getattr(self, name)()
    impl.__name__ = name
    return impl


for _name in ("lower", "upper", "swapcase", "title", "capitalize"):
    cop(f"aten::{_name}(str self) -> str")(_str_method(_name))

for _name in ("isdigit", "isalpha", "isspace", "isalnum", "islower", "isupper", "istitle",
              "isnumeric", "isdecimal", "isidentifier", "isprintable"):
    cop(f"aten::{_name}(str self) -> bool")(_str_method(_name))


def _span(s: str, start: int, end: int) -> tuple[str, int]:
    """The searched part of `s` and its offset: TorchScript clamps a negative start at 0 after
    adding len(s), and maps a negative end to len(s) + end + 1 (so -1 means the whole string)."""
    n = len(s)
    if start < 0:
        start = max(0, n + start)
    if end < 0:
        end = max(0, n + end + 1)
    return (s[start:end], start) if end > start else ("", start)


@cop("aten::find(str self, str substr, int start=0, int end=-1) -> int")
def find(self, substr, start=0, end=-1):
    part, off = _span(self, start, end)
    pos = part.find(substr) if len(part) >= len(substr) else -1
    return pos + off if pos >= 0 else -1


@cop("aten::rfind(str self, str substr, int start=0, int end=-1) -> int")
def rfind(self, substr, start=0, end=-1):
    part, off = _span(self, start, end)
    pos = part.rfind(substr) if len(part) >= len(substr) else -1
    return pos + off if pos >= 0 else -1


@cop("aten::index.str(str self, str substr, int start=0, int end=-1) -> int")
def index_str(self, substr, start=0, end=-1):
    pos = find(self, substr, start, end)
    if pos < 0:
        raise ValueError("substring not found")
    return pos


@cop("aten::rindex(str self, str substr, int start=0, int end=-1) -> int")
def rindex(self, substr, start=0, end=-1):
    pos = rfind(self, substr, start, end)
    if pos < 0:
        raise ValueError("substring not found")
    return pos


@cop("aten::count(str self, str substr, int start=0, int end=-1) -> int")
def count(self, substr, start=0, end=-1):
    return _span(self, start, end)[0].count(substr)


@cop("aten::startswith(str self, str substr, int start=0, int end=-1) -> bool")
def startswith(self, substr, start=0, end=-1):
    return _span(self, start, end)[0].startswith(substr)


@cop("aten::endswith(str self, str substr, int start=0, int end=-1) -> bool")
def endswith(self, substr, start=0, end=-1):
    return _span(self, start, end)[0].endswith(substr)


@cop("aten::replace(str self, str old, str new, int max=-1) -> str")
def replace(self, old, new, max=-1):
    return self.replace(old, new, max)


@cop("aten::zfill(str self, int width) -> str")
def zfill(self, width):
    """Zeros on the left up to `width`; unlike Python, a sign is not kept in front."""
    return "0" * max(0, width - len(self)) + self


@cop('aten::center(str self, int width, str fillchar=" ") -> str')
def center(self, width, fillchar=" "):
    return self.center(width, fillchar)


@cop('aten::ljust(str self, int width, str fillchar=" ") -> str')
def ljust(self, width, fillchar=" "):
    return self.ljust(width, fillchar)


@cop('aten::rjust(str self, int width, str fillchar=" ") -> str')
def rjust(self, width, fillchar=" "):
    return self.rjust(width, fillchar)


@cop("aten::expandtabs(str self, int tabsize=8) -> str")
def expandtabs(self, tabsize=8):
    return self.expandtabs(tabsize)


@cop("aten::partition(str self, str separator) -> (str, str, str)")
def partition(self, separator):
    return self.partition(separator)


@cop("aten::rpartition(str self, str separator) -> (str, str, str)")
def rpartition(self, separator):
    return self.rpartition(separator)


_LINE_BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"


@cop("aten::splitlines(str self, bool keepends=False) -> str[]")
def splitlines(self, keepends=False):
    """Every line-break character ends a line ("\\r\\n" gives an empty line), and with
    `keepends` the break is its own element, as in TorchScript."""
    out, prev = [], 0
    for pos, ch in enumerate(self):
        if ch in _LINE_BREAKS:
            out.append(self[prev:pos])
            if keepends:
                out.append(ch)
            prev = pos + 1
    if prev != len(self):
        out.append(self[prev:])
    return out


@cop("aten::ord(str string) -> int")
def ord_(string):
    if len(string) != 1:
        raise ValueError(f"String for ord() must be 1 character, found {len(string)}")
    return ord(string)


@cop("aten::chr(int i) -> str")
def chr_(i):
    if not 0 <= i < 0x110000:
        raise ValueError(f"chr() arg not in range(0x110000), found {i}")
    return chr(i)


for _name, _fn in (("hex", hex), ("oct", oct), ("bin", bin)):
    cop(f"aten::{_name}(int i) -> str")(lambda i, _fn=_fn: _fn(i))
