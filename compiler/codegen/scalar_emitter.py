"""The emitter that lowering rules are written against (see ops/lowering_common.py): it builds
kernel expressions with PyTorch's type promotion and broadcasting, reductions over the
kernel's inner axes, and views of input buffers as index arithmetic.

A value knows its sizes and, per dimension, the kernel axis it runs along (None for a
broadcast dimension of size 1); a `View` is a strided window of an input buffer that is
loaded only where a computation reads it, so views compose without copies."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Union

import numpy as np

from irjit.ops.dtypes import DEFAULT_FLOAT, result_type
from irjit.ops.lowering_common import Comparisons, NotLowerable

from .kernel import Access, ClampedAxis, Const, Expr, Load, Op, Position, Reduce
from .scalar_ops import BOOL, SUPPORTED_DTYPES, is_float, math_functions

# operand priority in promotion, as torch.result_type ranks them
DIMENSIONED, ZERO_DIM, NUMBER = 0, 1, 2


@dataclass(frozen=True)
class Val:
    """A value inside a kernel: its expression, dtype, promotion priority, sizes and the
    kernel axis of each dimension."""

    expr: Expr
    dtype: np.dtype
    priority: int = DIMENSIONED
    sizes: tuple = ()
    axes: tuple = ()


@dataclass(frozen=True)
class View:
    """A strided window of input buffer `buffer` (strides in elements)."""

    buffer: int
    dtype: np.dtype
    sizes: tuple
    strides: tuple
    offset: int = 0
    dynamic: tuple = ()  # (kernel.Index, stride) pairs: offsets known at run time

    @property
    def priority(self) -> int:
        return DIMENSIONED if self.sizes else ZERO_DIM


@dataclass(frozen=True)
class Space:
    """The kernel's iteration space: the full shape and the dims reduced over (inner axes)."""

    full: tuple
    reduce_dims: tuple = ()

    @property
    def kept(self) -> tuple:
        return tuple(d for d in range(len(self.full)) if d not in self.reduce_dims)

    def axis_of(self, dim: int) -> int:
        return (self.kept + self.reduce_dims).index(dim)

    def full_axes(self, sizes: tuple) -> tuple:
        """Axes of a value of `sizes` broadcast (right-aligned) against the full shape."""
        lead = len(self.full) - len(sizes)
        if lead < 0:
            raise NotLowerable("a value has more dimensions than the iteration space")
        axes = []
        for k, n in enumerate(sizes):
            d = lead + k
            if n == 1 and self.full[d] != 1:
                axes.append(None)
            elif n == self.full[d]:
                axes.append(self.axis_of(d) if n != 1 else None)
            else:
                raise NotLowerable("a value does not broadcast to the iteration space")
        return tuple(axes)


class NeedSpace(Exception):
    """Raised by the first reduction met when the space is not yet fixed."""

    def __init__(self, space: Space):
        super().__init__(space)
        self.space = space


def broadcast_axes(operands: list) -> tuple[tuple, tuple]:
    """(sizes, axes) of the broadcast of operands given as (sizes, axes) pairs."""
    rank = max((len(s) for s, _ in operands), default=0)
    sizes, axes = [1] * rank, [None] * rank
    for s, a in operands:
        lead = rank - len(s)
        for k, (n, ax) in enumerate(zip(s, a)):
            if n == 1:
                continue
            if sizes[lead + k] == 1:
                sizes[lead + k], axes[lead + k] = n, ax
            elif sizes[lead + k] != n or axes[lead + k] != ax:
                raise NotLowerable("operands do not broadcast along the same kernel axes")
    return tuple(sizes), tuple(axes)


Operand = Union[Val, View, bool, int, float]


def _sample(v: Val) -> Any:
    """A stand-in that `result_type` ranks like `v`."""
    if v.priority == NUMBER:
        return {"b": True, "i": 1, "f": 1.0}[v.dtype.kind]
    return np.empty((1,) if v.priority == DIMENSIONED else (), v.dtype)


