"""The result of `differentiate`: PyTorch's `Gradient` (autodiff.h, Note [Gradient graphs])."""

from __future__ import annotations

from dataclasses import dataclass, field

from irjit.compiler.ir.graph import Graph


@dataclass
class Gradient:
    """`f` computes the real outputs then the captured temporaries; `df` takes the vjps of
    `f`'s outputs listed in `df_input_vjps`, then `f`'s inputs listed in
    `df_input_captured_inputs`, then `f`'s outputs listed in `df_input_captured_outputs`, and
    returns one tuple with the gradients of the inputs listed in `df_output_vjps`."""

    f: Graph
    df: Graph = None
    f_real_outputs: int = 0
    df_input_vjps: list[int] = field(default_factory=list)
    df_input_captured_inputs: list[int] = field(default_factory=list)
    df_input_captured_outputs: list[int] = field(default_factory=list)
    df_output_vjps: list[int] = field(default_factory=list)

    def fields(self) -> dict:
        """The index fields, as in the fixtures' `gradient.json`."""
        return {"df_input_vjps": list(self.df_input_vjps),
                "df_input_captured_inputs": list(self.df_input_captured_inputs),
                "df_input_captured_outputs": list(self.df_input_captured_outputs),
                "df_output_vjps": list(self.df_output_vjps),
                "f_real_outputs": self.f_real_outputs}

    def __str__(self) -> str:
        lines = [f"f = {self.f}", f"df = {self.df}"]
        lines += [f"{k} = {v}" for k, v in self.fields().items()]
        return "\n".join(lines) + "\n"


# The attributes PyTorch's packGradient puts on a DifferentiableGraph node (the printer shows
# none of them but the Subgraph), so a Gradient travels with the node: `Graph.copy` and node
# cloning copy attributes, graphs included.
_INDEX_FIELDS = ("df_input_vjps", "df_input_captured_inputs", "df_input_captured_outputs",
                 "df_output_vjps")


def pack_gradient(node, grad: Gradient) -> None:
    """Store `grad` on its `prim::DifferentiableGraph` node: `f` becomes the Subgraph, `df`
    the ReverseSubgraph, and the index fields integer attributes."""
    node.set_attr("Subgraph", "g", grad.f)
    node.set_attr("ReverseSubgraph", "g", grad.df)
    node.set_attr("f_real_outputs", "i", grad.f_real_outputs)
    for name in _INDEX_FIELDS:
        node.set_attr(name, "is", tuple(getattr(grad, name)))


def unpack_gradient(node) -> Gradient | None:
    """The Gradient `pack_gradient` stored on `node` (its graphs are the node's own), or None
    when the node was never differentiated."""
    if not node.has_attr("ReverseSubgraph"):
        return None
    return Gradient(node.attr("Subgraph"), node.attr("ReverseSubgraph"),
                    node.attr("f_real_outputs"),
                    *(list(node.attr(name)) for name in _INDEX_FIELDS))
