"""PyTorch's `differentiate(graph) -> Gradient` (runtime/autodiff.cpp), with derivatives taken
from the op registry's formulas through `SymbolicEmitter`."""

from __future__ import annotations

import numpy as np

from irjit.ops import facts
from irjit.ops.errors import IRTypeError
from irjit.compiler.ir.constants import constant_value
from irjit.compiler.ir.graph import Graph
from irjit.compiler.ir.node import Block, Node, Value
from irjit.ops.types import (DTYPE_TO_SCALAR_TYPE, INT, NONE, TENSOR, ClassType, ListType, NamedType, OptionalType,
                             TensorType, TupleType, Type)

from .gradient import Gradient
from .symbolic_emitter import (ListArg, NotSymbolic, SymbolicEmitter, is_tensor_list_type, python_value, resolve,
                               static_eval, static_list_shapes)


class DifferentiationError(Exception):
    pass


def type_requires_grad(t: Type) -> bool:
    """PyTorch's `Type::requires_grad()`: unknown tensor requires_grad counts as True."""
    if isinstance(t, TensorType):
        return True if t.requires_grad is None else bool(t.requires_grad)
    if isinstance(t, ClassType):
        # a module's class type contains its parameters' (unknown) tensor types
        return True
    return any(type_requires_grad(c) for c in t.contained())


def requires_grad(v: Value) -> bool:
    return type_requires_grad(v.type)


# ---- isDifferentiable

def is_differentiable(node: Node) -> bool:
    """Whether PyTorch's autodiff would differentiate `node` and our formula can be emitted."""
    kind = node.kind
    if facts.has_tag(kind, "always_differentiable"):
        return True
    if kind == "prim::GradOf":
        return all(is_differentiable(n) for n in node.blocks[0].nodes())
    if not kind.startswith("aten::") or node.blocks:
        return False
    if drops_input_gradients(node):
        return False
    if kind == "aten::dropout":
        train = node.inputs[2] if len(node.inputs) > 2 else None
        if train is None or train.node.kind != "prim::Constant" or not constant_value(train.node):
            return False
    try:
        entry = resolve(kind, [python_value(v) for v in node.inputs])
    except Exception:  # noqa: BLE001 - an unregistered op or overload is simply not differentiable
        return False
    if "differentiable" not in entry.tags:
        return False
    if entry.derivative is None and not facts.has_tag(kind, "comparison"):
        return False  # (comparisons need none: their boolean results get no gradient)
    # cat/stack/split/unbind/...: PyTorch's slicer leaves the list nodes (ListConstruct,
    # ListUnpack) outside the DifferentiableGraph, whose `Tensor[]` inputs and outputs their
    # symbolic_script formulas take whole; the dry run (a graph of the node alone, its lists
    # graph inputs and outputs) says whether ours do
    return _dry_run(node)


def drops_input_gradients(node: Node) -> bool:
    """Whether PyTorch's formula gives an input that may require grad no gradient where eager
    autograd gives one: symbolic_script's clamp_2 differentiates self only, not tensor bounds.
    Such a node is left to the tape (so that learnable bounds learn)."""
    return node.kind == "aten::clamp" and any(
        isinstance(v.type, TensorType) and requires_grad(v) for v in node.inputs[1:3])


def _dry_run(node: Node) -> bool:
    g, vm = Graph(), {}
    for v in node.inputs:
        if v in vm:
            continue
        if v.node.kind == "prim::Constant":
            c = g.clone_node(v.node, vm)
            g.insert_node(c)
        else:
            t = v.type.with_(requires_grad=True) if isinstance(v.type, TensorType) else v.type
            vm[v] = g.add_input(type=t)
    c = g.clone_node(node, vm)
    g.insert_node(c)
    for o in c.outputs:
        if isinstance(o.type, TensorType):
            o.type = o.type.with_(requires_grad=True)
        g.register_output(o)
    try:
        differentiate(g, infer_shapes=False)  # what the node's own types allow, as before
    except (NotSymbolic, DifferentiationError, TypeError, ValueError, KeyError, IndexError,
            AttributeError, AssertionError, NotImplementedError):
        return False
    except Exception as e:  # noqa: BLE001 - registry resolution errors
        return type(e).__name__ == "NotSymbolic"
    return True