class ExprEmitter(Comparisons):
    """Builds kernel expressions for lowering rules."""

    def __init__(self, space: Space = None):
        self._math = math_functions()
        self.space = space
        self.node_axes: Optional[tuple] = ()  # axes of the node being lowered's output
        self.node_sizes: tuple = ()
        self.node_dtype: np.dtype = DEFAULT_FLOAT
        self.products: list = []  # Product kernels that run before the loop nest
        self.allocate = None  # (dtype, sizes) -> index of a new scratch buffer

    def load(self, v: View, axes: tuple) -> Val:
        """Read view `v` with its dimensions along `axes` (None: broadcast, index 0)."""
        strides = [0] * (len(self.space.full) if self.space else 0)
        for n, st, ax in zip(v.sizes, v.strides, axes):
            if ax is not None and n != 1:
                strides[ax] = st
        access = Access(v.buffer, tuple(strides), v.offset, v.dynamic)
        return Val(Load(access, v.dtype), v.dtype, v.priority, v.sizes,
                   tuple(ax if n != 1 else None for n, ax in zip(v.sizes, axes)))

    def _view_axes(self, v: View) -> tuple:
        """The axes of a view read by the current node: right-aligned to its output."""
        lead = len(self.node_sizes) - len(v.sizes)
        if lead < 0 or self.node_axes is None:
            raise NotLowerable("an operand has more dimensions than the result")
        axes = []
        for k, n in enumerate(v.sizes):
            if n != 1 and n != self.node_sizes[lead + k]:
                raise NotLowerable("an operand does not broadcast to the result")
            axes.append(self.node_axes[lead + k] if n != 1 else None)
        return tuple(axes)

    # ---- operands
    def const(self, value: Any) -> Val:
        if isinstance(value, np.generic):
            value = value.item()
        if isinstance(value, bool):
            return Val(Const(value, BOOL), BOOL, NUMBER)
        if isinstance(value, int):
            return Val(Const(value, np.dtype(np.int64)), np.dtype(np.int64), NUMBER)
        if isinstance(value, float):
            return Val(Const(value, np.dtype(np.float64)), np.dtype(np.float64), NUMBER)
        raise NotLowerable(f"unsupported constant {value!r}")

    def _val(self, x: Operand) -> Val:
        if isinstance(x, Val):
            return x
        if isinstance(x, View):
            return self.load(x, self._view_axes(x))
        return self.const(x)

    def value(self, x: Operand) -> Val:
        """`x` as a computed value (views are read where the current node reads them)."""
        return self._val(x)

    def promote(self, *xs: Val) -> np.dtype:
        dtype = result_type(*[_sample(x) for x in xs])
        if dtype not in SUPPORTED_DTYPES:
            raise NotLowerable(f"dtype {dtype}")
        return dtype

    def cast(self, x: Operand, dtype) -> Val:
        x = self._val(x)
        dtype = np.dtype(dtype)
        if dtype not in SUPPORTED_DTYPES:
            raise NotLowerable(f"dtype {dtype}")
        if x.dtype == dtype:
            return x
        if isinstance(x.expr, Const):
            return Val(Const(np.array(x.expr.value).astype(dtype).item(), dtype), dtype, x.priority)
        return Val(Op("cast", (x.expr,), dtype), dtype, x.priority, x.sizes, x.axes)

    def is_float(self, x: Operand) -> bool:
        return is_float(x.dtype if isinstance(x, (Val, View)) else self._val(x).dtype)

    def to_float(self, x: Operand) -> Val:
        x = self._val(x)
        return x if is_float(x.dtype) else self.cast(x, DEFAULT_FLOAT)

    # ---- building
    def _op(self, name: str, dtype: np.dtype, *xs: Val, priority: int) -> Val:
        sizes, axes = broadcast_axes([(x.sizes, x.axes) for x in xs])
        return Val(Op(name, tuple(x.expr for x in xs), dtype), dtype, priority, sizes, axes)

    def _binary(self, name: str, x: Operand, y: Operand, dtype=None) -> Val:
        x, y = self._val(x), self._val(y)
        common = self.promote(x, y)
        out = common if dtype is None else dtype
        return self._op(name, out, self.cast(x, common), self.cast(y, common),
                        priority=min(x.priority, y.priority))

    def is_view(self, x) -> bool:
        return isinstance(x, View)

    def add(self, x, y):
        if self._val(x).dtype == BOOL and self._val(y).dtype == BOOL:
            return self._binary("or", x, y)
        return self._binary("add", x, y)

    def sub(self, x, y):
        return self._binary("sub", x, y)

    def mul(self, x, y):
        if self._val(x).dtype == BOOL and self._val(y).dtype == BOOL:
            return self._binary("and", x, y)
        return self._binary("mul", x, y)

    def div(self, x, y):
        x, y = self._val(x), self._val(y)
        common = self.promote(x, y)
        if not is_float(common):
            common = DEFAULT_FLOAT
        return self._op("div", common, self.cast(x, common), self.cast(y, common),
                        priority=min(x.priority, y.priority))

    def _integer_division(self, name: str, x, y) -> Val:
        """Floor/trunc division and modulo with PyTorch's promotion; integer division by zero
        makes the kernel return a status (a bailout), so the interpreter raises the error."""
        x, y = self._val(x), self._val(y)
        if self.promote(x, y) == BOOL:
            raise NotLowerable(f"{name} of bool")
        return self._binary(name, x, y)

    def floor_divide(self, x, y):
        return self._integer_division("floor_divide", x, y)

    def trunc_divide(self, x, y):
        return self._integer_division("trunc_divide", x, y)

    def remainder(self, x, y):
        return self._integer_division("remainder", x, y)

    def fmod(self, x, y):
        return self._integer_division("fmod", x, y)

    def bitwise(self, name: str, x, y) -> Val:
        """`and`, `or` or `xor` of integer or bool operands (PyTorch refuses floats)."""
        x, y = self._val(x), self._val(y)
        if is_float(self.promote(x, y)):
            raise NotLowerable(f"bitwise {name} of floats")
        return self._binary(name, x, y)

    def bitwise_not(self, x) -> Val:
        x = self._val(x)
        if is_float(x.dtype):
            raise NotLowerable("bitwise not of floats")
        return self._op("not", x.dtype, x, priority=x.priority)

    def isinf(self, x) -> Val:
        x = self._val(x)
        if not is_float(x.dtype):
            return self.cast(False, BOOL)
        return self.eq(self.abs(x), Val(Const(float("inf"), x.dtype), x.dtype, NUMBER))

    def isfinite(self, x) -> Val:
        x = self._val(x)
        if not is_float(x.dtype):
            return self.cast(True, BOOL)
        return self.lt(self.abs(x), Val(Const(float("inf"), x.dtype), x.dtype, NUMBER))

    def maximum(self, x, y):
        return self._binary("max", x, y)

    def minimum(self, x, y):
        return self._binary("min", x, y)

    def _unary(self, name: str, x: Operand) -> Val:
        x = self._val(x)
        return self._op(name, x.dtype, x, priority=x.priority)

    def neg(self, x):
        if self._val(x).dtype == BOOL:
            raise NotLowerable("negation of bool")
        return self._unary("neg", x)

    def abs(self, x):
        return self._unary("abs", x)

    def sign(self, x):
        return self._unary("sign", x)

    def sqrt(self, x):
        return self._unary("sqrt", self.to_float(x))

    def floor(self, x):
        return self._unary("floor", x)

    def ceil(self, x):
        return self._unary("ceil", x)

    def trunc(self, x):
        return self._unary("trunc", x)

    def round(self, x):
        return self._unary("round", x)

    def _compare(self, name, x, y):
        return self._binary(name, x, y, dtype=BOOL)

    def isnan(self, x):
        x = self._val(x)
        if not is_float(x.dtype):
            return self.cast(False, BOOL)
        return self._op("isnan", BOOL, x, priority=x.priority)

    def _logical(self, name, x, y):
        x, y = self.cast(x, BOOL), self.cast(y, BOOL)
        return self._op(name, BOOL, x, y, priority=min(x.priority, y.priority))

    def logical_and(self, x, y):
        return self._logical("and", x, y)

    def logical_or(self, x, y):
        return self._logical("or", x, y)

    def logical_xor(self, x, y):
        return self._logical("xor", x, y)

    def logical_not(self, x):
        x = self.cast(x, BOOL)
        return self._op("not", BOOL, x, priority=x.priority)

    def where(self, cond, x, y):
        c = self.cast(cond, BOOL)
        x, y = self._val(x), self._val(y)
        common = self.promote(x, y)
        return self._op("select", common, c, self.cast(x, common), self.cast(y, common),
                        priority=min(c.priority, x.priority, y.priority))

    def call(self, name: str, *xs: Operand) -> Val:
        if name not in self._math:
            raise NotLowerable(f"the math library has no {name}")
        vals = [self._val(x) for x in xs]
        dtype = self.promote(*vals)
        if not is_float(dtype):
            dtype = DEFAULT_FLOAT
        return self._op(f"math.{name}", dtype, *[self.cast(v, dtype) for v in vals],
                        priority=min(v.priority for v in vals))

    # ---- creation and identities
    def fill(self, value) -> Val:
        """The current node's output filled with the number `value` (in its dtype)."""
        if self.node_axes is None:
            raise NotLowerable("a fill outside the iteration space")
        dtype = self.node_dtype
        const = Const(np.array(value).astype(dtype).item(), dtype)
        return Val(const, dtype, DIMENSIONED if self.node_sizes else ZERO_DIM,
                   tuple(self.node_sizes), tuple(self.node_axes))

    def arange(self, start, step) -> Val:
        """`start + i * step` along the current node's (1-D) output, computed in float64 or
        int64 and then cast, as the interpreter does."""
        if self.node_axes is None or len(self.node_sizes) != 1:
            raise NotLowerable("arange outside the iteration space")
        axis = self.node_axes[0]
        if axis is None:
            return self.fill(start)
        i = Val(Position(axis), np.dtype(np.int64), DIMENSIONED, tuple(self.node_sizes), (axis,))
        if isinstance(start, float) or isinstance(step, float) or is_float(self.node_dtype):
            i = self.cast(i, np.dtype(np.float64))
            start, step = float(start), float(step)
        return self.add(self.mul(i, step), start)

    def alias(self, x) -> Union[Val, View]:
        """`x` itself, for ops that return their input (dropout in eval mode, `to` without a
        change): a view stays a view of the same buffer."""
        return x

    def contiguous(self, x) -> Union[Val, View]:
        """`x.contiguous()`: a contiguous view is `x` itself, another view is copied."""
        if isinstance(x, View) and any(n != 1 and st != c for n, st, c in
                                       zip(x.sizes, x.strides, _contiguous(x.sizes))):
            return self._val(x)
        return x

    # ---- joins
    def cat(self, xs: list, dim: int) -> Val:
        """`torch.cat(xs, dim)` as index arithmetic: each piece is read with its index along
        `dim` clamped into its own range (always in bounds) and a select on the output index
        picks the piece, so no piece is copied. Pieces that vary along `dim` must be views."""
        rank = len(self.node_sizes)
        if self.node_axes is None or rank == 0:
            raise NotLowerable("cat outside the iteration space")
        dim %= rank
        pieces = [x for x in xs if not (len(x.sizes) == 1 and x.sizes[0] == 0)]
        if not pieces or any(len(x.sizes) != rank for x in pieces):
            raise NotLowerable("cat of empty or mismatched pieces")
        pieces = [x for x in pieces if x.sizes[dim] != 0]
        if not pieces:
            raise NotLowerable("cat of empty pieces")
        axis = self.node_axes[dim]
        if len(pieces) == 1:
            return self._val(pieces[0])
        if axis is None:
            raise NotLowerable("cat along a broadcast axis")
        vals, ends, start = [], [], 0
        for x in pieces:
            n = x.sizes[dim]
            if not isinstance(x, View):
                raise NotLowerable("cat of a computed value")
            vals.append(self._cat_piece(x, dim, start))
            start += n
            ends.append(start)
        if start != self.node_sizes[dim]:
            raise NotLowerable("cat pieces do not fill the output")
        index = Val(Position(axis), np.dtype(np.int64), DIMENSIONED, (), ())
        result = vals[-1]
        for v, end in zip(reversed(vals[:-1]), reversed(ends[:-1])):
            result = self.where(self.lt(index, Val(Const(end, np.dtype(np.int64)),
                                                   np.dtype(np.int64), DIMENSIONED)), v, result)
        return Val(result.expr, result.dtype, DIMENSIONED, tuple(self.node_sizes), tuple(self.node_axes))

    def _cat_piece(self, x: View, dim: int, start: int) -> Val:
        """View `x` read as the piece of the node's output from `start` on along `dim`."""
        axes = list(self.node_axes)
        strides = [0] * len(self.space.full)
        for k, (n, st, ax) in enumerate(zip(x.sizes, x.strides, axes)):
            if k == dim:
                continue
            if n != self.node_sizes[k]:
                raise NotLowerable("cat pieces differ outside the cat dimension")
            if ax is not None and n != 1:
                strides[ax] = st
        clamped = ()
        if x.sizes[dim] > 1:
            clamped = (ClampedAxis(axes[dim], start, x.sizes[dim], x.strides[dim]),)
        access = Access(x.buffer, tuple(strides), x.offset, x.dynamic, clamped)
        return Val(Load(access, x.dtype), x.dtype, DIMENSIONED, tuple(self.node_sizes), tuple(axes))

    def stack(self, xs: list, dim: int) -> Val:
        """`torch.stack(xs, dim)`: a cat of the pieces unsqueezed at `dim`."""
        dim %= len(self.node_sizes)
        return self.cat([self.unsqueeze(x, dim) for x in xs], dim)

    # ---- reductions
    def reduce(self, combine: str, x: Operand, dims, keepdim: bool) -> Val:
        """`combine` ("sum", "max", "min") of `x` over `dims` (all dims when empty or None)."""
        sizes = x.sizes if isinstance(x, (Val, View)) else ()
        rank = len(sizes)
        dims = tuple(sorted({d % rank for d in dims})) if dims else tuple(range(rank))
        if rank == 0:
            return self._val(x)
        space = Space(tuple(sizes), dims)
        if self.space is None or not self.space.reduce_dims:
            raise NeedSpace(space)
        if self.space != space:
            raise NotLowerable("reductions of one kernel must share their input shape and dims")
        v = self.load(x, space.full_axes(sizes)) if isinstance(x, View) else self._val(x)
        if v.sizes != sizes or v.axes != space.full_axes(sizes):
            raise NotLowerable("the reduced value does not run along the full space")
        dtype = v.dtype
        if combine == "sum" and not is_float(dtype):
            dtype = np.dtype(np.int64)
            v = self.cast(v, dtype)
        if keepdim:
            out_sizes = tuple(1 if d in dims else n for d, n in enumerate(sizes))
            out_axes = tuple(None if d in dims or n == 1 else space.axis_of(d) for d, n in enumerate(sizes))
        else:
            out_sizes = tuple(n for d, n in enumerate(sizes) if d not in dims)
            out_axes = tuple(None if sizes[d] == 1 else space.axis_of(d) for d in space.kept)
        count = int(np.prod([sizes[d] for d in dims])) if dims else 1
        if count == 0:
            raise NotLowerable("reduction over an empty dimension")
        return Val(Reduce(combine, v.expr, dtype), dtype, DIMENSIONED if out_sizes else ZERO_DIM,
                   out_sizes, out_axes)

    def numel(self, x: Operand, dims=None) -> int:
        sizes = x.sizes
        dims = [d % len(sizes) for d in dims] if dims else range(len(sizes))
        return int(np.prod([sizes[d] for d in dims]))

    # ---- matrix products (BLAS), into scratch buffers read by the rest of the kernel
    def matmul(self, a, b) -> View:
        """`torch.matmul(a, b)` of two input views, as a product run before the loop nest."""
        from .gemm_tiled import batched_plan, gemm_algorithm
        from .kernel import Operand, Product
        from .matmul import matmul_layout
        if not (isinstance(a, View) and isinstance(b, View)) or self.allocate is None:
            raise NotLowerable("products of computed values stay interpreted")
        if a.dtype != b.dtype or a.dtype.name not in ("float32", "float64", "int64"):
            raise NotLowerable("product dtypes")
        try:
            layout = matmul_layout(a.sizes, a.strides, b.sizes, b.strides)
        except ValueError as e:
            raise NotLowerable(str(e)) from None
        if any(n == 0 for n in a.sizes + b.sizes):
            raise NotLowerable("empty product")
        out = self.allocate(a.dtype, layout.out_shape)
        algorithm = gemm_algorithm(layout, a.dtype.name, dynamic=bool(a.dynamic or b.dynamic))
        elems = batched_plan(layout, a.dtype.name).scratch_elems if algorithm == "tiled" else 0
        scratch = self.allocate(a.dtype, (elems,)) if elems else None
        self.products.append(Product(Operand(a.buffer, a.sizes, a.strides, a.offset, a.dynamic),
                                     Operand(b.buffer, b.sizes, b.strides, b.offset, b.dynamic),
                                     out, a.dtype, algorithm, scratch))
        return View(out, a.dtype, layout.out_shape, _contiguous(layout.out_shape))

    def conv2d(self, x, weight, bias, stride, padding, dilation, groups) -> View:
        """conv2d of contiguous input views (NCHW, OIHW), run before the loop nest."""
        from .conv import Conv2dShape
        from .conv_algorithm import conv_algorithm, scratch_elems
        from .kernel import Convolution
        views = [v for v in (x, weight, bias) if v is not None]
        if not all(isinstance(v, View) and not v.dynamic and v.offset == 0 and is_contiguous_view(v)
                   for v in views) or self.allocate is None:
            raise NotLowerable("conv2d of computed or non-contiguous values")
        if x.dtype != weight.dtype or x.dtype.name not in ("float32", "float64") or \
                (bias is not None and bias.dtype != x.dtype):
            raise NotLowerable("conv2d dtypes")
        if not all(isinstance(v, int) for v in [groups, *stride, *padding, *dilation]):
            raise NotLowerable("conv2d with run-time geometry")
        try:
            shape = Conv2dShape.of(x.sizes, weight.sizes, stride, padding, dilation, groups)
        except (ValueError, RuntimeError) as e:
            raise NotLowerable(str(e)) from None
        out_sizes = (shape.batch, shape.out_channels, shape.out_h, shape.out_w)
        out = self.allocate(x.dtype, out_sizes)
        algorithm = conv_algorithm(shape, "forward", x.dtype.name)
        elems = scratch_elems(shape, "forward", x.dtype.name, algorithm)
        scratch = self.allocate(x.dtype, (elems,)) if elems else None
        self.products.append(Convolution(shape, x.buffer, weight.buffer,
                                         bias.buffer if bias is not None else None, out,
                                         scratch, x.dtype, algorithm=algorithm))
        return View(out, x.dtype, out_sizes, _contiguous(out_sizes))

    # ---- views (index arithmetic on input buffers; size-1 dims of computed values)
    def _view(self, x, sizes, strides=None, offset=0, dynamic=()) -> View:
        if not isinstance(x, View):
            raise NotLowerable("views of computed values stay interpreted")
        return View(x.buffer, x.dtype, tuple(sizes), tuple(strides), x.offset + offset,
                    x.dynamic + tuple(dynamic))

    def permute(self, x, dims):
        dims = [d % len(x.sizes) for d in dims]
        if isinstance(x, Val):
            return Val(x.expr, x.dtype, x.priority, tuple(x.sizes[d] for d in dims),
                       tuple(x.axes[d] for d in dims))
        return self._view(x, [x.sizes[d] for d in dims], [x.strides[d] for d in dims])

    def unsqueeze(self, x, dim):
        dim = dim % (len(x.sizes) + 1)
        sizes = x.sizes[:dim] + (1,) + x.sizes[dim:]
        if isinstance(x, Val):
            return Val(x.expr, x.dtype, DIMENSIONED, sizes, x.axes[:dim] + (None,) + x.axes[dim:])
        return self._view(x, sizes, x.strides[:dim] + (0,) + x.strides[dim:])

    def squeeze(self, x, dims=None):
        rank = len(x.sizes)
        dims = {d % rank for d in dims} if dims is not None else set(range(rank))
        keep = [k for k in range(rank) if not (k in dims and x.sizes[k] == 1)]
        sizes = tuple(x.sizes[k] for k in keep)
        if isinstance(x, Val):
            return Val(x.expr, x.dtype, DIMENSIONED if sizes else ZERO_DIM, sizes,
                       tuple(x.axes[k] for k in keep))
        v = self._view(x, sizes, [x.strides[k] for k in keep])
        return v

    def expand(self, x, sizes):
        lead = len(sizes) - len(x.sizes)
        if lead < 0:
            raise NotLowerable("expand to fewer dimensions")
        new_sizes, strides = [], []
        for k, n in enumerate(sizes):
            old = x.sizes[k - lead] if k >= lead else 1
            n = old if n == -1 else n
            if old != n and old != 1:
                raise NotLowerable("expand of a non-singleton dimension")
            new_sizes.append(n)
            if isinstance(x, View):
                strides.append(x.strides[k - lead] if k >= lead and old == n else 0)
        if isinstance(x, Val):
            if tuple(new_sizes[lead:]) != tuple(x.sizes):
                raise NotLowerable("expanding a computed value")
            if any(n != 1 for n in new_sizes[:lead]):  # new dims run along the node's axes
                if self.node_axes is None or tuple(self.node_sizes) != tuple(new_sizes):
                    raise NotLowerable("expanding a computed value outside the iteration space")
                return Val(x.expr, x.dtype, x.priority, tuple(new_sizes),
                           tuple(self.node_axes[:lead]) + x.axes)
            return Val(x.expr, x.dtype, x.priority, tuple(new_sizes), (None,) * lead + x.axes)
        return self._view(x, new_sizes, strides)

    def slice(self, x, dim, start, end, step):
        if not isinstance(x, View) or not all(v is None or isinstance(v, int) for v in (start, end, step)):
            raise NotLowerable("slices of computed values or at run-time bounds stay interpreted")
        dim = dim % len(x.sizes)
        n = x.sizes[dim]
        start, end, step = slice(start, end, step).indices(n)
        length = max(0, (end - start + step - 1) // step)
        sizes = x.sizes[:dim] + (length,) + x.sizes[dim + 1:]
        strides = x.strides[:dim] + (x.strides[dim] * step,) + x.strides[dim + 1:]
        return self._view(x, sizes, strides, start * x.strides[dim] if length else 0)

    def select(self, x, dim, index):
        if not isinstance(x, View):
            raise NotLowerable("select of a computed value")
        dim = dim % len(x.sizes)
        n = x.sizes[dim]
        if isinstance(index, Val):  # a run-time index: checked in the kernel before use
            load = index.expr
            if not (isinstance(load, Load) and index.dtype == np.int64 and n > 0):
                raise NotLowerable("select at a computed index")
            from .kernel import Index
            return self._view(x, x.sizes[:dim] + x.sizes[dim + 1:], x.strides[:dim] + x.strides[dim + 1:],
                              0, ((Index(load.access.buffer, n), x.strides[dim]),))
        if not -n <= index < n:
            raise NotLowerable("select index out of range")
        index %= n
        return self._view(x, x.sizes[:dim] + x.sizes[dim + 1:], x.strides[:dim] + x.strides[dim + 1:],
                          index * x.strides[dim])

    def reshape(self, x, sizes):
        total = int(np.prod(x.sizes))
        sizes = list(sizes)
        if -1 in sizes:
            known = int(np.prod([s for s in sizes if s != -1]))
            sizes[sizes.index(-1)] = total // known if known else 0
        if isinstance(x, View) and is_contiguous_view(x):  # the result is contiguous too
            return self._view(x, sizes, _contiguous(sizes))
        if isinstance(x, View):
            strides = viewed_strides(x.sizes, x.strides, sizes)
            if strides is None:
                raise NotLowerable("reshape that needs a copy")
            return self._view(x, sizes, strides)
        if [s for s in x.sizes if s != 1] == [s for s in sizes if s != 1]:
            kept = iter([a for s, a in zip(x.sizes, x.axes) if s != 1])
            mapped = [next(kept) if s != 1 else None for s in sizes]
            return Val(x.expr, x.dtype, DIMENSIONED if sizes else ZERO_DIM, tuple(sizes), tuple(mapped))
        raise NotLowerable("reshape of a computed value across dimensions")


def viewed_strides(sizes, strides, new_sizes) -> Optional[tuple]:
    """The strides of `new_sizes` viewing a window of `sizes` and `strides` (elements) without
    a copy, or None when it needs one: numpy's own rule, which the interpreter's reshape follows
    (asked of a window over one byte that nothing reads)."""
    window = np.lib.stride_tricks.as_strided(np.empty(1, np.int8), tuple(sizes), tuple(strides))
    try:
        return tuple(np.reshape(window, tuple(new_sizes), copy=False).strides)
    except ValueError:
        return None


def _contiguous(sizes) -> tuple:
    out, acc = [], 1
    for s in reversed(sizes):
        out.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(out))


def is_contiguous_view(v: View) -> bool:
    """Contiguous up to the strides of size-1 dims, which no element is read through."""
    return all(n == 1 or s == c for n, s, c in zip(v.sizes, v.strides, _contiguous(v.sizes)))
