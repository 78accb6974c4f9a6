"""Calling registered ops on run-time values, recording them on a tape, and reverse-mode
differentiation of that tape.

Derivative formulas are written once, against an emitter (see `registry.derivative`); here
`EagerEmitter` evaluates them on numpy arrays. Like PyTorch, a tensor saved for backward
that an in-place op changes afterwards makes `backward` fail rather than give wrong grads.
"""

from __future__ import annotations

import functools
import itertools
import threading
from typing import Any, Callable, Optional, Sequence

import numpy as np

from irjit.ops.errors import IRRuntimeError

from irjit.ops.dtypes import is_floating
from irjit.ops.eager_emitter import EAGER
from irjit.ops.evaluate import unwrap as as_array
from irjit.ops.registry import OpEntry, find_op
from irjit.ops.tensor import Tensor

class _GradMode(threading.local):
    enabled = True  # (a class attribute: every thread starts with grad mode on)


_state = _GradMode()
GRAD_MODE = _state  # hot paths switch `GRAD_MODE.enabled` in a try/finally (a `with` costs 3 calls)


def is_grad_enabled() -> bool:
    return _state.enabled


class set_grad_enabled:
    """Context manager switching gradient recording on or off for this thread; also a
    decorator (`@irjit.no_grad()`), as torch's."""

    def __init__(self, enabled: bool):
        self.enabled = enabled

    def __call__(self, fn):
        enabled = self.enabled

        @functools.wraps(fn)
        def with_grad_mode(*args, **kwargs):
            with set_grad_enabled(enabled):
                return fn(*args, **kwargs)
        return with_grad_mode

    def __enter__(self):
        self.prev = is_grad_enabled()
        _state.enabled = self.enabled

    def __exit__(self, *exc):
        _state.enabled = self.prev


def no_grad() -> set_grad_enabled:
    return set_grad_enabled(False)


class GradNode:
    """One recorded op: what its formula needs (inputs, outputs) and where grads flow next."""

    __slots__ = ("entry", "inputs", "outputs", "edges", "versions", "n_outputs", "label")

    def __init__(self, entry: OpEntry, inputs: list, outputs: list, edges: list, label: str = "",
                 versions: Optional[list] = None):
        """`versions`: the (tensor, version) pairs backward checks; by default the edges'."""
        self.entry = entry
        self.inputs = inputs
        self.outputs = outputs
        self.edges = edges
        self.n_outputs = len(outputs)
        if versions is None:
            versions = []
            for e in edges:  # (None, a Tensor, or a list of them)
                if type(e) is list:
                    versions += [(t, t._version[0]) for t in e if isinstance(t, Tensor)]
                elif e is not None:
                    versions.append((e, e._version[0]))
        self.versions = versions
        self.label = label

    def __repr__(self) -> str:
        return f"<GradNode {self.entry.schema.full_name}>"


# The tracer of `irjit.jit.trace` while a function is being traced (records every op), else None.
TRACER: list = [None]


# ---- values crossing the op boundary

_NOT_TENSOR, _TENSOR, _TENSOR_LIST = 0, 1, 2
_SINGLE_RETURNS = {"Tensor": _TENSOR, "Tensor?": _TENSOR, "Tensor[]": _TENSOR_LIST, "Tensor?[]": _TENSOR_LIST}


class _CallPlan:
    """What `call_op` needs of an entry's schema, computed once per entry: defaults, which
    arguments are tensors (to unwrap, to record edges for), how to wrap the returns."""

    __slots__ = ("variadic", "n_params", "defaults", "kinds", "unwrap", "grad_positions",
                 "differentiable", "inplace", "view", "returns", "container")

    def __init__(self, entry: OpEntry):
        schema = entry.schema
        params = schema.arguments
        self.variadic = schema.variadic
        self.n_params = len(params)
        self.defaults = tuple(a.default for a in params)
        self.kinds = tuple(_TENSOR if a.is_tensor else _TENSOR_LIST if a.is_tensor_list else _NOT_TENSOR
                           for a in params)
        self.unwrap = tuple(k != _NOT_TENSOR and not keep for k, keep in zip(self.kinds, schema.identity_args))
        self.grad_positions = tuple(i for i, k in enumerate(self.kinds) if k != _NOT_TENSOR)
        self.differentiable = entry.derivative is not None
        self.inplace, self.view = schema.is_inplace, schema.is_view
        rets = schema.returns
        self.container = len(rets) == 1 and bool(rets[0].alias) and rets[0].alias.endswith("!")
        self.returns = tuple(_SINGLE_RETURNS.get(r.type, _NOT_TENSOR) for r in rets)


def _call_plan(entry: OpEntry) -> _CallPlan:
    plan = entry.extras.get("call_plan")
    if plan is None:
        plan = entry.extras["call_plan"] = _CallPlan(entry)
    return plan