# ---- static shapes

class _StaticShapes:
    """Value -> static shape for values of `graph` whose IR type lacks complete sizes,
    computed on first use by propagating the inputs' complete types on a copy of the graph
    (PropagateInputShapes, plus what it does not follow through tensor lists: the pieces of
    chunk/split/unbind and the results of cat/stack of a ListConstruct). PyTorch's
    differentiate sees profiled (complete) types instead."""

    def __init__(self, graph: Graph, infer: bool = True):
        self.graph = graph
        self.known: dict[Value, tuple] = {}
        self.same: dict[Value, Value] = {}  # a replacement's output -> the value it replaces
        self._propagated: dict[Value, tuple] | None = None if infer else {}

    def __call__(self, v: Value):
        v = self.same.get(v, v)
        if v in self.known:
            return self.known[v]
        if self._propagated is None:
            self._propagated = self._propagate()
        return self._propagated.get(v)

    def _propagate(self) -> dict:
        from irjit.compiler.passes.propagate_input_shapes import run as propagate_input_shapes
        clone, vm = Graph(), {}
        try:
            clone.block.clone_from(self.graph.block, vm)
            for _ in range(64):
                propagate_input_shapes(clone)
                if not (_type_list_pieces(clone) | _type_list_consumers(clone)):
                    break
        except Exception:  # noqa: BLE001 - no shapes: formulas that need them refuse
            return {}
        out = {}
        for v, c in vm.items():
            if isinstance(c.type, TensorType) and c.type.complete_sizes() is not None:
                out[v] = tuple(c.type.complete_sizes())
        return out


def _complete_sizes(v: Value):
    t = v.type
    sizes = t.complete_sizes() if isinstance(t, TensorType) else None
    return tuple(sizes) if sizes is not None else None


def _complete_type(shape, like: TensorType, dtype=None) -> TensorType:
    strides, acc = [], 1
    for d in reversed(shape):
        strides.insert(0, acc)
        acc *= max(d, 1)
    st = DTYPE_TO_SCALAR_TYPE.get(str(dtype)) if dtype is not None else like.scalar_type
    return TensorType(st, tuple(shape), tuple(strides), like.requires_grad, like.device)


def _type_list_pieces(graph: Graph) -> bool:
    """Give the pieces of `prim::ListUnpack(chunk/split/unbind(...))` and `prim::ConstantChunk`
    complete types from their input's; True when a type changed."""
    changed = False
    for n in graph.walk():
        if n.kind not in ("prim::ListUnpack", "prim::ConstantChunk"):
            continue
        if all(_complete_sizes(o) is not None for o in n.outputs):
            continue
        try:
            if n.kind == "prim::ConstantChunk":
                x = n.inputs[0]
                entry = resolve("aten::chunk", [x, 0, 0])
                args = [x, n.attr("chunks"), n.attr("dim")]
            else:
                src = n.inputs[0].node
                if src.kind == "prim::ListConstruct" and len(src.inputs) == len(n.outputs):
                    for o, i in zip(n.outputs, src.inputs):
                        if _complete_sizes(o) is None and _complete_sizes(i) is not None:
                            o.type = i.type
                            changed = True
                    continue
                if not src.kind.startswith("aten::"):
                    continue
                args = list(src.inputs)
                entry = resolve(src.kind, [python_value(a) for a in args])
            x = next(a for a in args if isinstance(a, Value) and isinstance(a.type, TensorType))
            shapes = static_list_shapes(entry, args, _complete_sizes)
        except Exception:  # noqa: BLE001 - unknown shapes or length
            continue
        if len(shapes) != len(n.outputs):
            continue
        for o, shape in zip(n.outputs, shapes):
            o.type = _complete_type(shape, x.type)
        changed = True
    return changed


