"""einsum (PyTorch's equation syntax, incl. `...` and implicit output) and tensordot, whose
gradients are einsums again: the gradient of an operand contracts the output gradient with
the other operands back to that operand's subscripts."""

from __future__ import annotations

import string

import numpy as np

from ._common import normalize_dim
from .registry import derivative, op


def parse_equation(equation: str, n_operands: int) -> tuple[list[str], str]:
    """(input subscripts, output subscripts) with the implicit output made explicit."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    subs = lhs.split(",")
    if len(subs) != n_operands:
        raise RuntimeError(f"einsum(): more operands were provided than specified in the equation"
                           if len(subs) < n_operands else
                           "einsum(): fewer operands were provided than specified in the equation")
    if not arrow:
        letters = "".join(s.replace("...", "") for s in subs)
        once = sorted(c for c in set(letters) if letters.count(c) == 1)
        rhs = ("..." if any("..." in s for s in subs) else "") + "".join(once)
    return subs, rhs


@op("aten::einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor")
def einsum(equation, tensors, path=None):
    subs, out = parse_equation(equation, len(tensors))
    for s, t in zip(subs, tensors):
        n = len(s.replace("...", ""))
        if ("..." in s and t.ndim < n) or ("..." not in s and t.ndim != n):
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({n}) does not match the "
                               f"number of dimensions ({t.ndim}) for operand {subs.index(s)}"
                               + ("" if "..." in s else " and no ellipsis was given"))
    return _einsum(subs, out, tensors)


def _einsum(subs, out, tensors):
    """np.einsum, also summing over `...` dims that the output drops (numpy refuses that)."""
    if "..." in out or not any("..." in s for s in subs):
        return np.asarray(np.einsum(",".join(subs) + "->" + out, *tensors))
    r = np.einsum(",".join(subs) + "->..." + out, *tensors)
    return np.asarray(r.sum(axis=tuple(range(r.ndim - len(out)))))


def _labels(sub: str, ndim: int) -> list[str]:
    """One label per dimension; the dims under `...` are labelled '.'."""
    if "..." not in sub:
        return list(sub)
    head, tail = sub.split("...")
    return list(head) + ["."] * (ndim - len(head) - len(tail)) + list(tail)


def einsum_backward(e, g, subs: list[str], out: str, tensors: list) -> list:
    """Gradient of each operand of einsum(subs -> out) given the output gradient g."""
    grads = []
    for i, (sub, t) in enumerate(zip(subs, tensors)):
        shape = e.shape(t)
        labels = _labels(sub, len(shape))
        letters = [c for c in labels if c != "."]
        if len(set(letters)) != len(letters):
            raise NotImplementedError(f"einsum gradient with a repeated subscript in {sub!r}")
        elsewhere = set(out) | {c for j, s in enumerate(subs) if j != i for c in s}
        if "..." in sub and "..." not in out:
            raise NotImplementedError(f"einsum gradient with an ellipsis summed out ({sub}->{out})")
        kept = "".join(c for c in sub if c in elsewhere or c == ".")
        others = [s for j, s in enumerate(subs) if j != i] + [out]
        operands = [x for j, x in enumerate(tensors) if j != i] + [g]
        gi = e.op("aten::einsum", ",".join(others) + "->" + kept, operands, None)
        exclusive = [k for k, c in enumerate(labels) if c != "." and c not in elsewhere]
        if exclusive:
            for k in exclusive:
                gi = e.op("aten::unsqueeze", gi, k)
            gi = e.op("aten::expand", gi, [-1 if k not in exclusive else s for k, s in enumerate(shape)])
        if e.shape(gi) != tuple(shape):
            gi = e.sum_to(gi, list(shape))
        grads.append(gi)
    return grads


@derivative("aten::einsum")
def einsum_grad(e, grads, inputs, outputs):
    equation, tensors, _ = inputs
    subs, out = parse_equation(equation, len(tensors))
    return [None, einsum_backward(e, grads[0], subs, out, tensors), None]


def tensordot_equation(ndim_a: int, ndim_b: int, dims_a, dims_b) -> tuple[list[str], str]:
    """The einsum form of tensordot over the paired dims."""
    if len(dims_a) != len(dims_b):
        raise RuntimeError(f"both dimension lists should have same length")
    letters = iter(string.ascii_letters)
    la = [next(letters) for _ in range(ndim_a)]
    lb = [next(letters) for _ in range(ndim_b)]
    da = [normalize_dim(d, ndim_a) for d in dims_a]
    db = [normalize_dim(d, ndim_b) for d in dims_b]
    for x, y in zip(da, db):
        lb[y] = la[x]
    out = [c for k, c in enumerate(la) if k not in da] + [c for k, c in enumerate(lb) if k not in db]
    return ["".join(la), "".join(lb)], "".join(out)


@op("aten::tensordot(Tensor self, Tensor other, int[] dims_self, int[] dims_other) -> Tensor")
def tensordot(self, other, dims_self, dims_other):
    tensordot_equation(self.ndim, other.ndim, dims_self, dims_other)
    for x, y in zip(dims_self, dims_other):
        sx, sy = self.shape[normalize_dim(x, self.ndim)], other.shape[normalize_dim(y, other.ndim)]
        if sx != sy:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {sx} in dim {x} and "
                               f"second has size {sy} in dim {y}")
    return np.asarray(np.tensordot(self, other, axes=(list(dims_self), list(dims_other))))


@derivative("aten::tensordot")
def tensordot_grad(e, grads, inputs, outputs):
    a, b, da, db = inputs
    subs, out = tensordot_equation(len(e.shape(a)), len(e.shape(b)), da, db)
    return einsum_backward(e, grads[0], subs, out, [a, b]) + [None, None]
