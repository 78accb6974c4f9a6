"""Turn in-place activations into their functional form, mirroring PyTorch's
InplaceToFunctionalActivation (remove_mutation.cpp with an activation filter): `aten::relu_(%x)`
becomes `aten::relu(%x)` when `%x` is a fresh tensor nothing else aliases."""

from __future__ import annotations

from irjit.compiler.ir import Graph
from irjit.ops import facts

from .registry import register_pass
from .remove_mutation import remove_tensor_mutation


def _is_inplace_activation(node) -> bool:
    return node.kind.endswith("_") and facts.has_tag(node.kind[:-1], "activation")


@register_pass("inplace_to_functional_activation")
def run(graph: Graph) -> bool:
    """PyTorch's InplaceToFunctionalActivation: `relu_`, `sigmoid_`, ... become functional."""
    return remove_tensor_mutation(graph, _is_inplace_activation)