def _type_list_consumers(graph: Graph) -> bool:
    """Complete the tensor results of ops taking a ListConstruct'ed `Tensor[]` (cat, stack)."""
    changed = False
    for n in graph.walk():
        if not n.kind.startswith("aten::") or facts.has_tag(n.kind, "data_dependent"):
            continue
        lists = [v for v in n.inputs if is_tensor_list_type(v.type)]
        if not lists or not all(v.node.kind == "prim::ListConstruct" for v in lists):
            continue
        outs = [o for o in n.outputs if isinstance(o.type, TensorType) and _complete_sizes(o) is None]
        if len(outs) != len(n.outputs) or len(outs) != 1:
            continue
        try:
            entry = resolve(n.kind, [python_value(a) for a in n.inputs])
            res = np.asarray(static_eval(entry, list(n.inputs), _complete_sizes))
            like = next(x for v in lists for x in v.node.inputs if isinstance(x.type, TensorType))
        except Exception:  # noqa: BLE001 - unknown shapes
            continue
        outs[0].type = _complete_type(res.shape, like.type, res.dtype)
        changed = True
    return changed


# ---- the reverse program
#
# Tensor lists: the gradient of a `Tensor[]` value is kept element-wise, as a Python list of
# gradient values (None where statically zero) aligned with the list's elements: those of the
# `prim::ListConstruct` that built it, or the outputs of the `prim::ListUnpack` that takes it
# apart. Registry formulas receive a `Tensor[]` argument as the list of its elements and
# return a list of gradients for it; the gradients of a `Tensor[]` result (chunk, split,
# unbind) reach them flattened, one per element, as the tape's do, except that a whole
# `Tensor[]` gradient (the vjp of a list the graph returns) reaches the formulas of ops tagged
# "list_vjp" as that one value, as symbolic_script's `grads: List[Tensor]` does.

def _is_tensor_list(v: Value) -> bool:
    return is_tensor_list_type(v.type)


