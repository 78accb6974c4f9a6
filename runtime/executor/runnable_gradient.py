"""The Gradient a DifferentiableGraphOp runs: PyTorch's `f` and `df` (which the node keeps,
and which print as PyTorch's) made cheaper to run without changing any value the tape sees:
`df` takes no vjps of temporaries (always undefined), and views of `f`'s inputs that `f`
would hand `df` are recomputed in `df` (a view costs nothing to recompute, and an output that
is a view of an input cannot be computed by a native unit)."""

from __future__ import annotations

from dataclasses import replace

from irjit.compiler.autodiff.gradient import Gradient
from irjit.compiler.autodiff.rematerialize import rematerializable, rematerialize
from irjit.compiler.codegen.lower import entry_of
from irjit.compiler.ir import Graph, Node, Value
from irjit.compiler.passes import get_pass


def drop_temporary_vjps(grad: Gradient) -> None:
    """The vjps `df` takes for f's captured temporaries are always undefined (the tape sees
    only the real outputs, as PyTorch's DifferentiableGraphBackward): they become
    `prim::AutogradZero`, which the backward passes and native specialization fold away."""
    df = grad.df
    for q in reversed(range(len(grad.df_input_vjps))):
        if grad.df_input_vjps[q] < grad.f_real_outputs:
            continue
        zero = df.block.prepend_node(df.create("prim::AutogradZero"))
        df.inputs[q].replace_all_uses_with(zero.output)
        df.erase_input(q)
        del grad.df_input_vjps[q]


def _is_view(node: Node) -> bool:
    if node.kind.startswith("prim::") or node.blocks:
        return False
    entry = entry_of(node)
    return entry is not None and entry.schema.is_view and not entry.schema.is_inplace


def _view_of_inputs(v: Value, f: Graph) -> bool:
    """`v` is one of f's inputs, a constant, or a view (of a view...) of those."""
    return v in f.inputs or v.node.kind == "prim::Constant" or \
        _is_view(v.node) and all(_view_of_inputs(u, f) for u in v.node.inputs)


class _Recompute:
    """Clones f's views of its inputs into df (before `anchor`), capturing the inputs."""

    def __init__(self, grad: Gradient):
        self.grad, self.f, self.df = grad, grad.f, grad.df
        self.anchor = grad.df.block.first_node
        self.done: dict[Value, Value] = {}

    def __call__(self, v: Value) -> Value:
        found = self.done.get(v)
        if found is not None:
            return found
        grad, df = self.grad, self.df
        n_vjps = len(grad.df_input_vjps)
        if v in self.f.inputs:
            i = self.f.inputs.index(v)
            if i not in grad.df_input_captured_inputs:
                grad.df_input_captured_inputs.append(i)
                df.insert_input(n_vjps + len(grad.df_input_captured_inputs) - 1, type=v.type)
            out = df.inputs[n_vjps + grad.df_input_captured_inputs.index(i)]
        else:
            operands = {u: self(u) for u in v.node.inputs}
            clone = df.clone_node(v.node, lambda u: operands[u])
            out = clone.insert_before(self.anchor).outputs[v.offset]
        self.done[v] = out
        return out


def recompute_captured_views(grad: Gradient) -> None:
    """Captured temporaries of `f` that are views of f's inputs (the `t(w)` a matmul formula
    needs, the heads of an attention layer) are recomputed in `df` from the captured inputs
    instead: a view costs nothing to recompute, and `f` then outputs only computed tensors,
    so its views fuse into its units rather than run interpreted as outputs of their own."""
    f, df = grad.f, grad.df
    recompute = _Recompute(grad)
    for p in reversed(range(len(grad.df_input_captured_outputs))):
        j = grad.df_input_captured_outputs[p]
        v = f.outputs[j]
        if j < grad.f_real_outputs or j in grad.df_input_vjps or v in f.inputs or \
                grad.df_input_captured_outputs.count(j) > 1 or not _view_of_inputs(v, f):
            continue
        recomputed = recompute(v)
        position = len(grad.df_input_vjps) + len(grad.df_input_captured_inputs) + p
        df.inputs[position].replace_all_uses_with(recomputed)
        df.erase_input(position)
        del grad.df_input_captured_outputs[p]
        f.erase_output(j)
        grad.df_input_captured_outputs = [k - (k > j) for k in grad.df_input_captured_outputs]
        grad.df_input_vjps = [k - (k > j) for k in grad.df_input_vjps]
    get_pass("eliminate_dead_code").run(f)


def runnable_gradient(grad: Gradient) -> Gradient:
    """A copy of `grad` to run: no vjps of temporaries, captured views of inputs recomputed
    in `df`, and so are cheap pointwise temporaries (`rematerialize`; the node's own graphs
    stay as they are); `grad` itself when none of these applies."""
    f = grad.f
    if all(i < grad.f_real_outputs for i in grad.df_input_vjps) and not any(
            f.outputs[j] not in f.inputs and _view_of_inputs(f.outputs[j], f)
            for j in grad.df_input_captured_outputs) and not rematerializable(grad):
        return grad
    grad = replace(grad, f=grad.f.copy(), df=grad.df.copy(),
                   df_input_vjps=list(grad.df_input_vjps),
                   df_input_captured_inputs=list(grad.df_input_captured_inputs),
                   df_input_captured_outputs=list(grad.df_input_captured_outputs),
                   df_output_vjps=list(grad.df_output_vjps))
    drop_temporary_vjps(grad)
    recompute_captured_views(grad)
    rematerialize(grad)
    return grad
