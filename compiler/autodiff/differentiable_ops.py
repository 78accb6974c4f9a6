"""Which nodes PyTorch's autodiff can differentiate symbolically (`isDifferentiable`).

The table below is the set of schemas that have a TorchScript formula in PyTorch's
`symbolic_script.cpp` (plus the few special cases of `autodiff.cpp`). It is deliberately
narrower than the registry's derivative formulas: the registry also differentiates ops such as
`aten::conv2d` or `aten::_convolution` for the interpreter's tape, but PyTorch's graph executor
keeps those outside DifferentiableGraphs (they run under eager autograd), and we mirror that
so that subgraph slicing matches PyTorch. A node is differentiable only when it is in this
table AND our registry formula can be emitted symbolically for it (see `is_differentiable`).
"""

from __future__ import annotations

# kind -> overload names (registry's `Schema.overload`, "" for the default); None = all overloads.
SYMBOLIC_SCRIPT_OPS: dict[str, frozenset | None] = {
    "aten::mean": None, "aten::logsumexp": None, "aten::std": None, "aten::var": None,
    "aten::tanh": None, "aten::mm": None, "aten::permute": None, "aten::squeeze": frozenset({"", "dim"}),
    "aten::bmm": None, "aten::matmul": None, "aten::linear": None, "aten::addcmul": None,
    "aten::_dim_arange": None, "aten::contiguous": None, "aten::dot": None, "aten::erf": None,
    "aten::expand": None, "aten::expand_as": None, "aten::full_like": None, "aten::lerp": None,
    "aten::reshape": None, "aten::split": None, "aten::split_with_sizes": None, "aten::stack": None,
    "aten::unbind": None, "aten::cat": None, "aten::index": None, "aten::meshgrid": None,
    "aten::mv": None, "aten::nonzero": None, "aten::ones_like": None, "aten::pow": None,
    "aten::rsub": None, "aten::sqrt": None, "aten::t": None, "aten::to": None,
    "aten::transpose": frozenset({"int"}), "aten::view": frozenset({""}),
    "aten::mul": frozenset({"Tensor", "Scalar"}), "aten::div": None,
    "aten::max": frozenset({"other"}), "aten::min": frozenset({"other"}),
    "aten::sigmoid": None, "aten::relu": None, "aten::relu6": None, "aten::leaky_relu": None,
    "aten::gelu": None, "aten::hardswish": None, "aten::hardsigmoid": None, "aten::erfc": None,
    "aten::exp": None, "aten::neg": None, "aten::where": frozenset({"self"}), "aten::type_as": None,
    "aten::unsqueeze": None, "aten::abs": None, "aten::acos": None, "aten::asin": None,
    "aten::atan": None, "aten::ceil": None, "aten::cos": None, "aten::cosh": None,
    "aten::expm1": None, "aten::floor": None, "aten::frac": None, "aten::log": None,
    "aten::log10": None, "aten::log1p": None, "aten::log2": None, "aten::rand_like": None,
    "aten::reciprocal": None, "aten::round": None, "aten::rsqrt": None, "aten::sin": None,
    "aten::sinh": None, "aten::tan": None, "aten::trunc": None, "aten::_grad_sum_to_size": None,
    "aten::batch_norm": None, "aten::embedding": None, "aten::log_softmax": None,
    "aten::nll_loss": None, "aten::softmax": None, "aten::adaptive_avg_pool1d": None,
    "aten::adaptive_avg_pool2d": None, "aten::adaptive_avg_pool3d": None, "aten::avg_pool2d": None,
    "aten::max_pool2d": None, "aten::max_pool2d_with_indices": None,
    "aten::add": frozenset({"Tensor", "Scalar"}), "aten::sub": frozenset({"Tensor", "Scalar"}),
    "aten::threshold": None, "aten::fmod": frozenset({"Scalar"}), "aten::remainder": frozenset({"Scalar"}),
    "aten::addmm": None, "aten::lt": frozenset({"Scalar"}), "aten::le": frozenset({"Scalar"}),
    "aten::gt": frozenset({"Scalar"}), "aten::ge": frozenset({"Scalar"}), "aten::eq": frozenset({"Scalar"}),
    "aten::ne": frozenset({"Scalar"}), "aten::hardshrink": None, "aten::hardtanh": None,
    "aten::clamp": None,
    # autodiff.cpp's hand-written cases
    "aten::_slow_conv2d_forward": None, "aten::native_batch_norm": None,
    # `aten::dropout` only when train is a constant True (checked in is_differentiable)
    "aten::dropout": None,
}

# Nodes that PyTorch always treats as differentiable (autodiff.cpp).
ALWAYS = frozenset({"prim::Constant", "prim::AutogradZero", "prim::AutogradAdd",
                    "prim::ConstantChunk"})

# View ops are kept out of DifferentiableGraphs by create_autodiff_subgraphs (isViewOp).
VIEW_OPS = frozenset({"aten::view", "aten::view_as", "aten::reshape", "aten::reshape_as",
                      "aten::transpose", "aten::expand", "aten::expand_as"})


def in_symbolic_script(kind: str, overload: str) -> bool:
    """Whether PyTorch has an autodiff formula for this overload."""
    if kind not in SYMBOLIC_SCRIPT_OPS:
        return False
    allowed = SYMBOLIC_SCRIPT_OPS[kind]
    return allowed is None or overload in allowed