class _Reverse:
    def __init__(self, grad: Gradient, infer_shapes: bool = True):
        self.grad = grad
        self.f = grad.f
        self.node = self.f.create("prim::Reverse", num_outputs=0)  # never inserted, as in PyTorch
        self.block: Block = self.node.add_block()
        self.grad_map: dict[Value, object] = {}  # Value -> Value, or a list for a Tensor[]
        self.shapes = _StaticShapes(self.f, infer_shapes)
        self.elements: dict[Value, list[Value]] = {}

    def insert_here(self) -> None:
        self.f.set_insert_point(self.block)

    def zero(self) -> Value:
        self.insert_here()
        return self.f.insert("prim::AutogradZero", [], output_types=[TENSOR]).output

    def get_grad(self, v: Value) -> Value:
        g = self.grad_map.get(v)
        if g is None:
            g = self.grad_map[v] = self.zero()
        return g

    def _add(self, a, b):
        if a is None:
            return b
        if b is None:
            return a
        self.insert_here()
        return self.f.insert("prim::AutogradAdd", [a, b], output_types=[TENSOR]).output

    def set_grad(self, x: Value, dx) -> None:
        prev = self.grad_map.get(x)
        if isinstance(dx, list) or isinstance(prev, list):
            dx = self._as_elements(x, dx)
            if prev is not None:
                dx = [self._add(a, b) for a, b in zip(self._as_elements(x, prev), dx)]
            self.grad_map[x] = dx
        elif prev is None:
            self.grad_map[x] = dx
        else:
            self.grad_map[x] = self._add(prev, dx)

    # ---- tensor lists
    def list_elements(self, v: Value) -> list[Value]:
        """The forward values a `Tensor[]` holds: its ListConstruct's inputs or its ListUnpack's
        outputs; for a list an op returns and nothing unpacks, a `prim::ListUnpack` is added
        to the forward graph when the op's static shapes give its length."""
        els = self.elements.get(v)
        if els is not None:
            return els
        n = v.node
        if n.kind == "prim::ListConstruct":
            els = list(n.inputs)
        else:
            unpack = next((u.user for u in v.uses if u.user.kind == "prim::ListUnpack"
                           and u.user.owning_block is self.f.block), None)
            if unpack is not None:
                els = list(unpack.outputs)
            else:
                els = self._unpack_forward(v)
        self.elements[v] = els
        return els

    def known_elements(self, v: Value) -> bool:
        """Whether the forward graph says what a `Tensor[]` holds (it builds or unpacks it,
        or an op of static shapes made it); a graph input's gradient stays one list."""
        if v in self.elements or v.node.kind == "prim::ListConstruct":
            return True
        if any(u.user.kind == "prim::ListUnpack" and u.user.owning_block is self.f.block for u in v.uses):
            return True
        return v.node.owning_block is self.f.block and v.node.kind.startswith("aten::")

    def _unpack_forward(self, v: Value) -> list[Value]:
        n = v.node
        if n.owning_block is not self.f.block or not n.kind.startswith("aten::"):
            raise DifferentiationError(
                f"differentiation through the Tensor[] %{v.name} needs its elements: build it with "
                "prim::ListConstruct or unpack it with prim::ListUnpack in the differentiated graph")
        try:
            entry = resolve(n.kind, [python_value(i) for i in n.inputs])
            shapes = static_list_shapes(entry, list(n.inputs), self.shapes_of)
        except Exception as e:  # noqa: BLE001
            raise DifferentiationError(f"the length of the Tensor[] %{v.name} ({n.kind}) is not "
                                       f"known statically: {e}") from e
        unpack = self.f.create("prim::ListUnpack", [v], output_types=[TENSOR] * len(shapes))
        unpack.insert_after(n)
        for o, shape in zip(unpack.outputs, shapes):
            self.shapes.known[o] = shape
        return list(unpack.outputs)

    def shapes_of(self, v: Value):
        t = v.type
        sizes = t.complete_sizes() if isinstance(t, TensorType) else None
        return tuple(sizes) if sizes is not None else self.shapes(v)

    def _as_elements(self, x: Value, g) -> list:
        """A list gradient as a Python list (a `Tensor[]` gradient value is unpacked)."""
        if isinstance(g, list):
            return list(g)
        els = self.list_elements(x)
        self.insert_here()
        unpack = self.f.insert("prim::ListUnpack", [g], output_types=[TENSOR] * len(els))
        return list(unpack.outputs)

    def list_grad(self, v: Value):
        """The element-wise gradient of a `Tensor[]` (None when it has none)."""
        g = self.grad_map.get(v)
        if g is None:
            return None
        if not isinstance(g, list):
            g = self.grad_map[v] = self._as_elements(v, g)
        return g

    def packed_grad(self, v: Value) -> Value:
        """A gradient as one value of the backward graph (a list is re-built)."""
        g = self.grad_map.get(v)
        if not isinstance(g, list):
            return self.get_grad(v)
        elems = [x if x is not None else self.zero() for x in g]
        self.insert_here()
        return self.f.insert("prim::ListConstruct", elems, output_types=[ListType(TENSOR)]).output

    @staticmethod
    def _defined(g) -> bool:
        return g is not None and not (isinstance(g, Value) and g.node.kind == "prim::AutogradZero")

    def list_node_gradient(self, node: Node) -> None:
        """ListConstruct: the list's element gradients go to its inputs. ListUnpack: its
        outputs' gradients become the list's (element-wise, None where statically zero)."""
        if node.kind == "prim::ListConstruct":
            g = self.list_grad(node.output)
            if g is None:
                return
            for inp, gi in zip(node.inputs, g):
                if self._defined(gi) and requires_grad(inp):
                    self.set_grad(inp, gi)
            return
        lst = node.inputs[0]
        if not _is_tensor_list(lst):
            raise DifferentiationError(f"differentiation of prim::ListUnpack of {lst.type} is not supported")
        grads = [self.grad_map.get(o) for o in node.outputs]
        grads = [g if self._defined(g) else None for g in grads]
        if requires_grad(lst) and any(g is not None for g in grads):
            self.elements.setdefault(lst, list(node.outputs))
            self.set_grad(lst, grads)

    # ---- ops
    def linear_gradient(self, node: Node) -> list:
        """The node's input gradients (a list for a `Tensor[]` input), computed inside a
        `prim::GradOf` block. A `Tensor[]` output's gradient reaches the formula flattened,
        one per element, with None for the statically undefined ones."""
        per_output = []
        for o in node.outputs:
            whole = self.grad_map.get(o)
            if _is_tensor_list(o) and isinstance(whole, Value) and facts.has_tag(node.kind, "list_vjp"):
                per_output.append(whole)  # symbolic_script's `grads: List[Tensor]`, one value
            elif _is_tensor_list(o):
                lg = self.list_grad(o)
                per_output.append(None if lg is None else [g if self._defined(g) else None for g in lg])
            else:
                per_output.append(self.get_grad(o))
        if not any(self._defined(g) for p in per_output for g in (p if isinstance(p, list) else [p])):
            return [None] * len(node.inputs)  # statically zero: PyTorch leaves this to specializeAutogradZero
        flat_outs, grads = [], []
        for o, p in zip(node.outputs, per_output):
            if _is_tensor_list(o) and not isinstance(p, Value):
                els = self.list_elements(o)
                flat_outs += els
                grads += p if p is not None else [None] * len(els)
            else:
                flat_outs.append(o)
                grads.append(p)
        if facts.has_tag(node.kind, "trim_grad"):  # PyTorch's needTrimGrad: the first vjp only
            grads = grads[:1] + [None] * (len(grads) - 1)
        known = [g if self._defined(g) else None for g in grads]
        gof_inputs = [g if g is not None else self.zero() for g in grads]
        if facts.has_tag(node.kind, "trim_grad"):
            gof_inputs = gof_inputs[:1]
        self.insert_here()
        gof = self.f.insert("prim::GradOf", gof_inputs, num_outputs=0, name=("s", node.kind))
        body = gof.add_block()
        self.f.set_insert_point(body)
        self._gof_inputs = gof_inputs
        results = self.gradient(node, known, flat_outs)
        outs = []
        for inp, r in zip(node.inputs, results):
            if _is_tensor_list(inp) and isinstance(r, Value) and _is_tensor_list(r) and \
                    self.known_elements(inp):
                els = self.list_elements(inp)
                self.f.set_insert_point(body)
                r = list(self.f.insert("prim::ListUnpack", [r], output_types=[TENSOR] * len(els)).outputs)
            if isinstance(r, list):
                sub = [self._gradof_output(gof, body, x) for x in r]
                outs.append(sub if any(x is not None for x in sub) else None)
            else:
                outs.append(self._gradof_output(gof, body, r))
        self.insert_here()
        return outs

    @staticmethod
    def _gradof_output(gof: Node, body: Block, r):
        if not isinstance(r, Value) or (r.node.kind == "prim::Constant" and r.type == NONE):
            return None
        body.register_output(r)
        return gof.add_output(r.type)

    def _replace_forward(self, node: Node) -> Node:
        """What PyTorch's build_script_grad does to the forward graph: the node is replaced by
        the op of its symbolic_script forward, inserted right after it (every use, the
        backward's included, now reads the new outputs). CSE merges the copy back into the
        original later, unless that would make graph outputs alias (views): then the copy
        stays, and values captured through it are not the ones the gradients were set for.
        Ops that write their inputs or act on the world are left alone."""
        from irjit.ops.registry import overloads
        if facts.has_side_effects(node.kind) or any(e.schema.is_inplace for e in overloads(node.kind)):
            return node
        new = self.f.clone_node(node, {})
        new.insert_after(node)
        for old, out in zip(node.outputs, new.outputs):
            old.replace_all_uses_with(out)
            self.shapes.same[out] = old
            if old in self.elements:
                self.elements[out] = self.elements[old]
        return new

    def gradient(self, node: Node, grads: list, outputs: list) -> list:
        kind = node.kind
        if kind in ("prim::Constant", "prim::AutogradZero"):
            return []
        if kind == "prim::AutogradAdd":
            return [grads[0], grads[0]]
        if facts.has_tag(kind, "comparison"):
            return [None] * len(node.inputs)  # a boolean result: no gradient, as in PyTorch
        if kind == "prim::ConstantChunk":
            # buildSymbolicGradient: cat of the chunks' gradients (AutogradZero where undefined),
            # the dim a constant of the backward block
            # (a chunk no gradient reaches statically gets zeros: cat cannot take an undefined one)
            e = SymbolicEmitter(self.f, node, self.f.block, shape_oracle=self.shapes)
            elems = [v if g is not None else e.zeros_like(o)
                     for v, g, o in zip(self._gof_inputs, grads, node.outputs)]
            parts = self.f.insert("prim::ListConstruct", elems, output_types=[ListType(TENSOR)]).output
            dim = self.f.insert_constant(node.attr("dim"))
            return [self.f.insert("aten::cat", [parts, dim], output_types=[TENSOR]).output]
        try:
            entry = resolve(kind, [python_value(v) for v in node.inputs])
        except IRTypeError:
            raise DifferentiationError(f"differentiation of {kind} is not supported "
                                       "(no schema for it in the op registry)") from None
        if entry.derivative is None:
            raise DifferentiationError(f"differentiation of {kind} is not supported")
        inputs = []
        for a, v in zip(entry.schema.arguments, node.inputs):
            if a.is_tensor_list and _is_tensor_list(v) and not self.known_elements(v):
                inputs.append(v)  # a list of unknown length (a graph input): formulas get the list
            elif a.is_tensor_list and _is_tensor_list(v):
                inputs.append([python_value(x) for x in self.list_elements(v)])
            elif v.node.kind == "prim::ListConstruct" and not _is_tensor_list(v):
                # a list of numbers built in the graph (layer_norm's `[x.size(-1)]`, permute's
                # dims): formulas get its elements, constants as numbers, others as values
                inputs.append(ListArg([python_value(x) for x in v.node.inputs], v))
            else:
                inputs.append(python_value(v))
        inputs += [python_value(v) for v in node.inputs[len(inputs):]]
        replacement = self._replace_forward(node)
        if replacement is not node:
            ids = {o: r for o, r in zip(node.outputs, replacement.outputs)}
            outputs = [ids.get(o, o) for o in outputs]
        e = SymbolicEmitter(self.f, replacement, self.f.block, shape_oracle=self.shapes)
        likes = [node.inputs[i] for i in facts.sizes_up_front(kind) if i < len(node.inputs)]
        if len(likes) == 2 and all(isinstance(v.type, TensorType) for v in likes):
            e.sizes_up_front(likes)
        try:
            res = entry.derivative(e, list(grads), inputs, list(outputs))
        except (TypeError, ValueError) as err:
            # the formula needs a Python value (a size list, a dim) that is only known at run
            # time here: not symbolically differentiable in this graph
            raise NotSymbolic(f"the formula of {kind} needs constant arguments ({err})") from None
        e.pack_context(self.f.insert_point.owning_block)
        res = list(res) + [None] * (len(node.inputs) - len(res))
        out = []
        for v, r in zip(node.inputs, res[:len(node.inputs)]):
            if isinstance(r, (list, tuple)):
                if not _is_tensor_list(v):
                    raise NotSymbolic(f"{kind}: a list gradient for the non-list input %{v.name}")
                out.append([x if isinstance(x, Value) else None for x in r])
            else:
                out.append(r if isinstance(r, Value) else None)
        return out


