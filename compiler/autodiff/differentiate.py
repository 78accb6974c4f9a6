"""PyTorch's `differentiate(graph) -> Gradient` (runtime/autodiff.cpp), with derivatives taken
from the op registry's formulas through `SymbolicEmitter`."""

from __future__ import annotations

from compiler.ir.constants import constant_value
from compiler.ir.graph import Graph
from compiler.ir.node import Block, Node, Value
from compiler.ir.types import ClassType, NONE, TENSOR, ListType, TensorType, TupleType, Type

from .differentiable_ops import ALWAYS, in_symbolic_script
from .gradient import Gradient
from .symbolic_emitter import NotSymbolic, SymbolicEmitter, python_value, resolve


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
    if kind in ALWAYS:
        return True
    if kind == "prim::GradOf":
        return all(is_differentiable(n) for n in node.blocks[0].nodes())
    if not kind.startswith("aten::") or node.blocks:
        return False
    if kind == "aten::dropout":
        train = node.inputs[2] if len(node.inputs) > 2 else None
        if train is None or train.node.kind != "prim::Constant" or not constant_value(train.node):
            return False
    try:
        entry = resolve(kind, [python_value(v) for v in node.inputs])
    except Exception:  # noqa: BLE001 - an unregistered op or overload is simply not differentiable
        return False
    if not in_symbolic_script(kind, entry.schema.overload) or entry.derivative is None:
        return False
    if any(a.is_tensor_list for a in entry.schema.arguments):
        return False  # list inputs would need ListConstruct/ListUnpack gradients
    return _dry_run(node)


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
        differentiate(g)
    except (NotSymbolic, DifferentiationError, TypeError, ValueError, KeyError, IndexError,
            AttributeError, AssertionError, NotImplementedError):
        return False
    except Exception as e:  # noqa: BLE001 - registry resolution errors
        return type(e).__name__ == "NotSymbolic"
    return True


# ---- the reverse program

class _Reverse:
    def __init__(self, grad: Gradient):
        self.grad = grad
        self.f = grad.f
        self.node = self.f.create("prim::Reverse", num_outputs=0)  # never inserted, as in PyTorch
        self.block: Block = self.node.add_block()
        self.grad_map: dict[Value, Value] = {}
        self.sizes: dict[Value, Value] = {}

    def insert_here(self) -> None:
        self.f.set_insert_point(self.block)

    def get_grad(self, v: Value) -> Value:
        g = self.grad_map.get(v)
        if g is None:
            self.insert_here()
            g = self.grad_map[v] = self.f.insert("prim::AutogradZero", [], output_types=[TENSOR]).output
        return g

    def set_grad(self, x: Value, dx: Value) -> None:
        prev = self.grad_map.get(x)
        if prev is None:
            self.grad_map[x] = dx
        else:
            self.insert_here()
            self.grad_map[x] = self.f.insert("prim::AutogradAdd", [prev, dx], output_types=[TENSOR]).output

    def linear_gradient(self, node: Node, grads: list[Value]) -> list:
        """The node's input gradients, computed inside a `prim::GradOf` block."""
        known = [None if g.node.kind == "prim::AutogradZero" else g for g in grads]
        if all(g is None for g in known):
            return [None] * len(node.inputs)  # statically zero: PyTorch leaves this to specializeAutogradZero
        self.insert_here()
        gof = self.f.insert("prim::GradOf", grads, num_outputs=0, name=("s", node.kind))
        body = gof.add_block()
        self.f.set_insert_point(body)
        results = self.gradient(node, known)
        outs = []
        for r in results:
            if not isinstance(r, Value) or (r.node.kind == "prim::Constant" and r.type == NONE):
                outs.append(None)
                continue
            body.register_output(r)
            outs.append(gof.add_output(r.type))
        self.insert_here()
        return outs

    def gradient(self, node: Node, grads: list) -> list:
        kind = node.kind
        if kind in ("prim::Constant", "prim::AutogradZero"):
            return []
        if kind == "prim::AutogradAdd":
            return [grads[0], grads[0]]
        e = SymbolicEmitter(self.f, node, self.f.block, self.sizes)
        if kind == "prim::ConstantChunk":
            parts = [g if g is not None else e.zeros_like(o) for g, o in zip(grads, node.outputs)]
            lst = self.f.insert("prim::ListConstruct", parts, output_types=[ListType(TENSOR)]).output
            return [e.op("aten::cat", lst, node.attr("dim"))]
        inputs = [python_value(v) for v in node.inputs]
        entry = resolve(kind, inputs)
        if entry.derivative is None:
            raise DifferentiationError(f"differentiation of {kind} is not supported")
        res = entry.derivative(e, list(grads), inputs, list(node.outputs))
        res = list(res) + [None] * (len(node.inputs) - len(res))
        for r in res:
            if isinstance(r, (list, tuple)):
                raise NotSymbolic(f"{kind}: gradients of list inputs are not supported")
        return [r if isinstance(r, Value) else None for r in res[:len(node.inputs)]]


def _add_reverse_inline(grad: Gradient) -> _Reverse:
    rev = _Reverse(grad)
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
        grad_inputs = rev.linear_gradient(node, [rev.get_grad(o) for o in node.outputs])
        for inp, g in zip(node.inputs, grad_inputs):
            if g is not None and requires_grad(inp):
                rev.set_grad(inp, g)
    for i, inp in enumerate(f.inputs):
        if requires_grad(inp) and inp in rev.grad_map:
            rev.block.register_output(rev.get_grad(inp))
            grad.df_output_vjps.append(i)
    return rev


# ---- clean-ups between building the reverse program and lifting it (PyTorch's Optimize)

def _in_block(node: Node, container: Block) -> bool:
    b = node.owning_block
    while b is not None:
        if b is container:
            return True
        b = b.owning_node.owning_block if b.owning_node is not None else None
    return False


def _lift_constants(block: Block, target: Block) -> None:
    """Copy the forward constants the backward uses to the top of the backward block."""
    for n in list(block.nodes()) + [block.return_node]:
        for i, v in enumerate(list(n.inputs)):
            if v.node.kind == "prim::Constant" and not _in_block(v.node, target):
                c = target.graph.clone_node(v.node, {})
                target.prepend_node(c)
                n.replace_input(i, c.output)
        for b in n.blocks:
            _lift_constants(b, target)


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
    from runtime.ops.registry import overloads
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


def eliminate_dead_code(block: Block, keep=lambda n: False) -> None:
    """Remove nodes whose outputs are unused (recursively, last first)."""
    for n in list(block.reversed_nodes()):
        for b in n.blocks:
            eliminate_dead_code(b, keep)
        if not keep(n) and all(not o.uses for o in n.outputs):
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
    from runtime.ops.registry import overloads
    return not any(e.schema.is_inplace for e in overloads(n.kind)) and n.kind not in (
        "prim::Print", "prim::RaiseException", "prim::SetAttr", "prim::CallMethod", "prim::CallFunction")


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


def differentiate(graph: Graph) -> Gradient:
    """Split `graph` (mutated: it becomes `f`) into forward `f` and backward `df`."""
    grad = Gradient(f=graph)
    rev = _add_reverse_inline(grad)
    _lift_constants(rev.block, rev.block)
    eliminate_common_subexpression(graph.block)
    _deduplicate_size_captures(graph, rev)
    eliminate_dead_code(rev.block)
    eliminate_dead_code(graph.block, keep=lambda n: not _pure(n))
    _lambda_lift(grad, rev)
    _pack_return_values(grad.df)
    update_requires_grad(graph.block, False)
    return grad
