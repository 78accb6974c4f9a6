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