def _add_reverse_inline(grad: Gradient, infer_shapes: bool = True) -> _Reverse:
    rev = _Reverse(grad, infer_shapes)
    f = grad.f
    for i, out in enumerate(f.outputs):
        if not requires_grad(out):
            continue
        vjp = rev.block.add_input(out.type)
        rev.set_grad(out, vjp)
        grad.df_input_vjps.append(i)
    for node in list(f.block.reversed_nodes()):
        if not any(requires_grad(o) for o in node.outputs):
            continue
        if node.blocks:
            raise DifferentiationError(f"differentiation of {node.kind} (control flow) is not supported")
        if node.kind in ("prim::ListConstruct", "prim::ListUnpack"):
            rev.list_node_gradient(node)
            continue
        grad_inputs = rev.linear_gradient(node)
        for inp, g in zip(node.inputs, grad_inputs):
            if g is not None and requires_grad(inp):
                rev.set_grad(inp, g)
    for i, inp in enumerate(f.inputs):
        if requires_grad(inp) and inp in rev.grad_map:
            rev.block.register_output(rev.packed_grad(inp))
            grad.df_output_vjps.append(i)
    return rev


# ---- clean-ups between building the reverse program and lifting it (PyTorch's Optimize)

def _in_block(n: Node, container: Block) -> bool:
    b = n.owning_block
    while b is not None:
        if b is container:
            return True
        b = b.owning_node.owning_block if b.owning_node is not None else None
    return False