def _wrapped(v: Any, kind: int) -> Any:
    """A returned value as a run-time value: arrays as Tensors, numpy scalars as numbers."""
    if kind == _TENSOR:
        if v is None:
            return None
        return v if isinstance(v, Tensor) else Tensor(np.asarray(v))
    if kind == _TENSOR_LIST:
        return [x if isinstance(x, Tensor) or x is None else Tensor(np.asarray(x)) for x in v]
    if isinstance(v, np.generic):
        return v.item()
    return v


def _requires_grad(plan: _CallPlan, args: list) -> bool:
    """Whether a tensor argument (or a tensor in a list argument) requires grad."""
    kinds = plan.kinds
    for i in plan.grad_positions:
        v = args[i]
        if isinstance(v, Tensor):
            if v.requires_grad:
                return True
        elif kinds[i] == _TENSOR_LIST and isinstance(v, list):
            if any(isinstance(t, Tensor) and t.requires_grad for t in v):
                return True
    return False


def call_op(entry: OpEntry, args: list, label: str = "") -> Any:
    """Run `entry` on run-time values (Tensors, Python values), recording it for autograd
    when grad mode is on and a floating-point tensor input requires grad."""
    if TRACER[0] is not None:
        return TRACER[0].record_op(entry, args, label)
    plan = entry.extras.get("call_plan") or _call_plan(entry)
    if plan.variadic:
        return entry.impl(*args)
    if len(args) < plan.n_params:  # omitted trailing arguments take their defaults
        args = list(args) + list(plan.defaults[len(args):])
    raw = [as_array(v) if u else v for u, v in zip(plan.unwrap, args)]
    record = plan.differentiable and is_grad_enabled() and _requires_grad(plan, args)
    if plan.inplace:
        return _call_inplace(entry, args, raw, record, label)
    out = entry.impl(*raw)
    returns = plan.returns
    if not returns:
        return None
    if plan.container:
        return out  # returns the (mutated) container it was given
    if len(returns) == 1:
        result = _wrapped(out, returns[0])
        outs = [result]
    else:
        outs = [_wrapped(o, k) for o, k in zip(out, returns)]
        result = tuple(outs)
    if plan.view and isinstance(args[0], Tensor):
        for r in (result if isinstance(result, list) else [result]):
            if isinstance(r, Tensor) and r is not args[0] and np.shares_memory(r.data, args[0].data):
                r._version = args[0]._version
                r._base = args[0]._base if args[0]._base is not None else args[0]
    if record:
        _record(entry, plan, raw, args, outs, label)
    return result


def _flat_outputs(outs: list) -> list:
    flat = []
    for o in outs:
        if isinstance(o, list):
            flat.extend(o)
        else:
            flat.append(o)
    return flat


def _record(entry: OpEntry, plan: _CallPlan, raw: list, args: list, outs: list, label: str) -> None:
    edges = []
    for kind, v in zip(plan.kinds, args):
        if kind == _TENSOR and isinstance(v, Tensor):
            edges.append(v)
        elif kind == _TENSOR_LIST and isinstance(v, list):
            edges.append(list(v))
        else:
            edges.append(None)
    flat = _flat_outputs(outs)
    raw_outs = [o.data if isinstance(o, Tensor) else o for o in flat]
    node = GradNode(entry, raw, raw_outs, edges, label)
    for i, o in enumerate(flat):
        if isinstance(o, Tensor) and is_floating(o.dtype):
            o.requires_grad = True
            o.grad_fn = (node, i)


def _snapshot(t: Tensor) -> Optional[Tensor]:
    """A stand-in for `t` as it is now (its current grad_fn), for edges recorded before an
    in-place op rewrites `t`'s history."""
    if not t.requires_grad:
        return None
    if t.grad_fn is None:
        return t  # a leaf: gradients accumulate into the tensor itself
    # its own version box: the in-place node saved a copy of the data it needs
    return Tensor(t.data, True, t.grad_fn, [t.version])


def _other_edges(entry: OpEntry, args: list) -> list:
    return [None] + [v if isinstance(v, Tensor) else
                     (list(v) if isinstance(v, list) and entry.schema.arguments[i].is_tensor_list else None)
                     for i, v in enumerate(args) if i > 0]


def _call_inplace(entry, args, raw, record, label):
    target: Tensor = args[0]
    if record and target.requires_grad and target.grad_fn is None and target._base is None:
        raise IRRuntimeError("a leaf tensor that requires grad is used in an in-place operation "
                             f"({entry.schema.name})")
    if not record:
        out = entry.impl(*raw)
        if out is not target.data and out is not None:
            target.data[...] = out
        target.bump_version()
        return target
    old = target.data.copy()  # the formula needs the value from before the write
    out = entry.impl(*([target.data] + raw[1:]))
    if out is not target.data:
        target.data[...] = out
    saved = [old] + raw[1:]
    edges = _other_edges(entry, args)
    base = target._base
    positions = _view_positions(base, target) if base is not None else None
    if positions is None:
        edges[0] = _snapshot(target)
        node = GradNode(entry, saved, [target.data.copy()], edges, label)
        target.grad_fn = (node, 0)
    else:
        _rebase_view_history(entry, target, base, positions, saved, edges, label)
    target.bump_version()
    target.requires_grad = True
    return target


