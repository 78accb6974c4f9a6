"""What lowering rules are written against: the scalar emitter interface that code generation
passes in, and the exception a rule raises for arguments it cannot lower.

A rule is `f(e, *args) -> value`: tensor arguments arrive as emitter values (with `.dtype`),
constant arguments as Python values. The emitter `e` offers:
  arithmetic (PyTorch promotion, Python numbers accepted anywhere): add, sub, mul, div (true
  division), neg, maximum, minimum (NaN-propagating), abs, sign, sqrt, floor, ceil, trunc, round;
  comparisons returning bool: lt, le, gt, ge, eq, ne, isnan; logical_and/or/xor/not;
  where(cond, a, b); cast(x, dtype); to_float(x) (int and bool to the default float);
  call(name, x, ...) for the math library's functions (exp, log1p, tanh, erf, ...).
The result is cast to the node's output dtype by the caller.
"""

from __future__ import annotations


class NotLowerable(Exception):
    """A rule cannot lower these arguments natively; the node stays interpreted."""


class Comparisons:
    """The comparison methods of an emitter (lt, le, gt, ge, eq, ne), each its `_compare` by
    name: the tensor and the number emitters share them."""

    def _compare(self, name: str, x, y):
        raise NotImplementedError


for _name in ("lt", "le", "gt", "ge", "eq", "ne"):
    setattr(Comparisons, _name, lambda self, x, y, _name=_name: self._compare(_name, x, y))