def _lift_constants(block: Block, target: Block) -> None:
    """PyTorch's liftConstants: every constant a node of the backward uses that is defined
    outside it (in the forward graph) is cloned to the top of the backward block, one clone
    per using node, the latest used first."""
    for n in list(block.nodes()) + [block.return_node]:
        for v in list(dict.fromkeys(n.inputs)):
            if v.node.kind != "prim::Constant" or _in_block(v.node, target):
                continue
            c = target.graph.clone_node(v.node, {})
            target.prepend_node(c)
            for i, x in enumerate(n.inputs):
                if x is v:
                    n.replace_input(i, c.output)
        for b in n.blocks:
            _lift_constants(b, target)


def _fold_size_if_not_equal(block: Block) -> None:
    """PyTorch's foldSizeIfNotEqual: a `_size_if_not_equal` of two `aten::size`s that the
    backward uses directly becomes a constant (the first size, or None when equal) where the
    tensors' types give both sizes, since df's inputs would lose that knowledge."""
    for n in list(block.nodes()) + [block.return_node]:
        for v in list(dict.fromkeys(n.inputs)):
            src = v.node
            if src.kind != "aten::_size_if_not_equal" or len(src.inputs) != 2 or \
                    any(x.node.kind != "aten::size" or len(x.node.inputs) != 1 for x in src.inputs):
                continue
            sizes = [_complete_sizes(x.node.inputs[0]) for x in src.inputs]
            if any(s is None for s in sizes):
                continue
            n.graph.set_insert_point(n)
            c = n.graph.insert_constant(list(sizes[0]) if sizes[0] != sizes[1] else None)
            for i, x in enumerate(n.inputs):
                if x is v:
                    n.replace_input(i, c)
        for b in n.blocks:
            _fold_size_if_not_equal(b)