def _view_positions(base: Tensor, view: Tensor) -> Optional[np.ndarray]:
    """Flat indices into `base` of each element of `view` (None if the layout is not simple)."""
    b, v = base.data, view.data
    if not b.flags.c_contiguous or b.itemsize != v.itemsize or b.dtype != v.dtype:
        return None
    start = (v.__array_interface__["data"][0] - b.__array_interface__["data"][0])
    if start % b.itemsize or any(st % b.itemsize for st in v.strides):
        return None
    idx = np.full(v.shape, start // b.itemsize, dtype=np.int64)
    for axis, (n, st) in enumerate(zip(v.shape, v.strides)):
        shape = [1] * v.ndim
        shape[axis] = n
        idx = idx + (np.arange(n, dtype=np.int64) * (st // b.itemsize)).reshape(shape)
    if idx.size and (idx.min() < 0 or idx.max() >= b.size):
        return None
    return idx


class _ViewEntry:
    """Tape entries for in-place ops on views (PyTorch's CopySlices and the regenerated view
    function): their `derivative` routes gradients between a view and its base."""

    class schema:  # noqa: N801 - duck-types Schema for error messages
        name = "CopySlices"
        full_name = name

    def __init__(self, derivative):
        self.derivative = derivative


def _rebase_view_history(entry, target, base, positions, saved, edges, label) -> None:
    """An in-place op wrote into a view: the base's history becomes CopySlices(old base,
    op), and the view's becomes a view of the new base."""
    view_shape = target.shape
    new_view_value = target.data.copy()

    def copy_slices(e, grads, inputs, outputs):
        g_base = np.asarray(grads[0])
        g_view = g_base.reshape(-1)[positions].reshape(view_shape)
        op_grads = entry.derivative(EAGER, [g_view], saved, [new_view_value])
        g_old = np.array(g_base, copy=True)
        g_old.reshape(-1)[positions] = 0 if op_grads[0] is None else np.asarray(op_grads[0])
        return [g_old] + list(op_grads[1:])

    node = GradNode(_ViewEntry(copy_slices), [], [base.data], [_snapshot(base)] + edges[1:],
                    f"{label} (in-place on a view)")
    base.grad_fn = (node, 0)
    base.requires_grad = True
    base_now = _snapshot(base)

    def view_of_base(e, grads, inputs, outputs):
        g = np.zeros(base.shape, dtype=np.asarray(grads[0]).dtype)
        np.add.at(g.reshape(-1), positions.reshape(-1), np.asarray(grads[0]).reshape(-1))
        return [g]

    target.grad_fn = (GradNode(_ViewEntry(view_of_base), [], [target.data], [base_now], label), 0)


def run_op(kind: str, *args: Any) -> Any:
    """Resolve and call an op by kind (`aten::add`), as the interpreter does."""
    return call_op(find_op(kind, list(args)), list(args))




_ndarray, _asarray = np.ndarray, np.asarray  # (globals: cheaper than module attributes)
_ONES: dict[tuple, np.ndarray] = {}  # (shape, dtype, value) -> a read-only array to copy
# Seeds larger than this are one element broadcast (every stride 0) where the tape's node reads
# a seed as it is: a materialized one costs a write and a read of the whole output.
BROADCAST_SEED_SIZE = 1 << 16


def shared_ones(a: np.ndarray, times: int = 1) -> np.ndarray:
    """Ones of `a`'s shape and dtype (summed `times` times: an output listed twice) that nobody
    may write: a cached read-only array (or a fresh one for a large shape). A gradient seed
    that is only read (numpy's `ones_like` costs ten times a copy for the small arrays of a
    training step)."""
    key = (a.shape, a.dtype, times)
    one = _ONES.get(key)
    if one is None:
        if a.size > BROADCAST_SEED_SIZE or len(_ONES) >= 256:
            return np.full(a.shape, times, a.dtype)
        one = np.full(a.shape, times, a.dtype)
        one.flags.writeable = False
        _ONES[key] = one
    return one


_SCALAR_ONES: dict = {}  # (dtype, value) -> a read-only 0-dim one


def broadcast_ones(a: np.ndarray, times: int = 1) -> np.ndarray:
    """Ones of `a`'s shape and dtype (summed `times` times) as a read-only broadcast of one
    element (every stride 0): the gradient seed of a large output for a formula that reads it
    as it is (a native `df` specialized for that layout reads one element instead of a
    materialized array)."""
    key = (a.dtype, times)
    one = _SCALAR_ONES.get(key)
    if one is None:
        one = np.full((), times, a.dtype)
        one.flags.writeable = False
        _SCALAR_ONES[key] = one
    return np.broadcast_to(one, a.shape)


def is_broadcast(g: np.ndarray) -> bool:
    """Whether `g` is one element broadcast to its shape (every stride 0, at least one dim)."""
    return g.ndim > 0 and not any(g.strides)


def vjp_array(g) -> np.ndarray:
    """A vjp as `df` takes it: row-major, or a broadcast of one element (a seed of ones), so
    its specialization (keyed by its inputs' layouts) does not depend on how the gradient was
    computed upstream: one dense layout per shape, and the seed's."""
    g = np.asarray(g)
    if g.flags.c_contiguous or (g.ndim > 0 and not any(g.strides)):
        return g
    return np.ascontiguousarray(g)  # (it makes 0-dim arrays 1-dim)


def fixed_vjps(grads: list, positions) -> Optional[list]:
    """The vjps a `df` takes of the outputs at `positions` for output gradients that are the
    same every call (a sums plan's seeds), made once: `vjp_array` of each; None when one is
    missing (its zeros would follow the output's shape)."""
    vjps = []
    for i in positions:
        g = grads[i] if i < len(grads) else None
        if g is None:
            return None
        vjps.append(vjp_array(g))
    return vjps


def ones_like(a: np.ndarray) -> np.ndarray:
    """A fresh array of ones of `a`'s shape and dtype, copied from a cached one."""
    one = shared_ones(a)
    return one if one.flags.writeable else one.copy()


class WindowEntry:
    """A tape entry for views of one tensor (its only edge): `add_into(acc, grads)` adds the
    views' gradients into their windows of `acc` (C-contiguous, of the tensor's `shape` and
    `dtype`), in place; `derivative` returns that of zeros, as other entries' do."""

    __slots__ = ()
    shape: tuple
    dtype: np.dtype

    def add_into(self, acc: np.ndarray, grads: list) -> None:
        raise NotImplementedError


class _Sums:
    """Gradient sums of one backward pass: the arrays a sum made belong to the pass, so later
    gradients are added to them in place (no array per addition); an array handed on to a
    derivative or delivered elsewhere may be shared, so it is never written."""

    __slots__ = ("owned",)

    def __init__(self):
        self.owned: dict[int, np.ndarray] = {}  # id -> array (held, so ids stay unique)

    def add(self, acc: Optional[np.ndarray], g: np.ndarray) -> np.ndarray:
        if acc is None:
            return g
        if self.owned.get(id(acc)) is acc and acc.shape == g.shape and acc.dtype == g.dtype:
            np.add(acc, g, out=acc)
            return acc
        total = acc + g
        if isinstance(total, np.ndarray):
            self.owned[id(total)] = total
        return total

    def add_windows(self, acc: Optional[np.ndarray], entry, grads: list) -> np.ndarray:
        """`acc` plus a view's backward (`entry.add_into` adds each gradient into its window of
        a C-contiguous array of the base's shape and dtype): into `acc` itself when the pass
        made it, else into a copy of it or zeros that the pass owns from then on."""
        if acc is not None and (acc.shape != entry.shape or acc.dtype != entry.dtype):
            return self.add(acc, entry.derivative(EAGER, grads, [], [])[0])
        if acc is None or self.owned.get(id(acc)) is not acc or not acc.flags.c_contiguous:
            acc = np.zeros(entry.shape, entry.dtype) if acc is None else np.array(acc, order="C")
            self.owned[id(acc)] = acc
        entry.add_into(acc, grads)
        return acc

    def release(self, arrays: list) -> None:
        for a in arrays:
            if a is not None:
                self.owned.pop(id(a), None)


def backward(roots: Sequence[Tensor], grad_outputs: Optional[Sequence[Optional[np.ndarray]]] = None,
             inputs: Optional[Sequence[Tensor]] = None) -> Optional[list[Optional[np.ndarray]]]:
    """Reverse-mode differentiation from `roots` (`grad_outputs` None: of the sum of their
    elements' sums, seeds of ones). With `inputs`, return d(roots)/d(inputs) (None where
    unconnected) instead of accumulating into leaves' `.grad`; a one-node tape takes a shorter
    path (`_backward_one_node`). Formulas run on arrays, which record nothing; the general walk
    runs with grad mode off besides."""
    if inputs is not None:
        got = _backward_one_node(roots, grad_outputs, inputs)
        if got is not None:
            return got
    enabled = _state.enabled
    if not enabled:
        return _walk(roots, grad_outputs, inputs)
    _state.enabled = False
    try:
        return _walk(roots, grad_outputs, inputs)
    finally:
        _state.enabled = True


def _walk(roots: Sequence[Tensor], grad_outputs: Optional[Sequence[Optional[np.ndarray]]],
          inputs: Optional[Sequence[Tensor]]) -> Optional[list[Optional[np.ndarray]]]:
    """`backward`'s general walk of the tape reachable from `roots` (grad mode off)."""
    roots = list(roots)
    if grad_outputs is None:
        grad_outputs = [ones_like(r.data) for r in roots]
    want = {id(t): i for i, t in enumerate(inputs)} if inputs is not None else None
    result: list[Optional[np.ndarray]] = [None] * (len(inputs) if inputs is not None else 0)
    sums = _Sums()
    pending: dict[int, list] = {}

    def deliver(t: Tensor, g: np.ndarray) -> None:
        grad_fn = t.grad_fn
        if want is not None:
            i = want.get(id(t))
            if i is not None:
                acc = result[i]
                result[i] = g if acc is None else sums.add(acc, g)
                if grad_fn is None:
                    return
        if grad_fn is not None:
            node, idx = grad_fn
            slots = pending.get(id(node))
            if slots is None:
                slots = pending[id(node)] = [None] * node.n_outputs
            acc = slots[idx]
            slots[idx] = g if acc is None else sums.add(acc, g)
        elif t.requires_grad and want is None:
            g = np.asarray(g, dtype=t.dtype)
            t.grad = Tensor(g.copy() if t.grad is None else t.grad.data + g)

    def deliver_windows(t: Tensor, entry, grads: list) -> None:
        """What `deliver` does with the dense gradient of a view's base, adding the view's
        gradients into their windows instead (see `_Sums.add_windows`)."""
        if want is not None:
            i = want.get(id(t))
            if i is not None:
                result[i] = sums.add_windows(result[i], entry, grads)
                if t.grad_fn is None:
                    return
        if t.grad_fn is not None:
            node, idx = t.grad_fn
            slots = pending.get(id(node))
            if slots is None:
                slots = pending[id(node)] = [None] * node.n_outputs
            slots[idx] = sums.add_windows(slots[idx], entry, grads)
        elif t.requires_grad and want is None:
            deliver(t, entry.derivative(EAGER, grads, [], [])[0])

    # the reachable part of the tape: each node's children (the nodes its edges' tensors come
    # from, once per edge) and how many edges lead to each node
    children: dict[int, list] = {}
    deps: dict[int, int] = {}
    nodes: list[GradNode] = []
    stack = [r.grad_fn[0] for r in roots if r.grad_fn is not None]
    while stack:
        node = stack.pop()
        if id(node) in children:
            continue
        nodes.append(node)
        kids = children[id(node)] = []
        for e in node.edges:  # (None, a Tensor, or a list of them)
            if e is None:
                continue
            if type(e) is list:
                kids += [t.grad_fn[0] for t in e if isinstance(t, Tensor) and t.grad_fn is not None]
            elif e.grad_fn is not None:
                kids.append(e.grad_fn[0])
        for child in kids:
            deps[id(child)] = deps.get(id(child), 0) + 1
            stack.append(child)

    for r, g in zip(roots, grad_outputs):
        if g is not None:
            deliver(r, np.asarray(g))
    ready = [n for n in nodes if id(n) not in deps]
    owned = sums.owned
    while ready:
        node = ready.pop()
        grads = pending.pop(id(node), None)
        if grads is not None and (grads[0] is not None if len(grads) == 1 else
                                  any(g is not None for g in grads)):
            if owned:  # (the sums handed on are no longer the pass's to write)
                for g in grads:
                    if g is not None:
                        owned.pop(id(g), None)
            for t, v in node.versions:
                if t._version[0] != v:
                    check_versions(node)  # (raises, naming the node)
            entry = node.entry
            if isinstance(entry, WindowEntry):  # a view's: into the base's gradient in place
                base = node.edges[0]
                if base is not None and base.requires_grad:
                    deliver_windows(base, entry, grads)
                in_grads = ()
            else:
                in_grads = entry.derivative(EAGER, grads, node.inputs, node.outputs)
            for e, g in zip(node.edges, in_grads):
                if e is None or g is None:
                    continue
                if e.__class__ is list:
                    for t, gi in zip(e, g):
                        if isinstance(t, Tensor) and gi is not None and t.requires_grad:
                            deliver(t, np.asarray(gi, dtype=t.dtype))
                elif e.requires_grad:
                    dtype = e.data.dtype
                    if g.__class__ is not np.ndarray or (g.dtype is not dtype and g.dtype != dtype):
                        g = np.asarray(g, dtype)
                    deliver(e, g)
        for child in children[id(node)]:
            left = deps[id(child)] = deps[id(child)] - 1
            if left == 0:
                ready.append(child)
    return result if inputs is not None else None


def check_versions(node: GradNode) -> None:
    """The tensors `node`'s formula reads are as they were recorded (no in-place write since)."""
    for t, v in node.versions:
        if t._version[0] != v:
            raise IRRuntimeError(
                f"a tensor needed to differentiate {node.entry.schema.name}"
                f"{' at ' + node.label if node.label else ''} was modified by an "
                "in-place operation afterwards")


def node_gradients(node: GradNode, grads: list) -> list:
    """`node`'s formula on its outputs' gradients, after checking that nothing it reads was
    written in place since it was recorded."""
    for t, v in node.versions:
        if t._version[0] != v:
            check_versions(node)  # (raises, naming the node)
    return node.entry.derivative(EAGER, grads, node.inputs, node.outputs)


def _backward_one_node(roots: Sequence[Tensor], grad_outputs: Optional[Sequence],
                       inputs: Sequence) -> Optional[list[Optional[np.ndarray]]]:
    """`backward(roots, grad_outputs, inputs)` of a one-node tape (its roots all come from one
    node whose edges are leaves or None: what a graph run as one DifferentiableGraph or native
    group records): what the general walk computes, without its bookkeeping (a training step
    of a small graph pays for it more than for its kernels); None for another tape (then the
    walk). Without `grad_outputs` the seeds are shared read-only ones, one per output however
    often it is listed (`times`), and one element broadcast for a large output when the
    node's entry reads a seed as it is (`takes_broadcast_seed`: a native `df` specialized for
    the stride-0 layout); then a gradient that is not writeable (a seed, or what the formula
    passed through) is copied out."""
    node = None
    for r in roots:
        grad_fn = r.grad_fn
        if grad_fn is None or (node is not None and grad_fn[0] is not node):
            return None
        node = grad_fn[0]
    if node is None or isinstance(node.entry, WindowEntry):
        return None
    n = len(inputs)
    last = n - 1
    slots = []  # per edge, the input it is (None: none, one that does not require grad or
    found = 0  # is no input; a tensor given twice is at its last position, as the walk's
    for e in node.edges:  # `want` says); `found`: a bit per input that is an edge
        if e is None:
            slots.append(None)
        elif type(e) is list or e.grad_fn is not None:
            return None
        elif not e.requires_grad:
            slots.append(None)
        else:
            i = last
            while i >= 0 and inputs[i] is not e:
                i -= 1
            if i >= 0:
                slots.append(i)
                found |= 1 << i
            else:
                slots.append(None)
    # (when every input is an edge, a leaf, none is a root: roots come from the node)
    roots_are_inputs = found != (1 << n) - 1
    result: list[Optional[np.ndarray]] = [None] * n
    seeded = given = grad_outputs is None
    if seeded:
        grads = _seeds(node, roots)
        if roots_are_inputs:  # (a root asked for as an input: ones per listing)
            for r in roots:
                i = _position(inputs, r)
                if i is not None:
                    one = shared_ones(r.data)
                    result[i] = one.copy() if result[i] is None else result[i] + one
    else:
        grads = [None] * node.n_outputs
        for r, g in zip(roots, grad_outputs):
            if g is None:
                continue
            if g.__class__ is not _ndarray:
                g = _asarray(g)
            i = _position(inputs, r) if roots_are_inputs else None
            if i is not None:  # (a root asked for as an input: its gradient is the one given)
                result[i] = g if result[i] is None else result[i] + g
            idx = r.grad_fn[1]
            grads[idx] = g if grads[idx] is None else grads[idx] + g
            given = True
    if given:
        for e, i, g in zip(node.edges, slots, node_gradients(node, grads)):
            if i is None or g is None:
                continue
            dtype = e.data.dtype
            if g.__class__ is not _ndarray or (g.dtype is not dtype and g.dtype != dtype):
                g = _asarray(g, dtype)
            if result[i] is not None:
                result[i] = result[i] + g
            else:
                result[i] = g.copy() if seeded and not g.flags.writeable else g
    return result


def backward_of_sums(roots: Sequence[Tensor], inputs: Sequence[Tensor]) -> Optional[list]:
    """`backward(roots, None, inputs)` for the tape a training call of one DifferentiableGraph
    or native group records, when `inputs` are distinct tensors (a call's own): the roots all
    come from one node whose edges are the inputs, each a leaf requiring grad. Its entry keeps,
    per pattern of roots, a generated function (`_sums_plan`) holding the seeds (read-only
    ones, see `_seeds`) and the input each edge is: it checks them by identity, the versions
    as the walk does, and runs the formula once. None for any other tape (then `backward`,
    which gives the same gradients)."""
    if len(roots) == 1:
        grad_fn = roots[0].grad_fn
        if grad_fn is None:
            return None
        node, key = grad_fn
    else:
        node, key = None, []
        for r in roots:
            grad_fn = r.grad_fn
            if grad_fn is None or (node is not None and grad_fn[0] is not node):
                return None
            node = grad_fn[0]
            key.append(grad_fn[1])
        if node is None:
            return None
        key = tuple(key)
    cache = getattr(node.entry, "one_node", None)
    if cache is None or len(node.edges) != len(inputs):
        return None
    plan = cache.get(key)
    if plan is not None:
        got = plan(node, inputs)
        if got is not None:
            return got
    found = _edge_positions(node.edges, inputs)  # (made for these inputs and layouts)
    if found is None:
        return None
    seeds = _seeds(node, roots)
    plan = _sums_plan(node, found, seeds)
    if len(cache) < 16 and all(g is None or not g.flags.writeable for g in seeds):
        cache[key] = plan
    return plan(node, inputs)


def outputs_sums_plan(outs: Sequence, roots: Sequence[Tensor], names: Sequence[str]) -> Optional[Callable]:
    """`plan(outs, inputs)`: the gradients `backward_of_sums(roots, inputs)` gives, by the
    inputs' `names` (zeros where one is missing), where the roots are found in a call's
    outputs `outs` as they were in these (each output a Tensor, or a tuple of them, every one
    a root, as `Function.backward` takes its floating-point tensors requiring grad), for the
    tape `backward_of_sums` just ran a plan of: the structure, each root and its node checked
    (None when they differ), then that node's plan, inlined. None when `outs` is not of that
    form or no such plan is kept."""
    node = roots[0].grad_fn[0] if roots and roots[0].grad_fn is not None else None
    cache = getattr(node.entry, "one_node", None) if node is not None else None
    if cache is None:
        return None
    key = roots[0].grad_fn[1] if len(roots) == 1 else tuple(r.grad_fn[1] for r in roots)
    sums = cache.get(key)
    if sums is None or len(sums.found) != len(names):
        return None
    lines = ["def plan(outs, inputs):",
             f"    if outs.__class__ is not list or len(outs) != {len(outs)}:",
             "        return None"]
    leaves: list[str] = []
    for k, o in enumerate(outs):
        if o.__class__ is Tensor:
            leaves.append(f"t{len(leaves)}")
            lines.append(f"    {leaves[-1]} = outs[{k}]")
        elif o.__class__ is tuple and o and all(e.__class__ is Tensor for e in o):
            held = [f"t{len(leaves) + j}" for j in range(len(o))]
            leaves += held
            lines += [f"    o{k} = outs[{k}]",
                      f"    if o{k}.__class__ is not tuple or len(o{k}) != {len(o)}:",
                      "        return None",
                      f"    {''.join(x + ', ' for x in held)}= o{k}"]
        else:
            return None
    if len(leaves) != len(roots):  # (a leaf that is no root: the general path)
        return None
    first = {}  # (a root listed again, the same Tensor in these outputs: checked once, when
    for i, r in enumerate(roots):  # it is that Tensor again)
        first.setdefault(id(r), i)
    checked = []
    for i, t in enumerate(leaves):
        k = first[id(roots[i])]
        if k != i:
            lines += [f"    if {t} is not t{k}:", "        return None"]
            continue
        checked.append(i)
        lines += [f"    if {t}.__class__ is not Tensor or not {t}.requires_grad or "
                  f"{t}.data.dtype.kind != 'f':",
                  "        return None",
                  f"    f{i} = {t}.grad_fn"]
    index = [r.grad_fn[1] for r in roots]
    lines += [f"    if {' or '.join(f'f{i} is None' for i in checked)}:",
              "        return None",
              "    node = f0[0]",
              f"    if node.entry is not ENTRY or "
              f"{' or '.join(f'f{i}[0] is not node or f{i}[1] != {index[i]}' for i in checked)}:",
              "        return None"]
    namespace = {"Tensor": Tensor, "ENTRY": node.entry}
    body, grads = _sums_lines(node, sums.found, sums.seeds, namespace, zeros=True)
    lines += body + [f"    return {{{', '.join(f'{n!r}: {g}' for n, g in zip(names, grads))}}}"]
    exec(compile("\n".join(lines) + "\n", "<outputs sums backward>", "exec"), namespace)  # noqa: S102
    plan = namespace["plan"]
    plan.source = "\n".join(lines)
    return plan


def _sums_plan(node: GradNode, found: tuple[int, ...], seeds: list):
    """`backward_of_sums`' work for a node like `node` (its entry, its outputs' layouts) whose
    edge k is input `found[k]`, as one generated function `plan(node, inputs)`: the edges
    checked by identity (None when one is not there, or is no leaf requiring grad, or an
    output's layout is not the seeds'), the versions checked, the formula run on `seeds`,
    each gradient of its edge's dtype and writeable (a seed passed through is copied)."""
    names: dict = {}
    lines, grads = _sums_lines(node, found, seeds, names, zeros=False)
    lines = ["def plan(node, inputs):", *lines, f"    return [{', '.join(grads)}]"]
    exec(compile("\n".join(lines) + "\n", "<sums backward>", "exec"), names)  # noqa: S102
    plan = names["plan"]
    plan.source = "\n".join(lines)
    plan.found, plan.seeds = found, seeds  # (what `outputs_sums_plan` inlines it from)
    return plan


def _sums_lines(node: GradNode, found: tuple[int, ...], seeds: list, names: dict,
                zeros: bool) -> tuple[list[str], list[str]]:
    """The body of `_sums_plan`'s function once `node` and `inputs` are bound (lines of a
    function's body; `return None` where it refuses), adding the globals it reads to
    `names`; and the variables holding the gradients, in the inputs' order. With `zeros`, a
    missing gradient is zeros of its input's layout (as `Function.backward` gives them)."""
    n = len(found)
    e = [f"e{k}" for k in range(n)]
    lines = [f"    {''.join(x + ', ' for x in e)}= node.edges"]
    names.update({"EAGER": EAGER, "SEEDS": seeds, "ndarray": _ndarray, "own_gradient": _own_gradient,
                  "check_versions": check_versions})
    inline = getattr(node.entry, "derivative_lines", None)  # (the formula for these seeds)
    count = itertools.count()
    inline = inline(seeds, "node.inputs", "got", lambda prefix, obj: _named(names, prefix, obj),
                    lambda prefix: f"{prefix}_{next(count)}") if inline is not None else None
    tests = [f"inputs[{i}] is not e{k}" for k, i in enumerate(found)]
    for j, g in enumerate(seeds):
        if g is not None:
            names[f"Z{j}"], names[f"D{j}"] = g.shape, g.dtype
            tests.append(f"outs[{j}].shape != Z{j} or outs[{j}].dtype is not D{j}")
    lines.append("    outs = node.outputs")
    lines.append(f"    if {' or '.join(tests)}:")
    lines.append("        return None")
    leaves = " or ".join(f"e{k}.grad_fn is not None or not e{k}.requires_grad" for k in range(n))
    lines += [f"    if {leaves}:",
              "        return None",
              "    for t, v in node.versions:",
              "        if t._version[0] != v:",
              "            check_versions(node)  # (raises, naming the node)",
              *(["    got = node.entry.derivative(EAGER, SEEDS, node.inputs, outs)"] if inline is None
                else ["    " + line for line in inline]),
              f"    if len(got) != {n}:",
              "        return None",
              f"    {''.join(f'g{k}, ' for k in range(n))}= got"]
    for k in range(n):  # (each an array of its edge's dtype that the caller may write)
        missing = "" if zeros else f"g{k} is not None and "  # (None: `own_gradient` makes zeros)
        lines += [f"    if {missing}(g{k}.__class__ is not ndarray or "
                  f"g{k}.dtype is not e{k}.data.dtype or not g{k}.flags.writeable):",
                  f"        g{k} = own_gradient(g{k}, e{k}.data.dtype{', e' + str(k) + '.data' if zeros else ''})"]
    at = {i: k for k, i in enumerate(found)}
    return lines, [f"g{at[i]}" for i in range(n)]


def _named(names: dict, prefix: str, obj: Any) -> str:
    """A new global name of a generated function for `obj`, entered in its `names`."""
    name = f"{prefix}_{len(names)}"
    names[name] = obj
    return name


def _own_gradient(g, dtype: np.dtype, like: Optional[np.ndarray] = None) -> np.ndarray:
    """Gradient `g` (an array, or a Tensor of one) as an array of `dtype` the caller may write
    (a copy of a read-only one); None as zeros of `like`'s layout, when given."""
    if g is None and like is not None:
        return np.zeros_like(like)
    if isinstance(g, Tensor):
        g = g.data
    if g.__class__ is not _ndarray or (g.dtype is not dtype and g.dtype != dtype):
        g = _asarray(g, dtype)
    return g if g.flags.writeable else g.copy()


def _edge_positions(edges: list, inputs: Sequence) -> Optional[tuple[int, ...]]:
    """The position of each edge among `inputs` when the edges are exactly the inputs (each
    once, a Tensor); None otherwise."""
    if len(edges) != len(inputs):
        return None
    positions = []
    for e in edges:
        if e is None or type(e) is list:
            return None
        i = _position(inputs, e)
        if i is None or i in positions:
            return None
        positions.append(i)
    return tuple(positions)


def _seeds(node: GradNode, roots: Sequence[Tensor]) -> list:
    """The seeds of ones of `node`'s outputs for `roots` (all `node`'s; an output listed k times
    gets one seed of k, one element broadcast for a large output when the entry reads a seed as
    it is: `takes_broadcast_seed`; read-only `shared_ones` otherwise)."""
    grads = [None] * node.n_outputs
    for r in roots:  # (how often each output is listed: one seed of that count)
        idx = r.grad_fn[1]
        g = grads[idx]
        grads[idx] = 1 if g is None else g + 1
    broadcast = getattr(node.entry, "takes_broadcast_seed", False)
    for idx, times in enumerate(grads):
        if times is not None:
            data = node.outputs[idx]
            grads[idx] = broadcast_ones(data, times) if broadcast and \
                data.size > BROADCAST_SEED_SIZE else shared_ones(data, times)
    return grads


def _position(tensors: Sequence, t: Tensor) -> Optional[int]:
    """The last position of `t` in `tensors` (a tensor given twice gets its gradient there, as
    the walk's `want` says), None when it is not there."""
    i = len(tensors) - 1
    while i >= 0 and tensors[i] is not t:
        i -= 1
    return i if i >= 0 else None