def _cse_key(n: Node):
    if n.blocks or not n.outputs or n.kind.startswith("prim::") and n.kind not in ("prim::Constant",):
        return None
    try:
        attrs = tuple(sorted((k, repr(v)) for k, v in n.attrs.items()))
    except Exception:  # noqa: BLE001
        return None
    return (n.kind, tuple(id(v) for v in n.inputs), attrs, tuple(str(o.type) for o in n.outputs))


def eliminate_common_subexpression(block: Block) -> None:
    """A small pure-node CSE on one block (PyTorch runs EliminateCommonSubexpression on f)."""
    from irjit.ops.registry import overloads
    seen: dict = {}
    for n in list(block.nodes()):
        if any(e.nondeterministic or e.schema.is_inplace for e in overloads(n.kind)):
            continue
        key = _cse_key(n)
        if key is None:
            continue
        prev = seen.get(key)
        if prev is None:
            seen[key] = n
            continue
        for a, b in zip(n.outputs, prev.outputs):
            a.replace_all_uses_with(b)
        n.destroy()


def _reverse_captures(f: Graph) -> list[Value]:
    """Values of f used by the backward, in topological order."""
    out, seen = [], set()
    for v in list(f.inputs) + [o for n in f.nodes() for o in n.outputs]:
        if v not in seen and any(u.user.owning_block is not f.block for u in v.uses):
            seen.add(v)
            out.append(v)
    return out


def _deduplicate_size_captures(f: Graph, rev: _Reverse) -> None:
    captures = _reverse_captures(f)
    capture_set = set(captures)
    for c in captures:
        n = c.node
        if n.kind != "aten::size" or len(n.inputs) != 1:
            continue
        if all(u.user.owning_block is not f.block for u in c.uses) and n.inputs[0] in capture_set:
            new = f.create("aten::size", [n.inputs[0]], output_types=[c.type])
            rev.block.prepend_node(new)
            c.replace_all_uses_with(new.output)
            n.destroy()


def _pure(n: Node) -> bool:
    from irjit.ops.registry import overloads
    return not any(e.schema.is_inplace for e in overloads(n.kind)) and not facts.has_side_effects(n.kind)


# ---- lambda lifting

def _lambda_lift(grad: Gradient, rev: _Reverse) -> None:
    f, block = grad.f, rev.block
    captures = _reverse_captures(f)
    grad.f_real_outputs = len(f.outputs)
    out_idx: dict[Value, int] = {}
    for i, v in enumerate(f.outputs):
        out_idx.setdefault(v, i)
    in_idx = {v: i for i, v in enumerate(f.inputs)}
    for v in captures:
        if v in out_idx:
            grad.df_input_captured_outputs.append(out_idx[v])
        elif v in in_idx:
            grad.df_input_captured_inputs.append(in_idx[v])
        else:
            f.register_output(v)
            grad.df_input_captured_outputs.append(len(f.outputs) - 1)
    for i in range(grad.f_real_outputs, len(f.outputs)):
        tmp = f.outputs[i]
        prev = rev.grad_map.get(tmp)
        if isinstance(prev, list):
            continue  # a captured Tensor[]: temporaries' vjps are undefined anyway
        if prev is None or (prev.node.kind != "prim::Param" and not prev.node.is_inserted()):
            continue
        vjp_in = block.add_input(tmp.type)
        add = f.create("prim::AutogradAdd", [vjp_in, vjp_in], output_types=[TENSOR])
        if prev.node.kind == "prim::Param":
            block.prepend_node(add)
        else:
            add.insert_after(prev.node)
        prev.replace_all_uses_with(add.output)
        add.replace_input(1, prev)
        grad.df_input_vjps.append(i)
    formal: dict[Value, Value] = {}
    df = Graph()
    vm: dict[Value, Value] = {}
    for v in block.inputs:
        vm[v] = df.add_input(type=v.type)
    for v in [f.inputs[i] for i in grad.df_input_captured_inputs] + \
             [f.outputs[i] for i in grad.df_input_captured_outputs]:
        nv = df.add_input(type=v.type)
        if v.debug_name:
            nv.set_debug_name(v.debug_name)
        formal.setdefault(v, nv)
    vm.update(formal)
    for n in block.nodes():
        df.block.append_node(df.clone_node(n, vm))
    for v in block.outputs:
        df.register_output(vm.get(v, v))
    rev.node.destroy()
    grad.df = df


def _pack_return_values(g: Graph) -> None:
    outs = list(g.outputs)
    g.set_insert_point(g.return_node)
    t = g.insert("prim::TupleConstruct", outs, output_types=[TupleType(tuple(o.type for o in outs))])
    while g.outputs:
        g.erase_output(0)
    g.register_output(t.output)


def update_requires_grad(block: Block, value: bool) -> None:
    """PyTorch's UpdateDifferentiableGraphRequiresGrad: retype every tensor used by a node."""
    for n in block.nodes():
        for v in n.inputs:
            if isinstance(v.type, TensorType):
                v.type = v.type.with_(requires_grad=value)
        for b in n.blocks:
            update_requires_grad(b, value)


def differentiate(graph: Graph, infer_shapes: bool = True) -> Gradient:
    """Split `graph` (mutated: it becomes `f`) into forward `f` and backward `df`.

    Formulas that need static shapes (views, reductions with dims, cat, ...) read them from
    the values' types; with `infer_shapes`, shapes missing there are propagated from the
    graph inputs' complete types. `Tensor[]` values are differentiated element-wise when the
    graph builds them with `prim::ListConstruct` or takes them apart with `prim::ListUnpack`
    (or an op's static shapes give their length)."""
    grad = Gradient(f=graph)
    rev = _add_reverse_inline(grad, infer_shapes)
    _lift_constants(rev.block, rev.block)
    _fold_size_if_not_equal(rev.block)
    from irjit.compiler.passes.eliminate_common_subexpression import run as _cse
    _cse(graph)
    _deduplicate_size_captures(graph, rev)
    # (imported here: the passes package imports every pass, and some of them import this module)
    from irjit.compiler.passes.eliminate_dead_code import (eliminate_dead_code,
                                                         eliminate_dead_code_in_block)
    # vjps were emitted for every input of a node that needs one; drop the unneeded (PyTorch:
    # EliminateDeadCode(reverse_block, ALLOW_DELETING_NODES_WITH_SIDE_EFFECTS))
    # (a list a formula fills in a loop, meshgrid's, is kept as torch 2.13 keeps it)
    eliminate_dead_code_in_block(rev.block, allow_deleting_side_effects=True,
                                 alias_analysis=False, keep_mutations=True)
    # PyTorch's EliminateDeadCode(f->block()): without alias information, every op that
    # writes (the split sizes symbolic_script's cat fills in a loop) is kept
    eliminate_dead_code(graph, alias_analysis=False)
    _lambda_lift(grad, rev)
    _pack_return_values(grad.df)
    update_requires_grad(graph.block, False)
    return grad
